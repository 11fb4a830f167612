/* AttachRequest: a stream that replays a background process's output ring
 * from a cursor as the host grants window, then (follow) keeps streaming
 * new output and ends with ExecExit, or (no follow) ends with Result once
 * it replayed what the ring held at attach time. */
#ifndef GUESTD_ATTACH_H
#define GUESTD_ATTACH_H

struct bg_process;

/* p has new output or finished: let its attach streams send. */
void attach_wake_all(struct bg_process *p);

#endif
