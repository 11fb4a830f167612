/* A running child program and its I/O: reads its output as far as the
 * owner's budget allows (a foreground exec's flow-control window, or
 * unlimited for a background process's ring), feeds its stdin from a
 * queue, enforces the timeout and learns its exit status.
 *
 * "Done" means the main process exited and its output is finished: EOF on
 * every output fd, or - when descendants keep a pipe open - whatever was
 * already in the pipe CHILD_DRAIN_GRACE_MS after the exit. */
#ifndef GUESTD_CHILD_H
#define GUESTD_CHILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "byte_queue.h"
#include "loop.h"
#include "reaper.h"
#include "spawn.h"

#define CHILD_DRAIN_GRACE_MS 200

struct child_owner {
    /* Output bytes the owner accepts right now. */
    size_t (*output_budget)(void *owner);
    /* fd_num: 1 stdout (and PTY), 2 stderr. */
    void (*on_output)(void *owner, int fd_num, const uint8_t *data, size_t len);
    /* Bytes of host-supplied stdin written to the program (or dropped
     * because it closed its stdin); NULL if the owner does not care. */
    void (*on_stdin_consumed)(void *owner, size_t len);
    /* Exited and output finished. Called last: the owner may destroy the
     * child inside. */
    void (*on_done)(void *owner);
};

struct child {
    struct loop *loop;
    struct reaper *reaper;
    const struct child_owner *ops;
    void *owner;
    pid_t pid; /* also its process group */
    bool pty;
    int out_fd[2];        /* stdout (or the PTY master), stderr; -1 = finished */
    size_t drain_left[2]; /* after the grace period: bytes still to forward */
    bool draining;
    int stdin_fd;         /* pipe or the PTY master; -1 = closed */
    int pty_master;       /* open until destroy: see child_close_output */
    struct byte_queue stdin_queue;
    size_t stdin_host_bytes; /* host bytes in stdin_queue (not our ^D) */
    bool stdin_eof;          /* close stdin once the queue is written */
    bool exited;
    int wait_status;
    bool timed_out;
    uint64_t timeout_timer, grace_timer;
};

/* Spawns the program and starts watching it. Returns 0 or an errno with msg
 * set (the child struct then needs no child_destroy). */
int child_start(struct child *c, struct loop *loop, struct reaper *reaper,
                const struct spawn_spec *spec, uint32_t timeout_ms,
                const struct child_owner *ops, void *owner, char *msg, size_t msglen);

/* SIGKILLs the process group if the main process still runs, releases all
 * fds and timers. No callbacks. */
void child_destroy(struct child *c);

/* The owner's budget grew: poll the output again. */
void child_resume_output(struct child *c);

/* Queues stdin bytes (and then EOF if eof). Returns 0, or -1 when stdin is
 * closed: the bytes are dropped. */
int child_write_stdin(struct child *c, const void *data, size_t len, bool eof);

/* Signals the process group. Returns 0 or an errno (ESRCH once exited). */
int child_signal(struct child *c, int sig);

/* Sets the PTY window size. Returns 0 or an errno. */
int child_resize(struct child *c, uint32_t rows, uint32_t cols);

#endif
