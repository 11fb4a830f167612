/* Events.Subscribe: the caller's project's lifecycle events, from the same
 * per-client NATS subscription as REST's /v1/events (events_feed.h). */
#include <stdatomic.h>

#include "events_feed.h"
#include "grpc_call.h"

/* How often a quiet stream looks at the call (client gone, gateway
 * stopping). */
#define EVENTS_POLL_MS 500

static const char *field(json_t *event, const char *name)
{
    const char *s = json_string_value(json_object_get(event, name));
    return s ? s : "";
}

void grpc_subscribe_events(struct grpc_request *r)
{
    natsSubscription *sub;
    natsStatus st = gw_events_subscribe(r->gw, r->project_id, &sub);
    if (st != NATS_OK) {
        grpc_fail(r, GRPC_STATUS_UNAVAILABLE, "the event bus (NATS) is not reachable: %s",
                  natsStatus_GetText(st));
        return;
    }
    /* Sent at once, so the client knows nothing is missed from here on. */
    Airlock__V1__Subscribed subscribed = AIRLOCK__V1__SUBSCRIBED__INIT;
    Airlock__V1__Event hello = AIRLOCK__V1__EVENT__INIT;
    hello.event_case = AIRLOCK__V1__EVENT__EVENT_SUBSCRIBED;
    hello.subscribed = &subscribed;
    bool sent = grpc_send(r, &hello.base) == 0;
    while (sent && !rpc_call_cancelled(r->call) && !atomic_load(&r->gw->stopping)) {
        json_t *event;
        int got = gw_events_next(sub, EVENTS_POLL_MS, &event, &st);
        if (got < 0)
            break;
        if (got == 0)
            continue;
        Airlock__V1__SandboxEvent ev = AIRLOCK__V1__SANDBOX_EVENT__INIT;
        ev.id = (char *)field(event, "id");
        ev.state = (char *)field(event, "state");
        ev.previous = (char *)field(event, "previous");
        ev.at = (char *)field(event, "at");
        Airlock__V1__Event out = AIRLOCK__V1__EVENT__INIT;
        out.event_case = AIRLOCK__V1__EVENT__EVENT_SANDBOX;
        out.sandbox = &ev;
        sent = grpc_send(r, &out.base) == 0;
        json_decref(event);
    }
    natsSubscription_Destroy(sub);
    if (!sent || rpc_call_cancelled(r->call))
        grpc_fail(r, GRPC_STATUS_CANCELLED, "the client went away");
    else if (atomic_load(&r->gw->stopping))
        grpc_reply(r, NULL); /* the gateway is stopping: end the stream cleanly */
    else
        grpc_fail(r, GRPC_STATUS_UNAVAILABLE, "the event bus (NATS) failed: %s",
                  natsStatus_GetText(st));
}
