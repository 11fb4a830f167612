#include "node_heard.h"

#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "node.pb-c.h"

#define HEARTBEAT_PREFIX "airlock.node."
#define HEARTBEAT_SUFFIX ".heartbeat"

static void on_heartbeat(natsConnection *nc, natsSubscription *sub, natsMsg *msg, void *closure)
{
    (void)nc;
    (void)sub;
    struct scheduler *s = closure;
    /* The node is the one NATS let publish on this subject (only its own
     * user may); the message says which vmhost process sent it. */
    const char *subject = natsMsg_GetSubject(msg);
    size_t len = strlen(subject), pre = strlen(HEARTBEAT_PREFIX), suf = strlen(HEARTBEAT_SUFFIX);
    Airlock__Node__V1__Heartbeat *hb = airlock__node__v1__heartbeat__unpack(
        NULL, (size_t)natsMsg_GetDataLength(msg), (const uint8_t *)natsMsg_GetData(msg));
    char node[256];
    if (hb && len > pre + suf && len - pre - suf < sizeof(node)) {
        snprintf(node, sizeof(node), "%.*s", (int)(len - pre - suf), subject + pre);
        node_liveness_heard(&s->liveness, node, hb->started_unix_ms, clock_monotonic_ms());
    }
    if (hb)
        airlock__node__v1__heartbeat__free_unpacked(hb, NULL);
    natsMsg_Destroy(msg);
}

int node_heard_follow(struct scheduler *s, char *err, size_t errlen)
{
    natsStatus st = natsConnection_Subscribe(&s->heard, s->nc, HEARTBEAT_PREFIX "*" HEARTBEAT_SUFFIX,
                                             on_heartbeat, s);
    if (st != NATS_OK) {
        snprintf(err, errlen, "nats: subscribe to heartbeats: %s", natsStatus_GetText(st));
        return -1;
    }
    return 0;
}
