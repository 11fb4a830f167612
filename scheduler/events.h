/* Lifecycle events: every committed sandbox transition is published on
 * NATS subject airlock.events.<project id> as JSON
 * {"id":…,"state":…,"previous":…|null,"at":"RFC3339"}, after its row is
 * committed. The gateway relays a project's subject to that project's
 * /v1/events clients. Core NATS: at most once, no replay. */
#ifndef AIRLOCK_SCHEDULER_EVENTS_H
#define AIRLOCK_SCHEDULER_EVENTS_H

#include <nats/nats.h>

#include "events_subject.h"
#include "sandbox_store.h"

/* Best effort: a failure is logged, never returned (the transition is
 * already committed). */
void events_publish(natsConnection *nc, const struct sandbox_event *ev);

/* Tells every gateway that key_id is revoked (KEY_REVOKED_SUBJECT), once
 * that is committed; best effort like events_publish (a gateway that
 * misses it is disconnected, so its key cache is flushed and bypassed). */
void events_publish_key_revoked(natsConnection *nc, const char *key_id);

#endif
