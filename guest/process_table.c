#include "process_table.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "guestd_state.h"
#include "log.h"
#include "request_handlers.h"
#include "send.h"

struct process_table {
    struct guestd *g;
    struct list_node procs;
    size_t nexited;
};

/* p has new output or finished: its attach streams send. */
static void wake_attachers(struct bg_process *p)
{
    struct list_node *pos, *tmp;
    list_for_each_safe(pos, tmp, &p->attachers) {
        struct process_attacher *a = list_entry(pos, struct process_attacher, node);
        a->wake(a);
    }
}

static size_t bg_output_budget(void *owner)
{
    (void)owner;
    return SIZE_MAX; /* the ring never blocks the program */
}

/* Records a switch to fd at the ring's end; the oldest mark goes when
 * the table is full or the ring no longer holds anything before the
 * next one. */
static void note_fd(struct bg_process *p, int fd)
{
    int last = p->n_marks ? p->marks[p->n_marks - 1].fd : 1;
    if (fd == last)
        return;
    size_t drop = 0;
    while (drop + 1 < p->n_marks && p->marks[drop + 1].pos <= ring_start(&p->output))
        drop++;
    if (p->n_marks - drop == PROCESS_FD_MARKS)
        drop++;
    memmove(p->marks, p->marks + drop, (p->n_marks - drop) * sizeof(*p->marks));
    p->n_marks -= drop;
    p->marks[p->n_marks++] = (struct fd_mark){ p->output.total, (uint8_t)fd };
}

int process_output_fd(const struct bg_process *p, uint64_t pos, uint64_t *until)
{
    int fd = 1;
    *until = UINT64_MAX;
    for (size_t i = 0; i < p->n_marks; i++) {
        if (p->marks[i].pos > pos) {
            *until = p->marks[i].pos;
            break;
        }
        fd = p->marks[i].fd;
    }
    return fd;
}

static void bg_on_output(void *owner, int fd, const uint8_t *data, size_t len)
{
    struct bg_process *p = owner;
    guestd_touch(p->table->g);
    note_fd(p, fd);
    if (ring_append(&p->output, data, len) < 0)
        log_warn("out of memory for process output", "pid=%d", (int)p->pid);
    wake_attachers(p);
}

static void bg_free(struct bg_process *p)
{
    list_remove(&p->node);
    child_destroy(&p->child);
    ring_free(&p->output);
    for (size_t i = 0; i < p->argc; i++)
        free(p->argv[i].data);
    free(p->argv);
    free(p->tag);
    free(p);
}

/* Drops the oldest exited entries nobody is attached to. */
static void process_table_evict(struct process_table *t)
{
    struct list_node *pos, *tmp;
    list_for_each_safe(pos, tmp, &t->procs) {
        if (t->nexited <= PROCESS_MAX_EXITED)
            return;
        struct bg_process *p = list_entry(pos, struct bg_process, node);
        if (p->running || !list_empty(&p->attachers))
            continue;
        bg_free(p);
        t->nexited--;
    }
}

static void bg_on_done(void *owner)
{
    struct bg_process *p = owner;
    struct process_table *t = p->table;
    p->running = false;
    p->wait_status = p->child.wait_status;
    p->timed_out = p->child.timed_out;
    child_destroy(&p->child);
    log_info("background process finished", "pid=%d status=0x%x", (int)p->pid, p->wait_status);
    t->nexited++;
    wake_attachers(p);
    process_table_evict(t);
}

static const struct child_owner bg_child_owner = {
    .output_budget = bg_output_budget,
    .on_output = bg_on_output,
    .on_done = bg_on_done,
};

struct process_table *process_table_new(struct guestd *g)
{
    struct process_table *t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    t->g = g;
    list_init(&t->procs);
    return t;
}

void process_table_free(struct process_table *t)
{
    if (!t)
        return;
    struct list_node *pos, *tmp;
    list_for_each_safe(pos, tmp, &t->procs)
        bg_free(list_entry(pos, struct bg_process, node));
    free(t);
}

static int copy_argv(struct bg_process *p, const Airlock__Guest__V1__ExecRequest *r)
{
    p->argv = calloc(r->n_argv, sizeof(*p->argv));
    if (!p->argv)
        return -1;
    for (size_t i = 0; i < r->n_argv; i++, p->argc++) {
        p->argv[i].len = r->argv[i].len;
        p->argv[i].data = malloc(r->argv[i].len ? r->argv[i].len : 1);
        if (!p->argv[i].data)
            return -1;
        memcpy(p->argv[i].data, r->argv[i].data, r->argv[i].len);
    }
    return 0;
}

int process_table_start(struct process_table *t, const struct spawn_spec *spec,
                        const Airlock__Guest__V1__ExecRequest *r, pid_t *pid, char *msg,
                        size_t msglen)
{
    struct bg_process *p = calloc(1, sizeof(*p));
    if (!p)
        goto nomem;
    list_init(&p->node);
    list_init(&p->attachers);
    ring_init(&p->output, PROCESS_RING_BYTES);
    p->table = t;
    p->pty = r->pty;
    p->started_unix_ms = unix_now_ms();
    p->tag = strdup(r->tag ? r->tag : "");
    if (!p->tag || copy_argv(p, r) < 0)
        goto nomem;
    struct guestd *g = t->g;
    int err = child_start(&p->child, g->loop, g->reaper, spec, r->timeout_ms, &bg_child_owner,
                          p, msg, msglen);
    if (err) {
        bg_free(p);
        return err;
    }
    p->pid = p->child.pid;
    p->running = true;
    list_add_tail(&t->procs, &p->node);
    log_info("background process started", "pid=%d", (int)p->pid);
    *pid = p->pid;
    return 0;
nomem:
    if (p)
        bg_free(p);
    snprintf(msg, msglen, "exec: out of memory");
    return ENOMEM;
}

static struct bg_process *process_table_find(struct process_table *t, pid_t pid)
{
    struct list_node *pos, *tmp;
    list_for_each_safe(pos, tmp, &t->procs) {
        struct bg_process *p = list_entry(pos, struct bg_process, node);
        if (p->pid == pid)
            return p;
    }
    return NULL;
}

struct bg_process *process_table_find_or_reply(struct guestd *g, uint32_t id, pid_t pid)
{
    struct bg_process *p = process_table_find(g->processes, pid);
    if (!p)
        guestd_send_result(g, id, ESRCH, "no process %d", (int)pid);
    return p;
}

void process_list_request(struct guestd *g, uint32_t id, const GuestFrame *frame)
{
    (void)frame;
    struct process_table *t = g->processes;
    size_t n = 0;
    struct list_node *pos, *tmp;
    list_for_each_safe(pos, tmp, &t->procs)
        n++;
    Airlock__Guest__V1__ProcessInfo *infos = calloc(n ? n : 1, sizeof(*infos));
    Airlock__Guest__V1__ProcessInfo **ptrs = calloc(n ? n : 1, sizeof(*ptrs));
    if (!infos || !ptrs) {
        guestd_send_result(g, id, ENOMEM, "process list: out of memory");
        goto out;
    }
    size_t i = 0;
    list_for_each_safe(pos, tmp, &t->procs) {
        struct bg_process *p = list_entry(pos, struct bg_process, node);
        Airlock__Guest__V1__ProcessInfo *pi = &infos[i];
        airlock__guest__v1__process_info__init(pi);
        pi->pid = p->pid;
        pi->n_argv = p->argc;
        pi->argv = p->argv;
        pi->running = p->running;
        if (!p->running)
            pi->exit_code = guestd_exit_code(p->wait_status, &pi->signal);
        pi->started_unix_ms = p->started_unix_ms;
        pi->pty = p->pty;
        pi->tag = p->tag;
        ptrs[i++] = pi;
    }
    Airlock__Guest__V1__ProcessList list = AIRLOCK__GUEST__V1__PROCESS_LIST__INIT;
    list.n_processes = n;
    list.processes = ptrs;
    GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
    f.stream_id = id;
    f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_PROCESS_LIST;
    f.process_list = &list;
    guestd_send(g, &f);
out:
    free(infos);
    free(ptrs);
}

void process_stdin_request(struct guestd *g, uint32_t id, const GuestFrame *frame)
{
    const Airlock__Guest__V1__ProcessStdin *r = frame->process_stdin;
    struct bg_process *p = process_table_find_or_reply(g, id, r->pid);
    if (!p)
        return;
    if (!p->running || p->child.stdin_fd < 0) {
        guestd_send_result(g, id, EPIPE, "process %d: stdin is closed", r->pid);
        return;
    }
    if (p->child.stdin_queue.len + r->data.len > PROCESS_STDIN_MAX) {
        guestd_send_result(g, id, EAGAIN,
                           "process %d: stdin queue full (%zu bytes waiting, limit %u)", r->pid,
                           p->child.stdin_queue.len, PROCESS_STDIN_MAX);
        return;
    }
    if (child_write_stdin(&p->child, r->data.data, r->data.len, r->eof) < 0) {
        guestd_send_result(g, id, EPIPE, "process %d: stdin is closed", r->pid);
        return;
    }
    guestd_send_result(g, id, 0, NULL);
}

void process_signal_request(struct guestd *g, uint32_t id, const GuestFrame *frame)
{
    const Airlock__Guest__V1__SignalRequest *r = frame->signal;
    if (r->signal < 0 || r->signal >= NSIG) {
        guestd_send_result(g, id, EINVAL, "signal: invalid signal %d", r->signal);
        return;
    }
    struct bg_process *p = process_table_find_or_reply(g, id, r->pid);
    if (!p)
        return;
    int err = p->running ? child_signal(&p->child, r->signal) : ESRCH;
    if (err)
        guestd_send_result(g, id, err, "signal %d to process %d: %s", r->signal, r->pid,
                           strerror(err));
    else
        guestd_send_result(g, id, 0, NULL);
}

void process_resize_request(struct guestd *g, uint32_t id, const GuestFrame *frame)
{
    const Airlock__Guest__V1__Resize *r = frame->resize;
    struct bg_process *p = process_table_find_or_reply(g, id, r->pid);
    if (!p)
        return;
    if (r->rows == 0 || r->cols == 0 || r->rows > 65535 || r->cols > 65535) {
        guestd_send_result(g, id, EINVAL, "resize: rows and cols must be 1..65535");
        return;
    }
    int err = p->running ? child_resize(&p->child, r->rows, r->cols) : ESRCH;
    if (err == ENOTTY)
        guestd_send_result(g, id, err, "process %d has no terminal (start it with a PTY)", r->pid);
    else if (err)
        guestd_send_result(g, id, err, "resize process %d: %s", r->pid, strerror(err));
    else
        guestd_send_result(g, id, 0, NULL);
}
