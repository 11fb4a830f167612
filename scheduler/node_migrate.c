#include "node_migrate.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "checkpoint_store.h"
#include "clock.h"
#include "log.h"
#include "nodes.h"
#include "sandbox_store.h"
#include "scheduler_service.h"

#define MIGRATE_ACTOR "scheduler (drain)"
/* The memory copy of a large, busy guest takes a while under TCG. */
#define MIGRATE_SEND_TIMEOUT_MS 300000

/* A sandbox whose migration failed is not tried again for a while: each
 * try passes migrating and back (two events), and what failed (no room
 * elsewhere, a node without a store) rarely mends at once. */
#define RETRY_AFTER_MS 60000
#define RECENT_FAILURES 64
static struct {
    char id[65];
    int64_t until_ms;
} recent_failures[RECENT_FAILURES];
static unsigned next_failure;
static pthread_mutex_t recent_lock = PTHREAD_MUTEX_INITIALIZER;

static bool failed_recently(const char *id)
{
    int64_t now = clock_monotonic_ms();
    bool found = false;
    pthread_mutex_lock(&recent_lock);
    for (unsigned i = 0; i < RECENT_FAILURES && !found; i++)
        found = recent_failures[i].until_ms > now && strcmp(recent_failures[i].id, id) == 0;
    pthread_mutex_unlock(&recent_lock);
    return found;
}

static void note_failure(const char *id)
{
    pthread_mutex_lock(&recent_lock);
    unsigned i = next_failure++ % RECENT_FAILURES;
    snprintf(recent_failures[i].id, sizeof(recent_failures[i].id), "%s", id);
    recent_failures[i].until_ms = clock_monotonic_ms() + RETRY_AFTER_MS;
    pthread_mutex_unlock(&recent_lock);
}

/* One step on a node: 0 with *reply, or < 0 (nodes_call's) with e
 * naming the step. */
static int step(struct scheduler *s, const char *node, node_op op, const ProtobufCMessage *req,
                int timeout_ms, Airlock__Node__V1__NodeReply **reply, struct airlock_error *e)
{
    *reply = NULL;
    int rc = nodes_call(s, node, op, req, timeout_ms, reply, e);
    if (rc < 0)
        airlock_error_prefix(e, "%s on node %s: ", node_op_name(op), node);
    return rc;
}

static void drop_reply(Airlock__Node__V1__NodeReply **reply)
{
    if (*reply)
        protobuf_c_message_free_unpacked(&(*reply)->base, NULL);
    *reply = NULL;
}

/* Gives up on node's side: the source's guest runs on, the target's
 * copy goes (a node that does not answer settles it when reconciled). */
static void abort_on(struct scheduler *s, const char *node, const char *id)
{
    Airlock__Vmhost__V1__SandboxRef ref = AIRLOCK__VMHOST__V1__SANDBOX_REF__INIT;
    ref.id = (char *)id;
    Airlock__Node__V1__NodeReply *reply;
    struct airlock_error e;
    if (step(s, node, NODE_OP(MIGRATE_ABORT), &ref.base, s->cfg.node_timeout_ms, &reply, &e) < 0)
        log_warn("drain: a migration's abort failed: reconciliation settles it",
                 "sandbox=%s node=%s error=\"%s\"", id, node, e.message);
    drop_reply(&reply);
}

int node_migrate_running(struct scheduler *s, const char *node_id, const char *id)
{
    int64_t started = clock_monotonic_ms();
    struct transition_note note = { MIGRATE_ACTOR, "its node is draining: moving live", "" };
    struct airlock_error e;
    char to[128] = "";
    if (failed_recently(id))
        return -1;
    /* Checkpoints live on the node that made them (a full one also in the
     * store, for a lost node): moving the sandbox would orphan them. */
    PGresult *cps;
    if (store_checkpoint_list(&s->db, id, &cps, &e) < 0)
        return -1;
    int n_cps = PQntuples(cps);
    PQclear(cps);
    if (n_cps > 0) {
        note_failure(id);
        log_warn("drain: a running sandbox with checkpoints stays (they live on its node)",
                 "sandbox=%s node=%s checkpoints=%d", id, node_id, n_cps);
        return -1;
    }
    if (nodes_place_elsewhere(s, id, node_id, false, "migrate", to, sizeof(to), &e) < 0) {
        note_failure(id);
        log_warn("drain: a running sandbox has nowhere to go", "sandbox=%s node=%s error=\"%s\"",
                 id, node_id, e.message);
        return -1;
    }
    if (service_transition(s, id, SANDBOX_RUNNING, SANDBOX_MIGRATING, &note, &e) < 0)
        return -1; /* it changed meanwhile: the next drain step sees it */
    Airlock__Vmhost__V1__SandboxRef ref = AIRLOCK__VMHOST__V1__SANDBOX_REF__INIT;
    ref.id = (char *)id;
    Airlock__Vmhost__V1__Migration mig = AIRLOCK__VMHOST__V1__MIGRATION__INIT;
    mig.id = (char *)id;
    Airlock__Node__V1__NodeReply *begun = NULL, *prepared = NULL, *sent = NULL, *reply = NULL;
    bool source_held = false, target_held = false;
    if (step(s, node_id, NODE_OP(MIGRATE_BEGIN), &ref.base, s->cfg.node_timeout_ms, &begun,
             &e) < 0 || !begun->migration)
        goto fail;
    source_held = true;
    mig.store_object = begun->migration->store_object;
    mig.peer_node = (char *)node_id;
    if (step(s, to, NODE_OP(MIGRATE_PREPARE), &mig.base, s->cfg.node_timeout_ms, &prepared,
             &e) < 0 || !prepared->migration)
        goto fail;
    target_held = true;
    mig.store_object = "";
    mig.peer_node = to;
    mig.address = prepared->migration->address;
    mig.token = prepared->migration->token;
    int timeout = s->cfg.node_timeout_ms > MIGRATE_SEND_TIMEOUT_MS ? s->cfg.node_timeout_ms
                                                                    : MIGRATE_SEND_TIMEOUT_MS;
    int sent_rc = step(s, node_id, NODE_OP(MIGRATE_SEND), &mig.base, timeout, &sent, &e);
    if (sent_rc == NODES_UNSENT)
        source_held = false; /* the source took it back itself */
    if (sent_rc < 0 || !sent->migration)
        goto fail;
    int64_t stopped_ms = sent->migration->stopped_ms;
    if (step(s, to, NODE_OP(MIGRATE_FINISH), &ref.base, s->cfg.node_timeout_ms, &reply, &e) < 0)
        goto fail;
    /* It runs on the target now: the row follows, then the source's
     * stopped copy goes. */
    target_held = false;
    if (store_sandbox_set_stored(&s->db, id, to, "", &e) < 0 ||
        service_transition(s, id, SANDBOX_MIGRATING, SANDBOX_RUNNING, &note, &e) < 0)
        log_error("drain: a migrated sandbox's row not updated: reconciliation settles it",
                  "sandbox=%s to=%s error=\"%s\"", id, to, e.message);
    if (nodes_delete_sandbox(s, node_id, id, NULL, true, &e) < 0)
        log_warn("drain: the source keeps a stopped copy until reconciliation",
                 "sandbox=%s node=%s error=\"%s\"", id, node_id, e.message);
    log_info("drain: running sandbox migrated", "sandbox=%s from=%s to=%s ms=%lld stopped_ms=%lld",
             id, node_id, to, (long long)(clock_monotonic_ms() - started), (long long)stopped_ms);
    drop_reply(&begun);
    drop_reply(&prepared);
    drop_reply(&sent);
    drop_reply(&reply);
    return 0;
fail:
    note_failure(id);
    log_warn("drain: a running sandbox did not migrate; it runs where it was",
             "sandbox=%s node=%s to=%s error=\"%s\"", id, node_id, to[0] ? to : "(none)",
             e.message);
    if (target_held)
        abort_on(s, to, id);
    if (source_held)
        abort_on(s, node_id, id);
    note.why = "its live migration failed: it runs where it was";
    if (service_transition(s, id, SANDBOX_MIGRATING, SANDBOX_RUNNING, &note, &e) < 0)
        log_error("drain: a sandbox stays migrating until reconciliation", "sandbox=%s error=\"%s\"",
                  id, e.message);
    drop_reply(&begun);
    drop_reply(&prepared);
    drop_reply(&sent);
    drop_reply(&reply);
    return -1;
}
