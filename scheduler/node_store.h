/* The nodes table as the admin sees it (airlock/v1/nodes.proto) and its
 * drain state (migration 8, node_state.h). A function that fails returns
 * -1 with e set: not found naming an unknown node, unavailable when the
 * database is. */
#ifndef AIRLOCK_SCHEDULER_NODE_STORE_H
#define AIRLOCK_SCHEDULER_NODE_STORE_H

#include <libpq-fe.h>

#include "airlock/v1/nodes.pb-c.h"
#include "airlock_error.h"
#include "db.h"
#include "node_state.h"
#include "sandbox_state.h"

/* One node as nodes.proto's Node: msg points into the rest and into the
 * result it was read from. */
struct node_msg {
    Airlock__V1__Node msg;
    Airlock__V1__NodeCapacity capacity;
    Airlock__V1__Node__SandboxesEntry counts[SANDBOX_STATE_COUNT];
    Airlock__V1__Node__SandboxesEntry *count_ptrs[SANDBOX_STATE_COUNT];
    char *templates_text;          /* owned: the templates, split in place */
    char **templates;              /* owned */
    enum node_drain drain;
    bool holds;                    /* a sandbox holds it (node_held_by) */
};

/* Every node (node_id NULL) or node_id, by id, with live judged by
 * dead_after_s; *res: the rows the messages point into (PQclear it after
 * node_msgs_free). node_id unknown: not found. */
struct node_msgs {
    struct node_msg *nodes;
    Airlock__V1__Node **ptrs;      /* what ListNodesResponse.nodes takes */
    size_t n;
    PGresult *res;
};
int store_nodes_read(struct db *db, const char *node_id, int dead_after_s, struct node_msgs *out,
                     struct airlock_error *e);
void node_msgs_free(struct node_msgs *m);

/* Moves node_id from `from` to `to` (actor NULL: a step of the scheduler's,
 * drain_changed_* kept). keep_a_taker: refuse (state, naming the node as
 * the last one that could take work) when node_id is live and no other
 * live node is active. Aborted when the node is not in `from` any more (a
 * concurrent change). */
int store_node_drain_set(struct db *db, const char *node_id, enum node_drain from,
                         enum node_drain to, const char *actor, bool keep_a_taker,
                         int dead_after_s, struct airlock_error *e);

/* 0 when node_id takes new work (active), else state naming the node, its
 * drain state and what (e.g. "no sandbox is resumed there"). A node the
 * table does not have is left to the caller's node call. */
int store_node_takes_work(struct db *db, const char *node_id, const char *what,
                          struct airlock_error *e);

#endif
