#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "bytes.h"

/* What the child was doing when it failed (sent over the status pipe). */
enum spawn_stage { STAGE_SETUP, STAGE_CREDENTIALS, STAGE_CWD, STAGE_EXEC };

struct spawn_failure {
    int stage;
    int err;
};

/* Between fork and exec: async-signal-safe calls only. */
static void __attribute__((noreturn))
spawn_child(const struct spawn_spec *spec, int status_fd, int in_fd, int out_fd, int err_fd)
{
    struct spawn_failure fail = { STAGE_SETUP, 0 };
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    /* The daemon ignores SIGPIPE; exec does not reset ignored signals. */
    for (int sig = 1; sig < NSIG; sig++)
        signal(sig, SIG_DFL);

    if (setsid() < 0)
        goto fail;
    if (spec->pty && ioctl(in_fd, TIOCSCTTY, 0) < 0)
        goto fail;
    if (dup2(in_fd, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0)
        goto fail;
    /* Nothing else of ours may leak into the program; status_fd is
     * CLOEXEC already and must stay open until exec. */
    close_range(3, ~0u, CLOSE_RANGE_CLOEXEC);

    fail.stage = STAGE_CREDENTIALS;
    if (spec->set_user) {
        if (setgroups(spec->ngroups, spec->groups) < 0 || setgid(spec->gid) < 0 ||
            setuid(spec->uid) < 0)
            goto fail;
    }
    fail.stage = STAGE_CWD;
    if (chdir(spec->cwd) < 0)
        goto fail;
    fail.stage = STAGE_EXEC;
    execve(spec->path, spec->argv, spec->envp);
fail:
    fail.err = errno;
    ssize_t ignored = write(status_fd, &fail, sizeof(fail));
    (void)ignored;
    _exit(127);
}

static int set_nonblocking(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

static int open_pty(const struct spawn_spec *spec, int *master, int *slave)
{
    char name[64];
    *master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (*master < 0)
        return -1;
    if (grantpt(*master) < 0 || unlockpt(*master) < 0 || ptsname_r(*master, name, sizeof(name)))
        return -1;
    *slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (*slave < 0)
        return -1;
    if (spec->rows && spec->cols) {
        struct winsize ws = { .ws_row = spec->rows, .ws_col = spec->cols };
        if (ioctl(*slave, TIOCSWINSZ, &ws) < 0)
            return -1;
    }
    return 0;
}

static void format_failure(const struct spawn_spec *spec, const struct spawn_failure *f,
                           char *msg, size_t msglen)
{
    const char *prog = spec->argv[0];
    switch (f->stage) {
    case STAGE_CWD:
        snprintf(msg, msglen, "exec %s: cwd %s: %s", quoted(prog).s, quoted(spec->cwd).s,
                 strerror(f->err));
        break;
    case STAGE_CREDENTIALS:
        snprintf(msg, msglen, "exec %s: switching to uid %u: %s", quoted(prog).s,
                 (unsigned)spec->uid, strerror(f->err));
        break;
    case STAGE_EXEC:
        snprintf(msg, msglen, "exec %s: %s", quoted(prog).s, strerror(f->err));
        break;
    default:
        snprintf(msg, msglen, "exec %s: setting up the process: %s", quoted(prog).s,
                 strerror(f->err));
    }
}

int spawn_start(const struct spawn_spec *spec, struct spawned *out, char *msg, size_t msglen)
{
    /* Child ends (in_c, out_c, err_c) and parent ends. */
    int in_c = -1, out_c = -1, err_c = -1, status[2] = { -1, -1 };
    int in_p = -1, out_p = -1, err_p = -1, master = -1;
    int p[2];
    int err = 0;

    if (spec->pty) {
        if (open_pty(spec, &master, &in_c) < 0)
            goto sys_fail;
        out_c = dup(in_c);
        err_c = dup(in_c);
        if (out_c < 0 || err_c < 0 || set_nonblocking(master) < 0)
            goto sys_fail;
    } else {
        if (spec->stdin_pipe) {
            if (pipe2(p, O_CLOEXEC) < 0)
                goto sys_fail;
            in_c = p[0];
            in_p = p[1];
        } else if ((in_c = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0) {
            goto sys_fail;
        }
        if (pipe2(p, O_CLOEXEC) < 0)
            goto sys_fail;
        out_p = p[0];
        out_c = p[1];
        if (pipe2(p, O_CLOEXEC) < 0)
            goto sys_fail;
        err_p = p[0];
        err_c = p[1];
        if ((in_p >= 0 && set_nonblocking(in_p) < 0) || set_nonblocking(out_p) < 0 ||
            set_nonblocking(err_p) < 0)
            goto sys_fail;
    }
    if (pipe2(status, O_CLOEXEC) < 0)
        goto sys_fail;

    pid_t pid = fork();
    if (pid < 0)
        goto sys_fail;
    if (pid == 0)
        spawn_child(spec, status[1], in_c, out_c, err_c);

    close_fd(&status[1]);
    close_fd(&in_c);
    close_fd(&out_c);
    close_fd(&err_c);
    struct spawn_failure f;
    ssize_t n;
    do
        n = read(status[0], &f, sizeof(f));
    while (n < 0 && errno == EINTR);
    close_fd(&status[0]);
    if (n == (ssize_t)sizeof(f)) {
        /* The child has exited with 127 already (or is about to). */
        waitpid(pid, NULL, 0);
        format_failure(spec, &f, msg, msglen);
        err = f.err ? f.err : EIO;
        goto cleanup;
    }
    *out = (struct spawned){
        .pid = pid, .stdin_fd = in_p, .stdout_fd = out_p, .stderr_fd = err_p, .pty_fd = master
    };
    return 0;

sys_fail:
    err = errno;
    snprintf(msg, msglen, "exec %s: %s", quoted(spec->argv[0]).s, strerror(err));
cleanup:
    close_fd(&status[0]);
    close_fd(&status[1]);
    close_fd(&in_c);
    close_fd(&out_c);
    close_fd(&err_c);
    close_fd(&in_p);
    close_fd(&out_p);
    close_fd(&err_p);
    close_fd(&master);
    return err;
}
