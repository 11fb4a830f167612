#include "node_drain.h"

#include "log.h"
#include "node_store.h"

int drain_step(struct scheduler *s, const char *node_id, struct airlock_error *e)
{
    /* Moving the sandboxes off the node goes here, before drained-ness is
     * judged: live migration of the running ones to a node taking work,
     * the paused and suspended ones through the shared snapshot store. Not
     * built yet (docs/STATUS.md): until then a draining node stays draining
     * until its sandboxes are deleted, or it is undrained. */
    struct node_msgs read;
    int rc = store_nodes_read(&s->db, node_id, s->cfg.node_dead_after_s, &read, e);
    if (rc == 0) {
        const struct node_msg *n = &read.nodes[0];
        enum node_drain to = node_drain_next(NODE_OP_STEP, n->drain, n->holds);
        if (to != n->drain) {
            rc = store_node_drain_set(&s->db, node_id, n->drain, to, NULL, false, 0, e);
            if (rc == 0)
                log_info("node drain state", "node=%s from=%s to=%s actor=scheduler", node_id,
                         node_drain_name(n->drain), node_drain_name(to));
        }
    }
    node_msgs_free(&read);
    return rc;
}
