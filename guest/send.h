/* Building and sending the guest's frames (send.c); dropped while no host
 * is connected. */
#ifndef GUESTD_SEND_H
#define GUESTD_SEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "frame.h"

struct guestd;

int64_t unix_now_ms(void);

void guestd_send(struct guestd *g, const GuestFrame *f);
void guestd_send_result(struct guestd *g, uint32_t stream_id, int err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void guestd_send_window(struct guestd *g, uint32_t stream_id, size_t bytes);
/* Sends payload: Output{fd,data} when fd > 0, else Data{data,eof}. */
void guestd_send_output(struct guestd *g, uint32_t stream_id, int fd, const void *data,
                        size_t len);
void guestd_send_data(struct guestd *g, uint32_t stream_id, const void *data, size_t len,
                      bool eof);

/* A wait status as the protocol reports it (ExecExit, ProcessInfo): the
 * exit code, or 128+signal when a signal killed it (the shell's
 * convention; *signal is that signal, else 0). */
int32_t guestd_exit_code(int wait_status, int32_t *signal);

/* Shared by foreground execs (exec.c) and attached background processes
 * (attach.c). */
void guestd_send_exec_started(struct guestd *g, uint32_t stream_id, pid_t pid);
/* ExecExit from a wait status: exit_code, or signal (exit_code 128+signal). */
void guestd_send_exec_exit(struct guestd *g, uint32_t stream_id, int wait_status,
                           bool timed_out);

/* Exec, process and file activity, for the host's idle detection. */
void guestd_touch(struct guestd *g);

#endif
