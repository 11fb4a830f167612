#include "events_feed.h"

#include <stdio.h>

#include "clock.h"
#include "events_subject.h"

#define EVENTS_SUBSCRIBE_TIMEOUT_MS 5000

natsStatus gw_events_subscribe(struct gateway *gw, const char *project_id, natsSubscription **sub)
{
    char subject[128];
    snprintf(subject, sizeof(subject), EVENTS_SUBJECT_PREFIX "%s", project_id);
    *sub = NULL;
    natsStatus st = natsConnection_SubscribeSync(sub, gw->nats, subject);
    /* The flush round trip means the server has the subscription. */
    if (st == NATS_OK)
        st = natsConnection_FlushTimeout(gw->nats, EVENTS_SUBSCRIBE_TIMEOUT_MS);
    if (st != NATS_OK) {
        natsSubscription_Destroy(*sub);
        *sub = NULL;
    }
    return st;
}

int gw_events_next(natsSubscription *sub, int timeout_ms, json_t **event, natsStatus *st)
{
    int64_t deadline = clock_monotonic_ms() + timeout_ms;
    *event = NULL;
    for (int64_t left = timeout_ms; left > 0; left = deadline - clock_monotonic_ms()) {
        natsMsg *msg = NULL;
        *st = natsSubscription_NextMsg(&msg, sub, left);
        if (*st == NATS_TIMEOUT)
            return 0;
        if (*st != NATS_OK)
            return -1;
        *event = json_loadb(natsMsg_GetData(msg), (size_t)natsMsg_GetDataLength(msg), 0, NULL);
        natsMsg_Destroy(msg);
        if (*event)
            return 1;
    }
    *st = NATS_TIMEOUT;
    return 0;
}
