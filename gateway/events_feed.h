/* A project's lifecycle events from NATS (airlock.events.<project>, one
 * message per transition the scheduler commits), for REST's /v1/events
 * and gRPC's Events.Subscribe alike. Each client has its own subscription,
 * so a key never sees another project's events. */
#ifndef AIRLOCK_GATEWAY_EVENTS_FEED_H
#define AIRLOCK_GATEWAY_EVENTS_FEED_H

#include <jansson.h>
#include <nats/nats.h>

#include "gateway.h"

/* Subscribes to project_id's events; when it returns NATS_OK the NATS
 * server has the subscription, so every event committed from then on is
 * delivered. */
natsStatus gw_events_subscribe(struct gateway *gw, const char *project_id, natsSubscription **sub);

/* Waits up to timeout_ms for the next event: 1 with *event
 * ({"id","state","previous","at"}, JSON as the scheduler published it), 0
 * when none came, -1 with *st when the subscription failed. Messages that
 * are not JSON are never relayed (skipped). */
int gw_events_next(natsSubscription *sub, int timeout_ms, json_t **event, natsStatus *st);

#endif
