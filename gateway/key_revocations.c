#include "key_revocations.h"

#include <stdio.h>

#include "events_subject.h"
#include "log.h"

#define KEY_REVOCATIONS_FLUSH_TIMEOUT_MS 5000

static void on_revoked(natsConnection *nc, natsSubscription *sub, natsMsg *msg, void *closure)
{
    (void)nc;
    (void)sub;
    struct key_cache *c = closure;
    char key_id[sizeof(((struct key_principal *)0)->key_id)];
    int len = natsMsg_GetDataLength(msg);
    if (len > 0 && (size_t)len < sizeof(key_id)) {
        snprintf(key_id, sizeof(key_id), "%.*s", len, natsMsg_GetData(msg));
        key_cache_drop_key(c, key_id);
    } else {
        key_cache_flush(c); /* not a key id: forgetting everything is always sound */
    }
    natsMsg_Destroy(msg);
}

static void on_connection_change(natsConnection *nc, void *closure)
{
    (void)nc;
    key_cache_flush(closure);
    log_info("api key cache flushed", "reason=\"nats connection changed\"");
}

natsStatus key_revocations_options(natsOptions *opts, struct key_cache *c)
{
    natsStatus st = natsOptions_SetDisconnectedCB(opts, on_connection_change, c);
    if (st == NATS_OK)
        st = natsOptions_SetReconnectedCB(opts, on_connection_change, c);
    return st;
}

natsStatus key_revocations_subscribe(natsConnection *nc, struct key_cache *c,
                                     natsSubscription **sub)
{
    natsStatus st = natsConnection_Subscribe(sub, nc, KEY_REVOKED_SUBJECT, on_revoked, c);
    /* Connected already: make sure the server has the subscription before
     * the first request is served (else it is sent on connect). */
    if (st == NATS_OK && key_revocations_live(nc))
        natsConnection_FlushTimeout(nc, KEY_REVOCATIONS_FLUSH_TIMEOUT_MS);
    return st;
}

bool key_revocations_live(natsConnection *nc)
{
    return natsConnection_Status(nc) == NATS_CONN_STATUS_CONNECTED;
}
