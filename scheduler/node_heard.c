#include "node_heard.h"

#include "clock.h"

/* The message says which vmhost process sent it. */
static void heard(struct scheduler *s, const char *node, const Airlock__Node__V1__Heartbeat *hb)
{
    node_liveness_heard(&s->liveness, node, hb->started_unix_ms, clock_monotonic_ms());
}

int node_heard_follow(struct scheduler *s, char *err, size_t errlen)
{
    return node_heartbeats_follow(&s->heard, s, s->nc, heard, err, errlen);
}
