#include "scheduler.h"

#include <stdio.h>
#include <string.h>

#include "log.h"
#include "nats_credentials.h"
#include "node_heard.h"
#include "node_pools.h"
#include "nodes.h"
#include "scheduler_schema.h"
#include "tenancy.h"

/* Statements of concurrent requests, heartbeats and controllers run side
 * by side on 3 connections (the 4th is the migrations'): a create's commit
 * waits only while three other statements run. */
#define SCHEDULER_DB_CONNS 4

static int nats_connect(struct scheduler *s, char *err, size_t errlen)
{
    natsOptions *opts = NULL;
    natsStatus st = natsOptions_Create(&opts);
    if (st == NATS_OK)
        st = natsOptions_SetURL(opts, s->cfg.nats_url);
    if (st == NATS_OK)
        st = natsOptions_SetName(opts, "airlock-scheduler");
    if (st == NATS_OK)
        st = nats_credentials_apply(opts, s->cfg.nats_credentials);
    /* Without this, publishes wait for a flusher thread: ~1 ms per request
     * instead of < 0.1 ms (see the NATS notes). */
    if (st == NATS_OK)
        st = natsOptions_SetSendAsap(opts, true);
    if (st == NATS_OK)
        st = natsOptions_SetMaxReconnect(opts, -1);
    if (st == NATS_OK)
        st = natsConnection_Connect(&s->nc, opts);
    natsOptions_Destroy(opts);
    if (st != NATS_OK) {
        nats_connect_error(s->cfg.nats_credentials, s->cfg.nats_url, st, NULL, err, errlen);
        return -1;
    }
    return 0;
}

int scheduler_init(struct scheduler *s, const struct scheduler_config *cfg, char *err,
                   size_t errlen)
{
    memset(s, 0, sizeof(*s));
    s->cfg = *cfg;
    node_liveness_init(&s->liveness);
    if (db_open_pool(&s->db, cfg->database_url, SCHEDULER_DB_CONNS, err, errlen) < 0)
        return -1;
    if (db_migrate(&s->db, &scheduler_schema, tenancy_bootstrap, (void *)cfg->data_dir, err,
                   errlen) < 0)
        goto fail_db;
    if (nats_connect(s, err, errlen) < 0)
        goto fail_db;
    if (node_heard_follow(s, err, errlen) < 0 || nodes_follow_heartbeats(s, err, errlen) < 0 ||
        node_pools_follow(s, err, errlen) < 0)
        goto fail_nats;
    return 0;
fail_nats:
    natsConnection_Destroy(s->nc);
fail_db:
    db_close(&s->db);
    node_liveness_free(&s->liveness);
    return -1;
}

/* Drain, not unsubscribe: it waits until no callback still uses the
 * database or the liveness table. */
static void drain(natsSubscription *sub)
{
    if (!sub)
        return;
    if (natsSubscription_Drain(sub) == NATS_OK)
        natsSubscription_WaitForDrainCompletion(sub, 2000);
    natsSubscription_Destroy(sub);
}

void scheduler_shutdown(struct scheduler *s)
{
    drain(s->heartbeats);
    drain(s->heard.sub);
    drain(s->pools.sub);
    if (s->nc) {
        natsConnection_Close(s->nc);
        natsConnection_Destroy(s->nc);
    }
    db_close(&s->db);
    node_liveness_free(&s->liveness);
    /* Frees NATS.c's global state (threads, pools) for leak checkers. */
    nats_CloseAndWait(1000);
}
