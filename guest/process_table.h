/* Background processes: they outlive the stream and the session that
 * started them; their output (stdout and stderr interleaved, the switches
 * between them marked) goes to a ring of the last PROCESS_RING_BYTES for
 * attach. Exited entries keep their exit status and ring until
 * PROCESS_MAX_EXITED newer ones exited. */
#ifndef GUESTD_PROCESS_TABLE_H
#define GUESTD_PROCESS_TABLE_H

#include <stdbool.h>
#include <stdint.h>

#include "child.h"
#include "frame.h"
#include "list.h"
#include "ring.h"

#define PROCESS_RING_BYTES (1u << 20)
#define PROCESS_STDIN_MAX (1u << 20)
#define PROCESS_MAX_EXITED 64
/* Stdout/stderr switches remembered per process: past this many within
 * the ring, the oldest switch's bytes are replayed as stdout. */
#define PROCESS_FD_MARKS 256

struct guestd;
struct process_table;

/* One attach stream following a process (attach.c), woken when the
 * process has new output or finished: the table knows nothing else of
 * it. */
struct process_attacher {
    struct list_node node; /* in the process's attachers */
    void (*wake)(struct process_attacher *a);
};

struct bg_process {
    struct list_node node; /* in the table, oldest first */
    struct process_table *table;
    pid_t pid;
    ProtobufCBinaryData *argv;
    size_t argc;
    bool pty;
    char *tag; /* ExecRequest.tag ("" when none) */
    int64_t started_unix_ms;
    struct child child;
    bool running; /* false once exited and its output finished */
    int wait_status;
    bool timed_out;
    struct ring output;
    /* Ring positions where the output switches between stdout (1) and
     * stderr (2), oldest first: attach keeps the two apart. */
    struct fd_mark {
        uint64_t pos;
        uint8_t fd;
    } marks[PROCESS_FD_MARKS];
    size_t n_marks;
    struct list_node attachers; /* process_attacher: attach streams following it */
};

struct process_table *process_table_new(struct guestd *g);
/* SIGKILLs the running processes. Attach streams must be gone already. */
void process_table_free(struct process_table *t);

/* Starts a background process. Returns 0 or an errno with msg set. */
int process_table_start(struct process_table *t, const struct spawn_spec *spec,
                        const Airlock__Guest__V1__ExecRequest *r, pid_t *pid, char *msg,
                        size_t msglen);
/* The fd (1 or 2) of the output byte at ring position pos, and the
 * position where the next switch begins (UINT64_MAX: none). */
int process_output_fd(const struct bg_process *p, uint64_t pos, uint64_t *until);
/* For a request on stream id naming pid: the process, or NULL after
 * answering ESRCH "no process N". */
struct bg_process *process_table_find_or_reply(struct guestd *g, uint32_t id, pid_t pid);

#endif
