/* fork + exec of one program with pipes or a pseudo-terminal.
 *
 * The child reports a failure before the program runs (cwd, credentials,
 * exec) through a CLOEXEC status pipe, so the caller gets the real errno
 * instead of a mysterious exit status 127. */
#ifndef GUESTD_SPAWN_H
#define GUESTD_SPAWN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct spawn_spec {
    const char *path;   /* executable (already resolved) */
    char *const *argv;  /* argv[0] names the program in messages */
    char *const *envp;
    const char *cwd;
    bool set_user;      /* switch to uid/gid/groups (else keep ours) */
    uid_t uid;
    gid_t gid;
    const gid_t *groups;
    size_t ngroups;
    bool pty;
    unsigned short rows, cols; /* PTY size; 0 = leave the default */
    bool stdin_pipe;    /* else stdin is /dev/null (PTY: the terminal) */
};

/* Parent ends, all O_NONBLOCK|O_CLOEXEC; -1 when unused. With a PTY,
 * pty_fd is the master and the other three are -1. */
struct spawned {
    pid_t pid;
    int stdin_fd, stdout_fd, stderr_fd, pty_fd;
};

/* Starts the program in its own session (and process group); with a PTY
 * that terminal is its controlling terminal. Returns 0, or an errno with a
 * message in msg. */
int spawn_start(const struct spawn_spec *spec, struct spawned *out, char *msg, size_t msglen);

#endif
