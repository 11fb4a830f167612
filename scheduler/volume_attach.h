/* A sandbox's volumes at its create (CreateSandboxRequest.volumes,
 * docs/volumes.md "API"): checked (volume_spec.h), resolved to the
 * project's volumes and snapshots, the node they put the sandbox on, and
 * the record the sandbox row keeps (sandboxes.volumes) from which the
 * node's VolumeAttachments are made, also on a retry. The claims
 * themselves are rows of sandbox_volumes that store_sandbox_insert writes
 * with the sandbox, under the one-holder constraint. */
#ifndef AIRLOCK_SCHEDULER_VOLUME_ATTACH_H
#define AIRLOCK_SCHEDULER_VOLUME_ATTACH_H

#include <jansson.h>

#include "airlock_error.h"
#include "scheduler.pb-c.h"
#include "vmhost.pb-c.h"
#include "volume_spec.h"

struct scheduler;

struct volume_attach {
    /* sandboxes.volumes' text: [{"slot","name","path","read_only",
     * "volume_id","snapshot_id","size_mb"}], "[]" for none (malloc'd). */
    char *json;
    char node[128];    /* the node the volumes are on; "" = any */
    char why_node[96]; /* "volume repo": what puts it there, for messages */
};

/* The request's volumes resolved into *out (volume_attach_free it,
 * whatever the answer); invalid naming the field, not found naming the
 * volume or snapshot, state for volumes on different nodes or a snapshot
 * taken before its volume was first used (it is empty). Holders are not
 * asked: the insert's constraint decides that, so that two creates
 * cannot both pass. */
int volume_attach_resolve(struct scheduler *s,
                          const Airlock__Scheduler__V1__CreateSandboxRequest *req,
                          struct volume_attach *out, struct airlock_error *e);
void volume_attach_free(struct volume_attach *a);

/* Whether a failed insert's message is a claim refused (a volume held
 * already, or deleted meanwhile). */
bool volume_attach_claim_failed(const struct airlock_error *e);
/* Why the claims of req's volumes were refused, into e: state naming the
 * volume and the sandbox holding it, or what resolve finds now; aborted
 * (retry) when nothing is wrong any more. Returns -1. */
int volume_attach_refused(struct scheduler *s,
                          const Airlock__Scheduler__V1__CreateSandboxRequest *req,
                          struct airlock_error *e);

/* A sandbox's volumes column as the node's attachments (by slot);
 * strings point into what this holds. */
struct volume_node_list {
    json_t *json;
    Airlock__Vmhost__V1__VolumeAttachment items[VOLUME_MOUNTS_MAX];
    Airlock__Vmhost__V1__VolumeAttachment *ptrs[VOLUME_MOUNTS_MAX];
    size_t n;
};
/* internal when the column is not what volume_attach_resolve wrote. */
int volume_node_list(const char *column, struct volume_node_list *out, struct airlock_error *e);
void volume_node_list_free(struct volume_node_list *l);

#endif
