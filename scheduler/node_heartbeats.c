#include "node_heartbeats.h"

#include <stdio.h>
#include <string.h>

#define PREFIX "airlock.node."
#define SUFFIX ".heartbeat"

static void on_heartbeat(natsConnection *nc, natsSubscription *sub, natsMsg *msg, void *closure)
{
    (void)nc;
    (void)sub;
    struct node_heartbeats *f = closure;
    const char *subject = natsMsg_GetSubject(msg);
    size_t len = strlen(subject), pre = strlen(PREFIX), suf = strlen(SUFFIX);
    Airlock__Node__V1__Heartbeat *hb = airlock__node__v1__heartbeat__unpack(
        NULL, (size_t)natsMsg_GetDataLength(msg), (const uint8_t *)natsMsg_GetData(msg));
    char node[256];
    if (hb && len > pre + suf && len - pre - suf < sizeof(node)) {
        snprintf(node, sizeof(node), "%.*s", (int)(len - pre - suf), subject + pre);
        f->fn(f->s, node, hb);
    }
    if (hb)
        airlock__node__v1__heartbeat__free_unpacked(hb, NULL);
    natsMsg_Destroy(msg);
}

int node_heartbeats_follow(struct node_heartbeats *f, struct scheduler *s, natsConnection *nc,
                           node_heartbeat_fn *fn, char *err, size_t errlen)
{
    f->s = s;
    f->fn = fn;
    natsStatus st = natsConnection_Subscribe(&f->sub, nc, PREFIX "*" SUFFIX, on_heartbeat, f);
    if (st != NATS_OK) {
        snprintf(err, errlen, "nats: subscribe to heartbeats: %s", natsStatus_GetText(st));
        return -1;
    }
    return 0;
}
