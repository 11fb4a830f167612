/* The jail-breakout battery (docs/security.md, rows J-B*): vmhost's jail
 * starts an attacker (jail_attacker.py under /usr/bin/python3) in place of
 * QEMU, with QEMU's uid, namespaces, root, system call filter, cgroup and
 * limits. It is what a guest that took QEMU over would hold. Each attempt
 * prints a line; here on the host: every line says stopped, none of the
 * secrets placed for it appears in what it printed, no file appeared
 * outside its root, nothing connected to the listeners placed for it, the
 * "other QEMU" (a process of the next jail uid) and this process (standing
 * for vmhost) live on, the host's mounts and core_pattern are unchanged, and
 * nothing of the jail is left after it. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "escape_jail.h"
#include "fsutil.h"
#include "vm_socket.h"

#define BREAKOUT_UID_BASE 900210000u
#define BREAKOUT_UID_COUNT 4u
#define BREAKOUT_PYTHON "/usr/bin/python3"
#define BREAKOUT_MIN_ATTEMPTS 100
#define BREAKOUT_TIMEOUT_MS 120000
#define BREAKOUT_SECRET "airlock-escape-secret-7f3c"
#define BREAKOUT_PIDS_MAX 128 /* jail.c's pids limit */

/* What the battery is aimed at, all made by the test. */
struct targets {
    struct escape_jail_env env;
    int tcp_fd, abstract_fd, other_qmp_fd;
    int tcp_port;
    char abstract[64];
    int shm_key, shm_id;
    pid_t other_qemu;
    char out[PATH_MAX];
};

static int listen_tcp(int *port)
{
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof(sa);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(listen(fd, 8), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
    *port = ntohs(sa.sin_port);
    return fd;
}

/* A unix listener: at a path, or abstract when abstract is set. */
static int listen_unix(const char *name, bool abstract)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    snprintf(sa.sun_path + abstract, sizeof(sa.sun_path) - abstract, "%s", name);
    socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + abstract + strlen(name));
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, len), 0);
    assert_int_equal(listen(fd, 8), 0);
    return fd;
}

/* Nothing came: accept finds no connection waiting. */
static void assert_never_connected(int fd, const char *what)
{
    int c = accept(fd, NULL, NULL);
    if (c >= 0)
        fail_msg("the jail connected to %s", what);
    assert_int_equal(errno, EAGAIN);
}

static void write_secret(const char *path, uid_t owner)
{
    char err[256];
    assert_int_equal(fs_write_file_atomic(path, BREAKOUT_SECRET "\n", strlen(BREAKOUT_SECRET) + 1,
                                          0600, err, sizeof(err)),
                     0);
    assert_int_equal(chown(path, owner, owner), 0);
}

/* Another sandbox's QEMU: a process of the next jail uid. */
static pid_t start_other_qemu(void)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        uid_t uid = BREAKOUT_UID_BASE + 1;
        if (setresgid(uid, uid, uid) < 0 || setresuid(uid, uid, uid) < 0)
            _exit(1);
        for (;;)
            pause();
    }
    return pid;
}

static bool alive(pid_t pid)
{
    int status;
    return waitpid(pid, &status, WNOHANG) == 0;
}

static void copy_attacker(const struct escape_jail_env *e)
{
    char dst[PATH_MAX], err[256];
    fs_path(dst, sizeof(dst), "%s/attack.py", e->dir);
    assert_int_equal(fs_copy_file(AIRLOCK_ESCAPE_DIR "/jail_attacker.py", dst, 0644, err,
                                  sizeof(err)),
                     0);
}

static int setup(void **state)
{
    struct targets *t = calloc(1, sizeof(*t));
    assert_non_null(t);
    assert_int_equal(escape_jail_env_open(&t->env, BREAKOUT_UID_BASE, BREAKOUT_UID_COUNT, NULL), 0);
    char path[PATH_MAX], err[256];
    fs_path(path, sizeof(path), "%s/data/sandboxes/other", t->env.tmp);
    assert_int_equal(fs_mkdir_p(path, 0700, err, sizeof(err)), 0);
    fs_path(path, sizeof(path), "%s/data/token", t->env.tmp);
    write_secret(path, 0);
    fs_path(path, sizeof(path), "%s/data/sandboxes/other/disk", t->env.tmp);
    write_secret(path, BREAKOUT_UID_BASE + 1);
    t->tcp_fd = listen_tcp(&t->tcp_port);
    snprintf(t->abstract, sizeof(t->abstract), "airlock-escape-%d", (int)getpid());
    t->abstract_fd = listen_unix(t->abstract, true);
    fs_path(path, sizeof(path), "%s/data/sandboxes/other/qmp.sock", t->env.tmp);
    t->other_qmp_fd = listen_unix(path, false);
    t->shm_key = 0x41690000 | (getpid() & 0xffff);
    t->shm_id = shmget(t->shm_key, 4096, IPC_CREAT | IPC_EXCL | 0666);
    assert_true(t->shm_id >= 0);
    t->other_qemu = start_other_qemu();
    fs_path(t->out, sizeof(t->out), "%s/attacker.out", t->env.tmp);
    copy_attacker(&t->env);
    *state = t;
    return 0;
}

static int teardown(void **state)
{
    struct targets *t = *state;
    if (t->other_qemu > 0) {
        kill(t->other_qemu, SIGKILL);
        waitpid(t->other_qemu, NULL, 0);
    }
    shmctl(t->shm_id, IPC_RMID, NULL);
    close(t->tcp_fd);
    close(t->abstract_fd);
    close(t->other_qmp_fd);
    escape_jail_env_close(&t->env, false);
    free(t);
    return 0;
}

/* The attacker run in a jail, what it printed in out (NUL-terminated). */
static struct escape_run run_attacker(struct targets *t, char *const argv[], char **out)
{
    int fd = open(t->out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    struct jail_spec spec = escape_jail_spec(&t->env, BREAKOUT_PYTHON);
    struct escape_run run;
    char err[512] = "";
    int rc = escape_jail_run(&t->env, &spec, argv, fd, BREAKOUT_TIMEOUT_MS, &run, err, sizeof(err));
    close(fd);
    if (rc < 0)
        fail_msg("jail: %s", err);
    assert_int_equal(fs_read_file(t->out, 1 << 20, out, NULL, err, sizeof(err)), 0);
    if (run.timed_out)
        fail_msg("the attacker still ran after %d ms (%s in %s):\n%s", BREAKOUT_TIMEOUT_MS,
                 run.comm, run.wchan, *out);
    return run;
}

static size_t count_lines(const char *text, const char *prefix)
{
    size_t n = 0;
    for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
        n += strncmp(p, prefix, strlen(prefix)) == 0;
    return n;
}

/* The jail's mounts live in its own mount namespace: none of them, and
 * nothing the attacker tried, shows in the host's under the test's
 * directory (other tests on the machine mount elsewhere meanwhile). */
static void assert_no_mount_under(const char *dir)
{
    char *text = NULL, err[128];
    assert_int_equal(fs_read_file("/proc/self/mountinfo", 1 << 22, &text, NULL, err, sizeof(err)),
                     0);
    if (strstr(text, dir))
        fail_msg("a mount under %s is in the host's namespace:\n%s", dir, text);
    free(text);
}

static char *core_pattern(void)
{
    char *text = NULL, err[128];
    assert_int_equal(fs_read_file("/proc/sys/kernel/core_pattern", 4096, &text, NULL, err,
                                  sizeof(err)),
                     0);
    return text;
}

/* No file but the test's own in its directory: none the attacker wrote. */
static void assert_nothing_written_outside(const struct targets *t)
{
    static const char *const ours[] = { ".", "..", "vm", "root", "uids", "data", "jail.log",
                                        "attacker.out" };
    DIR *d = opendir(t->env.tmp);
    assert_non_null(d);
    struct dirent *de;
    while ((de = readdir(d))) {
        bool known = false;
        for (size_t i = 0; i < sizeof(ours) / sizeof(ours[0]); i++)
            known = known || strcmp(de->d_name, ours[i]) == 0;
        if (!known)
            fail_msg("the jail wrote %s/%s", t->env.tmp, de->d_name);
    }
    closedir(d);
}

/* No process of the battery's jail uids but the other QEMU. */
static void assert_no_jail_process_left(const struct targets *t)
{
    DIR *d = opendir("/proc");
    assert_non_null(d);
    struct dirent *de;
    while ((de = readdir(d))) {
        char path[300];
        struct stat st;
        snprintf(path, sizeof(path), "/proc/%s", de->d_name);
        if (atoi(de->d_name) <= 0 || atoi(de->d_name) == t->other_qemu || stat(path, &st) < 0)
            continue;
        if (st.st_uid >= BREAKOUT_UID_BASE && st.st_uid < BREAKOUT_UID_BASE + BREAKOUT_UID_COUNT)
            fail_msg("process %s of jail uid %u is left", de->d_name, (unsigned)st.st_uid);
    }
    closedir(d);
}

/* The attacker left /vm/qmp.sock as a link to the other sandbox's QMP
 * socket: vmhost's connect refuses it, and nothing reaches the other. */
static void assert_vmhost_refuses_planted_link(const struct targets *t)
{
    char path[PATH_MAX], err[512];
    fs_path(path, sizeof(path), "%s/qmp.sock", t->env.dir);
    struct stat st;
    assert_int_equal(lstat(path, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(vm_socket_connect(path, err, sizeof(err)), -1);
    assert_int_equal(errno, ELOOP);
    assert_never_connected(t->other_qmp_fd, "the other sandbox's QMP socket");
}

static void battery_is_stopped_everywhere(void **state)
{
    struct targets *t = *state;
    char *pattern = core_pattern();
    char host_pid[16], port[16], key[16];
    snprintf(host_pid, sizeof(host_pid), "%d", (int)getpid());
    snprintf(port, sizeof(port), "%d", t->tcp_port);
    snprintf(key, sizeof(key), "%d", t->shm_key);
    char *const argv[] = { BREAKOUT_PYTHON, "/vm/attack.py", "battery", t->env.tmp,
                           BREAKOUT_SECRET, host_pid, port, t->abstract, key, NULL };
    char *out = NULL;
    struct escape_run run = run_attacker(t, argv, &out);
    fputs(out, stderr);

    size_t stopped = count_lines(out, "ok "), escaped = count_lines(out, "ESCAPED ");
    if (run.exit_code != 0 || escaped != 0)
        fail_msg("the attacker ended %d (signal %d) with %zu escapes", run.exit_code, run.signal,
                 escaped);
    char summary[64];
    snprintf(summary, sizeof(summary), "attempts %zu escaped 0", stopped);
    assert_non_null(strstr(out, summary));
    assert_true(stopped >= BREAKOUT_MIN_ATTEMPTS);
    assert_null(strstr(out, BREAKOUT_SECRET));
    assert_nothing_written_outside(t);
    assert_never_connected(t->tcp_fd, "the node's loopback listener");
    assert_never_connected(t->abstract_fd, "the node's abstract unix socket");
    assert_vmhost_refuses_planted_link(t);
    assert_true(alive(t->other_qemu));
    assert_no_mount_under(t->env.tmp);
    char *after = core_pattern();
    assert_string_equal(after, pattern);
    assert_no_jail_process_left(t);
    free(after);
    free(pattern);
    free(out);
}

static void fork_bomb_stops_at_the_pids_limit(void **state)
{
    struct targets *t = *state;
    char *const argv[] = { BREAKOUT_PYTHON, "/vm/attack.py", "pids", NULL };
    char *out = NULL;
    struct escape_run run = run_attacker(t, argv, &out);
    fputs(out, stderr);
    int forks = -1;
    char why[32] = "";
    assert_int_equal(sscanf(out, "forks %d stopped by %31s", &forks, why), 2);
    assert_string_equal(why, "EAGAIN");
    assert_true(forks > 0 && forks < BREAKOUT_PIDS_MAX);
    assert_int_equal(run.exit_code, 0);
    assert_no_jail_process_left(t);
    free(out);
}

static void memory_hog_ends_alone_at_the_memory_limit(void **state)
{
    struct targets *t = *state;
    char *const argv[] = { BREAKOUT_PYTHON, "/vm/attack.py", "memory", NULL };
    char *out = NULL;
    struct escape_run run = run_attacker(t, argv, &out);
    assert_null(strstr(out, "memory never stopped"));
    assert_int_equal(run.signal, SIGKILL);
    assert_non_null(strstr(run.limit, "memory limit"));
    assert_true(alive(t->other_qemu));
    assert_no_jail_process_left(t);
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(battery_is_stopped_everywhere),
        cmocka_unit_test(fork_bomb_stops_at_the_pids_limit),
        cmocka_unit_test(memory_hog_ends_alone_at_the_memory_limit),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
