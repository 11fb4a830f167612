/* Frames shared by foreground execs and attached background processes. */
#ifndef GUESTD_EXEC_H
#define GUESTD_EXEC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct guestd;

void exec_send_started(struct guestd *g, uint32_t stream_id, pid_t pid);
/* ExecExit from a wait status: exit_code, or signal (exit_code 128+signal). */
void exec_send_exit(struct guestd *g, uint32_t stream_id, int wait_status, bool timed_out);

#endif
