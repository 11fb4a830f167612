/* The NATS subject of a project's lifecycle events: the scheduler publishes
 * on it (scheduler/events.c), the gateway subscribes per /v1/events client
 * (gateway/events_feed.c). Project ids are [a-z0-9_], valid tokens. */
#ifndef AIRLOCK_EVENTS_SUBJECT_H
#define AIRLOCK_EVENTS_SUBJECT_H

#define EVENTS_SUBJECT_PREFIX "airlock.events."

/* The id of each API key the scheduler revokes (plain text), after the
 * revocation is committed: every gateway drops it from its key cache
 * (gateway/key_revocations.c). */
#define KEY_REVOKED_SUBJECT "airlock.keys.revoked"

#endif
