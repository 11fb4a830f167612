/* A fork's volumes (docs/api.md "Volumes"): each fork gets its own clone
 * of each read-write volume of its parent, made by the node with the fork
 * (vmhost.proto ForkSandboxRequest.volume_ids: fork i's clone of the
 * parent's k-th read-write attachment is ids[i * rw + k]) and recorded
 * with the forks as the project's volumes "<volume>-<fork id>"
 * (volume_fork_name); read-only snapshot attachments are attached to the
 * forks again. */
#ifndef AIRLOCK_SCHEDULER_FORK_VOLUMES_H
#define AIRLOCK_SCHEDULER_FORK_VOLUMES_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "airlock_error.h"
#include "db.h"
#include "quota.h"

struct fork_volumes {
    json_t *parent;   /* the parent's volumes column */
    size_t rw;        /* its read-write attachments */
    int64_t rw_mb;    /* their sizes now, together */
    char **ids;       /* count * rw new volume ids (UUIDs) */
    size_t n_ids;
};

/* The plan for count forks of a parent whose volumes column is column:
 * new ids drawn, the sizes read. */
int fork_volumes_plan(struct db *db, const char *column, unsigned count,
                      struct fork_volumes *out, struct airlock_error *e);
void fork_volumes_free(struct fork_volumes *f);

/* What count forks' volumes take of the quotas, added to request. */
void fork_volumes_ask(const struct fork_volumes *f, unsigned count, struct quota_values *request);

/* The records of the forks named fork_ids (n of them, in the node's
 * order): *columns, a JSON array of each fork's volumes column, and
 * *volumes, a JSON array of the new volume rows {"id","name","src"}
 * (both malloc'd). */
int fork_volumes_records(const struct fork_volumes *f, const char *const *fork_ids, size_t n,
                         char **columns, char **volumes, struct airlock_error *e);

#endif
