/* Checkpoints outside a caller's request: what CreateCheckpoint records
 * (service_checkpoint.c), shared with the periodic checkpoints of
 * controller_checkpoint.c. */
#ifndef AIRLOCK_SCHEDULER_SERVICE_CHECKPOINT_H
#define AIRLOCK_SCHEDULER_SERVICE_CHECKPOINT_H

#include "airlock_error.h"
#include "quota_store.h"
#include "scheduler.h"
#include "vmhost.pb-c.h"

/* Records checkpoint c that node made (kind "full" or "disk"; its set in
 * the shared store, if any) if the project's quotas admit ask
 * (store_checkpoint_ask's, or less for one that replaces another); one
 * they refuse (quota) is deleted on the node again. */
int service_checkpoint_record(struct scheduler *s, const struct quota_ask *ask, const char *node,
                              const Airlock__Vmhost__V1__Checkpoint *c, const char *kind,
                              struct airlock_error *e);

/* Deletes checkpoint name of sandbox id on node (and its set in the
 * store); nodes_call's result. The record is the caller's. */
int service_checkpoint_drop_on_node(struct scheduler *s, const char *node, const char *id,
                                    const char *name, struct airlock_error *e);

#endif
