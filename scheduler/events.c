#include "events.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

void events_publish(natsConnection *nc, const struct sandbox_event *ev)
{
    char subject[128];
    snprintf(subject, sizeof(subject), EVENTS_SUBJECT_PREFIX "%s", ev->project_id);
    json_t *j = json_pack("{s:s,s:s,s:s?,s:s}", "id", ev->sandbox_id, "state", ev->state,
                          "previous", ev->previous, "at", ev->at);
    char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    natsStatus st = text ? natsConnection_PublishString(nc, subject, text) : NATS_NO_MEMORY;
    if (st != NATS_OK)
        log_warn("event not published", "sandbox=%s state=%s error=\"%s\"", ev->sandbox_id,
                 ev->state, natsStatus_GetText(st));
    free(text);
}

void events_publish_key_revoked(natsConnection *nc, const char *key_id)
{
    natsStatus st = natsConnection_PublishString(nc, KEY_REVOKED_SUBJECT, key_id);
    if (st != NATS_OK)
        log_warn("key revocation not published", "key=%s error=\"%s\"", key_id,
                 natsStatus_GetText(st));
}
