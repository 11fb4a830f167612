#include "node_request.h"

#include "clock.h"
#include "nodes.h"

/* How many times the connection reconnected so far (0 when NATS.c cannot
 * say: then only its status is checked). */
static uint64_t reconnects(natsConnection *nc, natsStatistics *stats)
{
    uint64_t n = 0;
    if (stats && natsConnection_GetStats(nc, stats) == NATS_OK)
        natsStatistics_GetCounts(stats, NULL, NULL, NULL, NULL, &n);
    return n;
}

void node_watch_begin(struct scheduler *s, const char *node_id, struct node_watch *w)
{
    w->seen = node_liveness_seen(&s->liveness, node_id);
    w->stats = NULL;
    natsStatistics_Create(&w->stats);
    w->reconnects = reconnects(s->nc, w->stats);
}

bool node_watch_lost(struct scheduler *s, const char *node_id, struct node_watch *w, char *why,
                     size_t whylen)
{
    if (natsConnection_Status(s->nc) != NATS_CONN_STATUS_CONNECTED ||
        reconnects(s->nc, w->stats) != w->reconnects) {
        snprintf(why, whylen, "the scheduler lost its connection to NATS");
        return true;
    }
    char node_why[128];
    if (node_liveness_lost(&s->liveness, node_id, &w->seen, clock_monotonic_ms(), node_why,
                           sizeof(node_why))) {
        snprintf(why, whylen, "node %s stopped answering (%s)", node_id, node_why);
        return true;
    }
    return false;
}

void node_watch_end(struct node_watch *w)
{
    natsStatistics_Destroy(w->stats);
    w->stats = NULL;
}

int node_request(struct scheduler *s, const char *node_id, node_op op, const char *subject,
                 const void *data, int len, int timeout_ms, natsMsg **msg,
                 struct airlock_error *e)
{
    *msg = NULL;
    if (natsConnection_Status(s->nc) != NATS_CONN_STATUS_CONNECTED)
        return airlock_error_set(e, AIRLOCK_ERR_UNAVAILABLE,
                                 "the scheduler is not connected to NATS (reconnecting): node %s "
                                 "cannot be asked to %s",
                                 node_id, node_op_name(op));
    struct node_watch watch;
    node_watch_begin(s, node_id, &watch);
    natsInbox *inbox = NULL;
    natsSubscription *sub = NULL;
    natsStatus ns = natsInbox_Create(&inbox);
    if (ns == NATS_OK)
        ns = natsConnection_SubscribeSync(&sub, s->nc, inbox);
    if (ns == NATS_OK)
        ns = natsConnection_PublishRequest(s->nc, subject, inbox, data, len);
    int rc = NODES_UNANSWERED;
    int64_t started = clock_monotonic_ms(), deadline = started + timeout_ms;
    char why[256];
    if (ns != NATS_OK) {
        rc = airlock_error_set(e, AIRLOCK_ERR_UNAVAILABLE, "nats: request %s: %s", subject,
                               natsStatus_GetText(ns));
        goto out;
    }
    for (;;) {
        int64_t left = deadline - clock_monotonic_ms();
        if (left <= 0) {
            airlock_error_set(e, AIRLOCK_ERR_TIMEOUT, "node %s did not answer %s within %d ms",
                              node_id, node_op_name(op), timeout_ms);
            break;
        }
        ns = natsSubscription_NextMsg(msg, sub,
                                      (int64_t)(left < NODE_REQUEST_CHECK_MS ? left
                                                                              : NODE_REQUEST_CHECK_MS));
        /* NextMsg answers the server's "no responders" as a status (a
         * message carrying it in older NATS.c): nobody got the request. */
        if (ns == NATS_NO_RESPONDERS || (ns == NATS_OK && natsMsg_IsNoResponders(*msg))) {
            natsMsg_Destroy(*msg);
            *msg = NULL;
            rc = airlock_error_set(e, AIRLOCK_ERR_UNAVAILABLE,
                                   "node %s is not answering (no responders on %s)", node_id,
                                   subject);
            break;
        }
        if (ns == NATS_OK) {
            rc = 0;
            break;
        }
        if (ns != NATS_TIMEOUT) {
            airlock_error_set(e, AIRLOCK_ERR_UNAVAILABLE, "nats: waiting for node %s's answer to %s: %s",
                              node_id, node_op_name(op), natsStatus_GetText(ns));
            break;
        }
        if (node_watch_lost(s, node_id, &watch, why, sizeof(why))) {
            airlock_error_set(e, AIRLOCK_ERR_UNAVAILABLE,
                              "%s while carrying out %s (asked %lld ms before); it may or may "
                              "not have done it",
                              why, node_op_name(op), (long long)(clock_monotonic_ms() - started));
            break;
        }
    }
out:
    natsSubscription_Destroy(sub);
    natsInbox_Destroy(inbox);
    node_watch_end(&watch);
    return rc;
}
