/* Requests (requests.c): a frame on a stream id that is not open. */
#ifndef GUESTD_REQUESTS_H
#define GUESTD_REQUESTS_H

#include "frame.h"

struct guestd;

/* Runs f's handler (counting it as the sandbox's activity where it is),
 * or answers with a Result: EAGAIN at too many open streams, EINVAL for a
 * body guestd does not serve. Stream 0 is ignored. */
void requests_serve(struct guestd *g, const GuestFrame *f);

#endif
