/* Notices an egress restart and attaches every sandbox again with its
 * current policy: a restarted egress knows no sandbox, so until it is told
 * each guest reaches nothing (and nothing it tries is logged). vmhost polls
 * egress's GetStatus; an instance id it has not seen means a new egress
 * (or the first contact), and every sandbox with a namespace is attached
 * again (sandbox_network_reattach: one already known just gets its policy
 * set). A round that fails is retried at the next poll. */
#ifndef AIRLOCK_EGRESS_WATCH_H
#define AIRLOCK_EGRESS_WATCH_H

#include <stddef.h>

struct vmhost;
struct egress_watch;

/* Starts polling vh->egress (which must be set). NULL with err set. */
struct egress_watch *egress_watch_start(struct vmhost *vh, char *err, size_t errlen);
void egress_watch_stop(struct egress_watch *w);

#endif
