#include "cp_stack.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "fsutil.h"

#define PG_BIN "/usr/lib/postgresql/15/bin"
#define NATS_SERVER "/usr/sbin/nats-server"
#define CP_START_TIMEOUT_MS 60000

static struct cp_stack *cp_current;

static void print_log_tail(const char *dir, const char *name)
{
    char path[PATH_MAX], *text = NULL;
    size_t len = 0;
    if (fs_path(path, sizeof(path), "%s/%s", dir, name) < 0 ||
        fs_read_file(path, 64 << 20, &text, &len, NULL, 0) < 0)
        return;
    size_t start = len > 4000 ? len - 4000 : 0;
    fprintf(stderr, "---- %s tail ----\n%s\n----\n", name, text + start);
    free(text);
}

/* Starts argv with stdout+stderr appended to dir/log_name. */
static pid_t spawn(const char *const argv[], const char *dir, const char *log_name)
{
    char log[PATH_MAX];
    fs_path(log, sizeof(log), "%s/%s", dir, log_name);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    return pid;
}

/* TERM, then KILL after 30 s; -1 unless it exited 0 (or, when !strict,
 * exited at all: nats-server exits 1 on TERM). */
static int stop_pid(pid_t *pid, const char *dir, const char *log_name, bool strict)
{
    if (*pid <= 0)
        return 0;
    kill(*pid, SIGTERM);
    int status = 0;
    int64_t deadline = clock_monotonic_ms() + 30000;
    while (waitpid(*pid, &status, WNOHANG) == 0) {
        if (clock_monotonic_ms() > deadline) {
            kill(*pid, SIGKILL);
            waitpid(*pid, &status, 0);
            break;
        }
        usleep(20 * 1000);
    }
    *pid = 0;
    if (WIFEXITED(status) && (WEXITSTATUS(status) == 0 || !strict))
        return 0;
    fprintf(stderr, "cp_stack: %s did not stop cleanly (wait status %d)\n", log_name, status);
    print_log_tail(dir, log_name);
    return -1;
}

static bool alive(pid_t pid)
{
    return pid > 0 && waitpid(pid, NULL, WNOHANG) == 0;
}

static int run_as_postgres(const char *const argv[], char *err, size_t errlen)
{
    const char *full[32] = { "runuser", "-u", "postgres", "--" };
    size_t n = 4;
    for (size_t i = 0; argv[i] && n < 31; i++)
        full[n++] = argv[i];
    full[n] = NULL;
    return run_command(full, "/", NULL, err, errlen);
}

static int start_postgres(struct cp_stack *st)
{
    struct passwd *pw = getpwnam("postgres");
    char err[4096], opts[PATH_MAX + 64], log[PATH_MAX];
    if (!pw)
        return 77;
    fs_path(st->pg_data, sizeof(st->pg_data), "%s/pg", st->dir);
    /* initdb refuses to run as root: the data dir and socket dir belong
     * to the postgres user. */
    if (chown(st->dir, pw->pw_uid, pw->pw_gid) < 0) {
        perror("cp_stack: chown");
        return -1;
    }
    const char *initdb[] = { PG_BIN "/initdb", "-D", st->pg_data, "-A", "trust", "-U", "airlock",
                             NULL };
    if (run_as_postgres(initdb, err, sizeof(err)) < 0) {
        fprintf(stderr, "cp_stack: %s\n", err);
        return -1;
    }
    fs_path(opts, sizeof(opts), "-k %s -p 5432 -c listen_addresses=''", st->dir);
    fs_path(log, sizeof(log), "%s/postgres.log", st->dir);
    const char *start[] = { PG_BIN "/pg_ctl", "-D", st->pg_data, "-o", opts, "-l", log, "-w",
                            "start", NULL };
    if (run_as_postgres(start, err, sizeof(err)) < 0) {
        fprintf(stderr, "cp_stack: %s\n", err);
        print_log_tail(st->dir, "postgres.log");
        return -1;
    }
    st->pg_started = true;
    const char *createdb[] = { PG_BIN "/createdb", "-h", st->dir, "-p", "5432", "-U", "airlock",
                               "airlock", NULL };
    if (run_as_postgres(createdb, err, sizeof(err)) < 0) {
        fprintf(stderr, "cp_stack: %s\n", err);
        return -1;
    }
    fs_path(st->database_url, sizeof(st->database_url),
            "host=%s port=5432 user=airlock dbname=airlock", st->dir);
    return 0;
}

static void stop_postgres(struct cp_stack *st)
{
    if (!st->pg_started)
        return;
    const char *stop[] = { PG_BIN "/pg_ctl", "-D", st->pg_data, "-m", "fast", "-w", "stop", NULL };
    char err[1024];
    if (run_as_postgres(stop, err, sizeof(err)) < 0)
        fprintf(stderr, "cp_stack: %s\n", err);
    st->pg_started = false;
}

static int start_nats(struct cp_stack *st)
{
    if (access(NATS_SERVER, X_OK) != 0)
        return 77;
    const char *argv[] = { NATS_SERVER, "-a", "127.0.0.1", "-p", "-1", "--ports_file_dir", st->dir,
                           NULL };
    st->nats_pid = spawn(argv, st->dir, "nats.log");
    char ports[PATH_MAX];
    fs_path(ports, sizeof(ports), "%s/nats-server_%d.ports", st->dir, (int)st->nats_pid);
    int64_t deadline = clock_monotonic_ms() + CP_START_TIMEOUT_MS;
    while (clock_monotonic_ms() < deadline && alive(st->nats_pid)) {
        char *text = NULL;
        if (fs_read_file(ports, 65536, &text, NULL, NULL, 0) == 0) {
            /* {"nats":["nats://127.0.0.1:PORT"],...} */
            char *url = strstr(text, "nats://");
            if (url) {
                snprintf(st->nats_url, sizeof(st->nats_url), "%.*s", (int)strcspn(url, "\""), url);
                free(text);
                return 0;
            }
        }
        free(text);
        usleep(50 * 1000);
    }
    fprintf(stderr, "cp_stack: nats-server did not start\n");
    print_log_tail(st->dir, "nats.log");
    return -1;
}

static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof(a);
    int port = -1;
    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    if (fd >= 0)
        close(fd);
    return port;
}

/* Polls until cond holds, the process dies or the start timeout passes. */
static int wait_until(pid_t pid, bool (*cond)(struct cp_stack *), struct cp_stack *st,
                      const char *log_name)
{
    int64_t deadline = clock_monotonic_ms() + CP_START_TIMEOUT_MS;
    while (clock_monotonic_ms() < deadline && alive(pid)) {
        if (cond(st))
            return 0;
        usleep(50 * 1000);
    }
    fprintf(stderr, "cp_stack: %s did not come up\n", log_name);
    print_log_tail(st->dir, log_name);
    return -1;
}

static bool scheduler_ready(struct cp_stack *st)
{
    char path[PATH_MAX], *key = NULL;
    fs_path(path, sizeof(path), "%s/admin-key", st->dir);
    if (fs_read_file(path, 4096, &key, NULL, NULL, 0) < 0)
        return false;
    snprintf(st->admin_key, sizeof(st->admin_key), "%.*s", (int)strcspn(key, "\n"), key);
    free(key);
    return access(st->scheduler_addr + 5, F_OK) == 0;
}

static bool gateway_ready(struct cp_stack *st)
{
    int port = atoi(strrchr(st->gateway_url, ':') + 1);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    bool ok = fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
    if (fd >= 0)
        close(fd);
    return ok;
}

static void cp_cleanup_at_exit(void)
{
    if (cp_current)
        cp_stack_stop(cp_current);
}

static void cp_cleanup_on_signal(int sig)
{
    cp_cleanup_at_exit();
    signal(sig, SIG_DFL);
    raise(sig);
}

int cp_stack_start(struct cp_stack *st)
{
    memset(st, 0, sizeof(*st));
    snprintf(st->dir, sizeof(st->dir), "/tmp/airlock-cp-XXXXXX");
    if (!mkdtemp(st->dir)) {
        perror("mkdtemp");
        return -1;
    }
    chmod(st->dir, 0755);
    cp_current = st;
    atexit(cp_cleanup_at_exit);
    int rc = start_postgres(st);
    if (rc == 0)
        rc = start_nats(st);
    if (rc != 0)
        return rc;
    const char *vmhost_args[] = { "--nats", st->nats_url, "--node-id", "cp-node", NULL };
    if (itest_vmhost_start(&st->vmhost, vmhost_args) < 0)
        return -1;
    /* After itest installed its handlers: ours stop the whole stack. */
    signal(SIGINT, cp_cleanup_on_signal);
    signal(SIGTERM, cp_cleanup_on_signal);

    fs_path(st->scheduler_addr, sizeof(st->scheduler_addr), "unix:%s/scheduler.sock", st->dir);
    const char *sched[] = { AIRLOCK_SCHEDULER_BIN, "--data-dir", st->dir, "--listen",
                            st->scheduler_addr, "--database", st->database_url, "--nats",
                            st->nats_url, NULL };
    st->scheduler_pid = spawn(sched, st->dir, "scheduler.log");
    if (wait_until(st->scheduler_pid, scheduler_ready, st, "scheduler.log") < 0)
        return -1;

    char listen[64];
    int port = free_port();
    snprintf(listen, sizeof(listen), "127.0.0.1:%d", port);
    snprintf(st->gateway_url, sizeof(st->gateway_url), "http://127.0.0.1:%d", port);
    const char *gw[] = { AIRLOCK_GATEWAY_BIN, "--listen", listen, "--scheduler",
                         st->scheduler_addr, NULL };
    st->gateway_pid = spawn(gw, st->dir, "gateway.log");
    return wait_until(st->gateway_pid, gateway_ready, st, "gateway.log");
}

int cp_stack_stop(struct cp_stack *st)
{
    int rc = 0;
    if (stop_pid(&st->gateway_pid, st->dir, "gateway.log", true) < 0)
        rc = -1;
    if (stop_pid(&st->scheduler_pid, st->dir, "scheduler.log", true) < 0)
        rc = -1;
    if (st->vmhost.data_dir[0] && itest_vmhost_stop(&st->vmhost) < 0)
        rc = -1;
    if (stop_pid(&st->nats_pid, st->dir, "nats.log", false) < 0)
        rc = -1;
    stop_postgres(st);
    if (st->dir[0] && !getenv("AIRLOCK_TEST_KEEP"))
        fs_remove_tree(st->dir, NULL, 0);
    st->dir[0] = '\0';
    if (cp_current == st)
        cp_current = NULL;
    return rc;
}
