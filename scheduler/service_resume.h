/* Resuming a suspended sandbox whose suspend is in the shared snapshot
 * store (vmhost --snapshot-store, docs/snapshot-store.md): on its own node
 * while that node lives, takes work (not draining) and has room, else on
 * another live node with room
 * (NODES_PLACEMENT: the template there, the most memory left), which takes
 * the suspend from the store. The row then names the new node, and the old
 * one is told to drop its copy (a gone node's is deleted by reconciliation
 * when it returns). */
#ifndef AIRLOCK_SCHEDULER_SERVICE_RESUME_H
#define AIRLOCK_SCHEDULER_SERVICE_RESUME_H

#include <stddef.h>

#include "airlock_error.h"
#include "scheduler.h"

/* The node's part of resuming sandbox id (suspended, its suspend in the
 * store as `stored`) whose row names node (which may be ""): node gets
 * where it runs now, and the row says so, without the store object. The
 * caller commits resuming → running. CAPACITY when no node has room,
 * naming why its own could not; NODES_UNANSWERED (nodes.h) when the node
 * asked got the request and did not answer: it may have resumed it. */
int service_resume_stored(struct scheduler *s, const char *id, const char *stored, char *node,
                          size_t nodelen, struct airlock_error *e);

/* The node's part of restoring lost sandbox id (its node silent past
 * --node-dead-after-s) from checkpoint `checkpoint`, whose set in the
 * shared store is `set`, on another live node with room: node (the lost
 * one) gets the new one, and the row says so. The caller commits
 * resuming → running (or back to lost). CAPACITY naming the sandbox when
 * no other live node has room. The lost node's copy, if it ever returns,
 * goes by reconciliation (a row settled on another node). */
int service_restore_lost(struct scheduler *s, const char *id, const char *checkpoint,
                         const char *set, char *node, size_t nodelen, struct airlock_error *e);

#endif
