/* The escape suite's jail: vmhost's own jail.c with a range of its own. */
#include "escape_jail.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fsutil.h"

#define ESCAPE_MEM_OVERHEAD_MB 256u

int escape_jail_env_open(struct escape_jail_env *e, uid_t uid_base, unsigned uid_count,
                         const char *lock_dir)
{
    memset(e, 0, sizeof(*e));
    e->log_fd = -1;
    snprintf(e->tmp, sizeof(e->tmp), "/tmp/airlock-escape-XXXXXX");
    if (!mkdtemp(e->tmp))
        return -1;
    char bin[PATH_MAX], scratch[PATH_MAX], locks[PATH_MAX], err[512] = "";
    snprintf(bin, sizeof(bin), "%s", AIRLOCK_VMHOST_BIN);
    fs_path(e->preload, sizeof(e->preload), "%s/airlock-qemu-preload.so", dirname(bin));
    fs_path(scratch, sizeof(scratch), "%s/root", e->tmp);
    if (lock_dir)
        fs_path(locks, sizeof(locks), "%s", lock_dir);
    else
        fs_path(locks, sizeof(locks), "%s/uids", e->tmp);
    fs_path(e->dir, sizeof(e->dir), "%s/vm", e->tmp);
    fs_path(e->log, sizeof(e->log), "%s/jail.log", e->tmp);
    const struct jailer_config cfg = { .uid_base = uid_base, .uid_count = uid_count,
                                       .lock_dir = locks, .preload = e->preload,
                                       .scratch_dir = scratch,
                                       .mem_overhead_mb = ESCAPE_MEM_OVERHEAD_MB };
    e->log_fd = open(e->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (e->log_fd < 0 || fs_mkdir_p(e->dir, 0700, err, sizeof(err)) < 0 ||
        jailer_create(&cfg, &e->jailer, err, sizeof(err)) < 0) {
        fprintf(stderr, "no jail: %s\n", err);
        escape_jail_env_close(e, false);
        return -1;
    }
    return 0;
}

void escape_jail_env_close(struct escape_jail_env *e, bool keep)
{
    jailer_free(e->jailer);
    e->jailer = NULL;
    if (e->log_fd >= 0)
        close(e->log_fd);
    e->log_fd = -1;
    if (keep)
        fprintf(stderr, "a jail failed: see %s\n", e->log);
    else if (e->tmp[0])
        fs_remove_tree(e->tmp, NULL, 0);
    e->tmp[0] = '\0';
}

struct jail_spec escape_jail_spec(const struct escape_jail_env *e, const char *program)
{
    return (struct jail_spec){ .qemu_binary = program, .dir = e->dir, .vcpus = 1,
                               .memory_mb = 128, .max_file_bytes = 1u << 20 };
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The first line of /proc/pid/<name>, newline dropped. */
static void read_proc(pid_t pid, const char *name, char *buf, size_t buflen)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    if (fgets(buf, (int)buflen, f))
        buf[strcspn(buf, "\n")] = '\0';
    fclose(f);
}

/* Waits for pid up to timeout_ms; on time out notes where it waited and
 * kills it (our own child, by pid). */
static void wait_run(pid_t pid, int timeout_ms, struct escape_run *run)
{
    double deadline = now_ms() + timeout_ms;
    int status = 0;
    pid_t got;
    while ((got = waitpid(pid, &status, WNOHANG)) == 0 && now_ms() < deadline)
        poll(NULL, 0, 5);
    if (got == 0) {
        run->timed_out = true;
        read_proc(pid, "wchan", run->wchan, sizeof(run->wchan));
        read_proc(pid, "comm", run->comm, sizeof(run->comm));
        kill(pid, SIGKILL);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
    }
    run->exit_code = WIFEXITED(status) && !run->timed_out ? WEXITSTATUS(status) : -1;
    run->signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}

int escape_jail_run(struct escape_jail_env *e, const struct jail_spec *spec, char *const argv[],
                    int out_fd, int timeout_ms, struct escape_run *run, char *err, size_t errlen)
{
    memset(run, 0, sizeof(*run));
    struct jail *jl;
    if (jail_open(e->jailer, spec, &jl, err, errlen) < 0)
        return -1;
    pid_t pid = jail_spawn(jl, argv, out_fd >= 0 ? out_fd : e->log_fd, -1, 0, err, errlen);
    if (pid > 0) {
        wait_run(pid, timeout_ms, run);
        jail_limit_reason(jl, run->limit, sizeof(run->limit));
    }
    jail_close(jl);
    return pid > 0 ? 0 : -1;
}
