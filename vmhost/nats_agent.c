#include "nats_agent.h"

#include <errno.h>
#include <nats/nats.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "log.h"
#include "nats_agent_ops.h"
#include "vmhost_service.h"

struct nats_agent {
    struct vmhost *vh;
    char node_id[128];
    char advertise[4200];
    natsConnection *nc;
    natsSubscription *work;
    natsSubscription *roll_call;

    pthread_mutex_t lock;
    pthread_cond_t changed;   /* stopping set, or a worker finished */
    bool stopping;
    unsigned workers;         /* request threads still running */
    pthread_t heartbeat_thread;
    bool heartbeat_started;
    int64_t started_unix_ms;  /* in every heartbeat: a new value = a restart */
};

struct work_item {
    struct nats_agent *agent;
    natsMsg *msg;
};

static void publish_heartbeat(struct nats_agent *a)
{
    Airlock__Node__V1__Heartbeat hb = AIRLOCK__NODE__V1__HEARTBEAT__INIT;
    hb.node_id = a->node_id;
    hb.vmhost_addr = a->advertise;
    hb.capacity = a->vh->cfg.max_sandboxes;
    pthread_mutex_lock(&a->vh->lock);
    hb.sandboxes = a->vh->n_sandboxes;
    pthread_mutex_unlock(&a->vh->lock);
    hb.free_memory_mb = node_mem_available_mb();
    struct node_budget_stats nb;
    node_budget_get(a->vh->budget, &nb);
    hb.vcpus_limit = nb.vcpus_limit;
    hb.vcpus_committed = nb.vcpus_committed;
    hb.memory_limit_mb = nb.memory_limit_mb;
    hb.memory_committed_mb = nb.memory_committed_mb;
    hb.pool_memory_bytes = atomic_load(&a->vh->pool_memory_mb) << 20;
    hb.pool_memory_limit_mb = a->vh->cfg.pool_memory_mib;
    hb.warm_pool_max = a->vh->cfg.warm_pool_max;
    hb.accel = (char *)vm_accel_name(a->vh->accel);
    hb.sent_unix_ms = clock_realtime_ms();
    hb.started_unix_ms = a->started_unix_ms;
    /* Every template version's pool; the default's exists whenever the
     * default template does (template_registry.c). */
    struct heartbeat_templates ht;
    heartbeat_templates_fill(a->vh, &hb, &ht);
    size_t len = airlock__node__v1__heartbeat__get_packed_size(&hb);
    uint8_t *buf = malloc(len ? len : 1);
    char subject[256];
    snprintf(subject, sizeof(subject), "airlock.node.%s.heartbeat", a->node_id);
    natsStatus st = buf ? NATS_OK : NATS_NO_MEMORY;
    if (buf)
        st = natsConnection_Publish(a->nc, subject, buf,
                                    (int)airlock__node__v1__heartbeat__pack(&hb, buf));
    if (st != NATS_OK)
        log_warn("heartbeat not sent", "node=%s error=\"%s\"", a->node_id, natsStatus_GetText(st));
    free(buf);
    heartbeat_templates_free(&ht);
}

static void *heartbeat_main(void *arg)
{
    struct nats_agent *a = arg;
    pthread_mutex_lock(&a->lock);
    while (!a->stopping) {
        pthread_mutex_unlock(&a->lock);
        publish_heartbeat(a);
        pthread_mutex_lock(&a->lock);
        struct timespec until = clock_deadline_after_ms(NATS_AGENT_HEARTBEAT_MS);
        while (!a->stopping && pthread_cond_timedwait(&a->changed, &a->lock, &until) != ETIMEDOUT)
            ;
    }
    pthread_mutex_unlock(&a->lock);
    return NULL;
}

/* The operations the agent serves itself; every other is ops.h's. */
static const struct node_stream_op {
    node_op node;
    node_op_fn serve;
} node_stream_ops[] = {
    { AIRLOCK__NODE__V1__NODE_OP__NODE_OP_TEMPLATE_BUILD, node_op_template_build },
};

/* The request unpacked as the operation's type, run, and its answer put
 * in a NodeReply; an error names the operation. */
static void serve_op(struct nats_agent *a, natsMsg *msg, const char *name,
                     const struct vmhost_op *op)
{
    ProtobufCMessage *req =
        protobuf_c_message_unpack(op->request, NULL, (size_t)natsMsg_GetDataLength(msg),
                                  (const uint8_t *)natsMsg_GetData(msg));
    struct op_answer answer = { 0 };
    struct airlock_error e = { 0 };
    struct node_budget_stats before, after;
    node_budget_get(a->vh->budget, &before);
    int rc = req ? op->run(a->vh, req, &answer, &e)
                 : airlock_error_set(&e, AIRLOCK_ERR_INVALID, "not a %s", op->request->short_name);
    /* What the VMs hold changed (a create, suspend, delete ...): the
     * scheduler places by the heartbeat's figures, so it hears them ahead
     * of the reply rather than up to a period later. */
    node_budget_get(a->vh->budget, &after);
    if (after.vcpus_committed != before.vcpus_committed ||
        after.memory_committed_mb != before.memory_committed_mb)
        publish_heartbeat(a);
    if (rc == 0) {
        node_reply_answer(a->nc, msg, op->answer, &answer);
    } else {
        airlock_error_prefix(&e, "%s: ", name);
        node_reply_error(a->nc, msg, &e);
    }
    op_answer_release(&answer);
    if (req)
        protobuf_c_message_free_unpacked(req, NULL);
}

static void serve(struct nats_agent *a, natsMsg *msg, const char *name)
{
    node_op node = node_op_from_name(name);
    const struct vmhost_op *op = vmhost_op_for_node(node);
    if (op) {
        serve_op(a, msg, name, op);
        return;
    }
    for (size_t i = 0; i < sizeof(node_stream_ops) / sizeof(*node_stream_ops); i++)
        if (node_stream_ops[i].node == node) {
            node_stream_ops[i].serve(a->vh, a->nc, msg);
            return;
        }
    char err[AIRLOCK_ERROR_MESSAGE_SIZE];
    snprintf(err, sizeof(err), "node %s has no operation %s", a->node_id, name);
    node_reply_status(a->nc, msg, GRPC_STATUS_UNIMPLEMENTED, err);
}

static void *worker_main(void *arg)
{
    struct work_item *w = arg;
    struct nats_agent *a = w->agent;
    const char *subject = natsMsg_GetSubject(w->msg);
    const char *op = strrchr(subject, '.') + 1;
    int64_t t0 = clock_monotonic_ms();
    serve(a, w->msg, op);
    log_debug("node request served", "op=%s ms=%lld", op, (long long)(clock_monotonic_ms() - t0));
    natsMsg_Destroy(w->msg);
    free(w);
    pthread_mutex_lock(&a->lock);
    a->workers--;
    pthread_cond_broadcast(&a->changed);
    pthread_mutex_unlock(&a->lock);
    return NULL;
}

/* A scheduler (re)started: tell it about this node now, not in 2 s. */
static void on_roll_call(natsConnection *nc, natsSubscription *sub, natsMsg *msg, void *closure)
{
    (void)nc;
    (void)sub;
    natsMsg_Destroy(msg);
    publish_heartbeat(closure);
}

/* One thread per request: a create boots a VM for seconds and must not
 * hold up a get or delete behind it. */
static void on_work(natsConnection *nc, natsSubscription *sub, natsMsg *msg, void *closure)
{
    (void)nc;
    (void)sub;
    struct nats_agent *a = closure;
    /* Our own heartbeat also matches the wildcard; work always has a reply. */
    if (!natsMsg_GetReply(msg)) {
        natsMsg_Destroy(msg);
        return;
    }
    struct work_item *w = malloc(sizeof(*w));
    pthread_attr_t attr;
    pthread_t t;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_mutex_lock(&a->lock);
    a->workers++;
    pthread_mutex_unlock(&a->lock);
    if (w) {
        w->agent = a;
        w->msg = msg;
    }
    if (!w || pthread_create(&t, &attr, worker_main, w) != 0) {
        node_reply_status(a->nc, msg, GRPC_STATUS_RESOURCE_EXHAUSTED,
                          "node cannot start a request thread");
        natsMsg_Destroy(msg);
        free(w);
        pthread_mutex_lock(&a->lock);
        a->workers--;
        pthread_mutex_unlock(&a->lock);
    }
    pthread_attr_destroy(&attr);
}

static natsStatus agent_connect(struct nats_agent *a, const char *url,
                                const struct nats_credentials *creds)
{
    natsOptions *opts = NULL;
    char name[200];
    snprintf(name, sizeof(name), "airlock-vmhost/%s", a->node_id);
    natsStatus st = natsOptions_Create(&opts);
    if (st == NATS_OK)
        st = natsOptions_SetURL(opts, url);
    if (st == NATS_OK)
        st = natsOptions_SetName(opts, name);
    if (st == NATS_OK)
        st = nats_credentials_apply(opts, creds);
    /* Replies go out at once instead of waiting for the flusher thread. */
    if (st == NATS_OK)
        st = natsOptions_SetSendAsap(opts, true);
    if (st == NATS_OK)
        st = natsOptions_SetMaxReconnect(opts, -1);
    if (st == NATS_OK)
        st = natsConnection_Connect(&a->nc, opts);
    natsOptions_Destroy(opts);
    return st;
}

struct nats_agent *nats_agent_start(struct vmhost *vh, const char *url,
                                    const struct nats_credentials *creds, const char *node_id,
                                    const char *advertise_addr, char *err, size_t errlen)
{
    if (!*node_id || strpbrk(node_id, ".*> \t") || strlen(node_id) >= 128) {
        snprintf(err, errlen, "node id \"%s\": 1..127 characters without . * > or spaces", node_id);
        return NULL;
    }
    struct nats_agent *a = calloc(1, sizeof(*a));
    if (!a) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    a->vh = vh;
    a->started_unix_ms = clock_realtime_ms();
    snprintf(a->node_id, sizeof(a->node_id), "%s", node_id);
    snprintf(a->advertise, sizeof(a->advertise), "%s", advertise_addr);
    pthread_mutex_init(&a->lock, NULL);
    pthread_cond_init(&a->changed, NULL);
    char subject[256];
    snprintf(subject, sizeof(subject), "airlock.node.%s.*", a->node_id);
    natsStatus st = agent_connect(a, url, creds);
    if (st != NATS_OK) {
        nats_connect_error(creds, url, st, NULL, err, errlen);
        nats_agent_stop(a);
        return NULL;
    }
    st = natsConnection_Subscribe(&a->work, a->nc, subject, on_work, a);
    if (st == NATS_OK)
        st = natsConnection_Subscribe(&a->roll_call, a->nc, NATS_ROLL_CALL_SUBJECT, on_roll_call, a);
    if (st != NATS_OK) {
        snprintf(err, errlen, "nats %s: %s", url, natsStatus_GetText(st));
        nats_agent_stop(a);
        return NULL;
    }
    if (pthread_create(&a->heartbeat_thread, NULL, heartbeat_main, a) != 0) {
        snprintf(err, errlen, "cannot start the heartbeat thread");
        nats_agent_stop(a);
        return NULL;
    }
    a->heartbeat_started = true;
    log_info("nats agent started", "node=%s nats=%s subjects=%s", a->node_id, url, subject);
    return a;
}

void nats_agent_stop(struct nats_agent *a)
{
    if (!a)
        return;
    if (a->roll_call && natsSubscription_Drain(a->roll_call) == NATS_OK)
        natsSubscription_WaitForDrainCompletion(a->roll_call, 2000);
    if (a->work && natsSubscription_Drain(a->work) == NATS_OK)
        natsSubscription_WaitForDrainCompletion(a->work, 2000);
    pthread_mutex_lock(&a->lock);
    a->stopping = true;
    pthread_cond_broadcast(&a->changed);
    while (a->workers > 0)
        pthread_cond_wait(&a->changed, &a->lock);
    pthread_mutex_unlock(&a->lock);
    if (a->heartbeat_started)
        pthread_join(a->heartbeat_thread, NULL);
    natsSubscription_Destroy(a->roll_call);
    natsSubscription_Destroy(a->work);
    if (a->nc) {
        natsConnection_Close(a->nc);
        natsConnection_Destroy(a->nc);
    }
    nats_CloseAndWait(1000);
    pthread_cond_destroy(&a->changed);
    pthread_mutex_destroy(&a->lock);
    free(a);
}
