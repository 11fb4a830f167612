#include "service_resume.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "checkpoint_store.h"
#include "log.h"
#include "node_store.h"
#include "nodes.h"
#include "sandbox_store.h"

/* ResumeSandbox on node naming the store object: a node that holds the
 * sandbox resumes its own copy, another takes it from the store.
 * nodes_call's result (NODES_UNANSWERED: the node may have done it). */
static int resume_on(struct scheduler *s, const char *node, const char *id, const char *stored,
                     struct airlock_error *e)
{
    Airlock__Vmhost__V1__SandboxRef req = AIRLOCK__VMHOST__V1__SANDBOX_REF__INIT;
    req.id = (char *)id;
    req.store_object = (char *)stored;
    Airlock__Node__V1__NodeReply *reply = NULL;
    int rc = nodes_call(s, node, NODE_OP(RESUME), &req.base, s->cfg.node_timeout_ms, &reply, e);
    if (reply)
        protobuf_c_message_free_unpacked(&reply->base, NULL);
    return rc;
}

/* The old node's copy goes; if it cannot be told now, reconciliation
 * deletes it once the node answers again (a row of another node's). The
 * set it names was the new node's to remove. */
static void drop_old_copy(struct scheduler *s, const char *node, const char *id,
                          const char *stored)
{
    struct airlock_error e;
    if (nodes_delete_sandbox(s, node, id, stored, true, &e) < 0)
        log_warn("the old node keeps a copy of a moved sandbox until reconciliation",
                 "sandbox=%s node=%s error=\"%s\"", id, node, e.message);
}

/* Checkpoints live on the node that made them: a sandbox with some does
 * not move (it would lose them) until they go to the store too. */
static int checkpoints_on(struct scheduler *s, const char *id, struct airlock_error *e)
{
    PGresult *rows;
    if (store_checkpoint_list(&s->db, id, &rows, e) < 0)
        return -1;
    int n = PQntuples(rows);
    PQclear(rows);
    return n;
}

int service_resume_stored(struct scheduler *s, const char *id, const char *stored, char *node,
                          size_t nodelen, struct airlock_error *e)
{
    char why[AIRLOCK_ERROR_MESSAGE_SIZE / 2] = "it was never placed";
    char since[64];
    struct airlock_error gone_e, drain_e;
    bool alive = *node && !nodes_gone(s, node, since, sizeof(since), &gone_e);
    bool own = alive && store_node_takes_work(&s->db, node, "it resumes elsewhere", &drain_e) == 0;
    if (own) {
        int rc = resume_on(s, node, id, stored, e);
        if (rc == 0)
            return store_sandbox_set_stored(&s->db, id, node, "", e);
        /* Only a clean no moves it: a node that got the request and did
         * not answer may be resuming it (the row stays resuming for
         * reconciliation). */
        if (rc == NODES_UNANSWERED ||
            (e->class != AIRLOCK_ERR_CAPACITY && e->class != AIRLOCK_ERR_UNAVAILABLE))
            return rc;
        snprintf(why, sizeof(why), "its node %s %s: %.1500s", node,
                 e->class == AIRLOCK_ERR_CAPACITY ? "has no room" : "does not answer", e->message);
    } else if (alive) {
        snprintf(why, sizeof(why), "%.1500s", drain_e.message);
    } else if (*node) {
        snprintf(why, sizeof(why), "its node %s is gone (no heartbeat since %s)", node,
                 since[0] ? since : "ever");
    }
    int n = checkpoints_on(s, id, e);
    if (n < 0)
        return -1;
    if (n > 0)
        return airlock_error_set(e, AIRLOCK_ERR_STATE,
                                 "sandbox %s cannot resume: %s, and its %d checkpoint(s) live "
                                 "only there (checkpoints do not move to another node yet)",
                                 id, why, n);
    char other[128];
    if (nodes_place_elsewhere(s, id, node, true, "resume", other, sizeof(other), e) < 0) {
        airlock_error_prefix(e, "sandbox %s cannot resume: %s; ", id, why);
        return -1;
    }
    int rc = resume_on(s, other, id, stored, e);
    if (rc < 0) {
        airlock_error_prefix(e, "sandbox %s (%s) did not resume on node %s: ", id, why, other);
        return rc;
    }
    log_info("sandbox resumed on another node", "sandbox=%s from=%s to=%s why=\"%s\"", id, node,
             other, why);
    if (store_sandbox_set_stored(&s->db, id, other, "", e) < 0)
        return -1;
    if (alive)
        drop_old_copy(s, node, id, stored);
    snprintf(node, nodelen, "%s", other);
    return 0;
}

int service_restore_lost(struct scheduler *s, const char *id, const char *checkpoint,
                         const char *set, char *node, size_t nodelen, struct airlock_error *e)
{
    char other[128];
    if (nodes_place_elsewhere(s, id, node, true, "restore", other, sizeof(other), e) < 0) {
        airlock_error_prefix(e, "sandbox %s (lost with node %s) cannot be restored: ", id, node);
        return -1;
    }
    /* The node takes the checkpoint's set as a suspend of its own and
     * resumes it; the store keeps the set, as the checkpoint. */
    int rc = resume_on(s, other, id, set, e);
    if (rc < 0) {
        airlock_error_prefix(e, "sandbox %s (lost with node %s) was not restored from checkpoint "
                                "%s on node %s: ",
                             id, node, checkpoint, other);
        return rc;
    }
    log_info("lost sandbox restored on another node", "sandbox=%s from=%s to=%s checkpoint=%s",
             id, node, other, checkpoint);
    if (store_sandbox_set_stored(&s->db, id, other, "", e) < 0)
        return -1;
    snprintf(node, nodelen, "%s", other);
    return 0;
}
