/* The Volumes calls (protos/airlock/v1/volumes.proto, scheduler.proto
 * VolumeCall): PostgreSQL records a project's volumes and snapshots
 * (volume_store.h), the volume's node holds their images (NODE_OP_VOLUME_*,
 * vmhost.proto VolumeRef). A volume never used has no node and no image:
 * its snapshots and clones are records only, and its first sandbox makes
 * it (CreateSandboxRequest.volumes). The record comes first and the node
 * follows, so a node's refusal undoes the record and nothing is left on a
 * node that the database does not know; a node that fails to delete an
 * image leaves it behind, logged. */
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "nodes.h"
#include "rpc_err.h"
#include "scheduler_service.h"
#include "volume_store.h"

typedef Airlock__Scheduler__V1__VolumeCall VolumeCall;

/* One node operation on a volume, its answer's Volume into *out when out
 * is not NULL (free with protobuf_c_message_free_unpacked). */
static int volume_on_node(struct scheduler *s, const char *node, node_op op,
                          const Airlock__Vmhost__V1__VolumeRef *ref,
                          Airlock__Node__V1__NodeReply **out, struct airlock_error *e)
{
    Airlock__Node__V1__NodeReply *reply = NULL;
    int rc = nodes_call(s, node, op, &ref->base, s->cfg.node_timeout_ms, &reply, e);
    if (rc < 0)
        return airlock_error_prefix(e, "node %s: ", node);
    if (out)
        *out = reply;
    else
        protobuf_c_message_free_unpacked(&reply->base, NULL);
    return 0;
}

/* Answers volume row 0 of rows with snapshots (NULL: none shown) and,
 * when usage is set, what the node says it holds. */
static void reply_volume(struct rpc_call *call, PGresult *rows, PGresult *snaps,
                         const Airlock__Node__V1__NodeReply *usage)
{
    struct volume_msg m;
    struct airlock_error e;
    int rc = store_volume_msg(rows, 0, snaps, &m, &e);
    if (rc == 0 && usage && usage->volume) {
        m.msg.used_bytes = usage->volume->used_bytes;
        m.msg.has_usage = true;
    }
    if (rc == 0)
        rpc_call_send(call, &m.msg.base);
    rpc_call_finish_result(call, rc, &e);
    store_volume_msg_free(&m);
}

/* The volume named by the call, after checking the name (field "name"). */
static int call_volume(struct scheduler *s, const VolumeCall *req, PGresult **row,
                       struct airlock_error *e)
{
    *row = NULL;
    if (volume_name_check("name", req->name, e) < 0)
        return -1;
    return store_volume_get(&s->db, req->project_id, req->name, s->cfg.node_dead_after_s, row, e);
}

/* A clone of from_snapshot ("vol@snap") named req->name: the record,
 * then the node's reflink (a snapshot never used is a record only). */
static int create_clone(struct scheduler *s, const VolumeCall *req, char id[VOLUME_ID_SIZE],
                        struct airlock_error *e)
{
    struct volume_ref ref;
    if (volume_ref_parse("from_snapshot", req->from_snapshot, &ref, e) < 0)
        return -1;
    if (!ref.snapshot[0])
        return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                 "from_snapshot: \"%s\" names no snapshot (volume@snapshot)",
                                 req->from_snapshot);
    PGresult *src = NULL, *snap = NULL;
    int rc = store_volume_get(&s->db, req->project_id, ref.volume, s->cfg.node_dead_after_s,
                              &src, e);
    if (rc == 0)
        rc = store_volume_snapshot_get(&s->db, PQgetvalue(src, 0, 0), ref.volume, ref.snapshot,
                                       &snap, e);
    if (rc < 0)
        goto out;
    const char *node = PQgetvalue(snap, 0, SNAP_NODE);
    rc = store_volume_insert(&s->db, req->project_id, req->name,
                             strtoull(PQgetvalue(snap, 0, SNAP_SIZE), NULL, 10),
                             *node ? node : NULL, req->from_snapshot, &s->cfg.quota_defaults, id,
                             e);
    if (rc < 0 || !*node)
        goto out;
    Airlock__Vmhost__V1__VolumeRef nref = AIRLOCK__VMHOST__V1__VOLUME_REF__INIT;
    nref.volume_id = PQgetvalue(src, 0, 0);
    nref.snapshot_id = PQgetvalue(snap, 0, SNAP_ID);
    nref.new_volume_id = id;
    rc = volume_on_node(s, node, NODE_OP(VOLUME_CLONE), &nref, NULL, e);
    struct airlock_error undo;
    if (rc < 0 && store_volume_delete(&s->db, id, req->name, NULL, &undo) < 0)
        log_warn("unmade clone not unrecorded", "volume=%s error=\"%s\"", id, undo.message);
out:
    PQclear(src);
    PQclear(snap);
    return rc;
}

void service_volume_create(struct rpc_call *call, void *ctx)
{
    struct scheduler *s = ctx;
    VolumeCall *req = (void *)rpc_call_recv_request(call, &airlock__scheduler__v1__volume_call__descriptor);
    if (!req)
        return;
    struct airlock_error e;
    char id[VOLUME_ID_SIZE];
    PGresult *row = NULL;
    int rc = volume_name_check("name", req->name, &e);
    if (rc == 0 && *req->from_snapshot)
        rc = create_clone(s, req, id, &e);
    else if (rc == 0 && (rc = volume_size_check("size_mb", req->size_mb, &e)) == 0)
        rc = store_volume_insert(&s->db, req->project_id, req->name, req->size_mb, NULL, "",
                                 &s->cfg.quota_defaults, id, &e);
    if (rc == 0)
        rc = store_volume_get(&s->db, req->project_id, req->name, s->cfg.node_dead_after_s, &row,
                              &e);
    if (rc == 0) {
        log_info("volume created", "request=%s project=%s volume=%s id=%s from=%s",
                 req->request_id, req->project_id, req->name, id, req->from_snapshot);
        reply_volume(call, row, NULL, NULL);
    } else {
        rpc_call_finish_error(call, &e);
    }
    PQclear(row);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

void service_volume_list(struct rpc_call *call, void *ctx)
{
    struct scheduler *s = ctx;
    VolumeCall *req = (void *)rpc_call_recv_request(call, &airlock__scheduler__v1__volume_call__descriptor);
    if (!req)
        return;
    struct airlock_error e;
    PGresult *rows = NULL;
    int rc = store_volume_list(&s->db, req->project_id, s->cfg.node_dead_after_s, &rows, &e);
    int n = rc == 0 ? PQntuples(rows) : 0;
    struct volume_msg *msgs = calloc((size_t)n + 1, sizeof(*msgs));
    Airlock__V1__Volume **ptrs = calloc((size_t)n + 1, sizeof(*ptrs));
    if (rc == 0 && (!msgs || !ptrs))
        rc = airlock_error_set(&e, AIRLOCK_ERR_CAPACITY, "out of memory");
    int made = 0;
    for (; rc == 0 && made < n; made++) {
        rc = store_volume_msg(rows, made, NULL, &msgs[made], &e);
        ptrs[made] = &msgs[made].msg;
    }
    if (rc == 0) {
        Airlock__V1__ListVolumesResponse resp = AIRLOCK__V1__LIST_VOLUMES_RESPONSE__INIT;
        resp.volumes = ptrs;
        resp.n_volumes = (size_t)n;
        rpc_call_send(call, &resp.base);
    }
    rpc_call_finish_result(call, rc, &e);
    for (int i = 0; msgs && i < made; i++)
        store_volume_msg_free(&msgs[i]);
    free(msgs);
    free(ptrs);
    PQclear(rows);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

void service_volume_get(struct rpc_call *call, void *ctx)
{
    struct scheduler *s = ctx;
    VolumeCall *req = (void *)rpc_call_recv_request(call, &airlock__scheduler__v1__volume_call__descriptor);
    if (!req)
        return;
    struct airlock_error e;
    PGresult *row = NULL, *snaps = NULL;
    Airlock__Node__V1__NodeReply *usage = NULL;
    int rc = call_volume(s, req, &row, &e);
    if (rc == 0)
        rc = store_volume_snapshots(&s->db, PQgetvalue(row, 0, 0), &snaps, &e);
    if (rc == 0) {
        struct volume_row r;
        store_volume_row(row, 0, &r);
        /* Usage is the node's to say; a node down leaves it out rather
         * than failing the call. */
        Airlock__Vmhost__V1__VolumeRef nref = AIRLOCK__VMHOST__V1__VOLUME_REF__INIT;
        nref.volume_id = (char *)r.id;
        struct airlock_error node_e;
        if (r.node_live &&
            volume_on_node(s, r.node, NODE_OP(VOLUME_GET), &nref, &usage, &node_e) < 0)
            log_info("volume usage not known", "volume=%s error=\"%s\"", r.id, node_e.message);
        reply_volume(call, row, snaps, usage);
    } else {
        rpc_call_finish_error(call, &e);
    }
    if (usage)
        protobuf_c_message_free_unpacked(&usage->base, NULL);
    PQclear(row);
    PQclear(snaps);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

void service_volume_grow(struct rpc_call *call, void *ctx)
{
    struct scheduler *s = ctx;
    VolumeCall *req = (void *)rpc_call_recv_request(call, &airlock__scheduler__v1__volume_call__descriptor);
    if (!req)
        return;
    struct airlock_error e;
    PGresult *row = NULL;
    int rc = call_volume(s, req, &row, &e);
    if (rc == 0)
        rc = volume_size_check("size_mb", req->size_mb, &e);
    struct volume_row r;
    if (rc == 0) {
        store_volume_row(row, 0, &r);
        rc = store_volume_resize(&s->db, req->project_id, r.id, r.name, req->size_mb,
                                 &s->cfg.quota_defaults, &e);
    }
    if (rc == 0 && *r.node) {
        Airlock__Vmhost__V1__VolumeRef nref = AIRLOCK__VMHOST__V1__VOLUME_REF__INIT;
        nref.volume_id = (char *)r.id;
        nref.size_mb = req->size_mb;
        rc = volume_on_node(s, r.node, NODE_OP(VOLUME_GROW), &nref, NULL, &e);
        struct airlock_error undo;
        if (rc < 0 && store_volume_size_set(&s->db, r.id, r.size_mb, &undo) < 0)
            log_warn("refused grow not undone", "volume=%s error=\"%s\"", r.id, undo.message);
    }
    PQclear(row);
    row = NULL;
    if (rc == 0)
        rc = store_volume_get(&s->db, req->project_id, req->name, s->cfg.node_dead_after_s, &row,
                              &e);
    if (rc == 0)
        reply_volume(call, row, NULL, NULL);
    else
        rpc_call_finish_error(call, &e);
    PQclear(row);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

void service_volume_delete(struct rpc_call *call, void *ctx)
{
    struct scheduler *s = ctx;
    VolumeCall *req = (void *)rpc_call_recv_request(call, &airlock__scheduler__v1__volume_call__descriptor);
    if (!req)
        return;
    struct airlock_error e;
    PGresult *row = NULL;
    int rc = call_volume(s, req, &row, &e);
    struct volume_row r;
    PGresult *others = NULL;
    if (rc == 0) {
        store_volume_row(row, 0, &r);
        rc = store_volume_delete(&s->db, r.id, r.name, &others, &e);
    }
    /* Its node, and the nodes where it left snapshots before it moved. */
    for (int i = -1; rc == 0 && i < (others ? PQntuples(others) : 0); i++) {
        const char *node = i < 0 ? r.node : PQgetvalue(others, i, 1);
        Airlock__Vmhost__V1__VolumeRef nref = AIRLOCK__VMHOST__V1__VOLUME_REF__INIT;
        nref.volume_id = (char *)r.id;
        struct airlock_error node_e; /* the volume is gone for its user already */
        if (*node && volume_on_node(s, node, NODE_OP(VOLUME_DELETE), &nref, NULL, &node_e) < 0 &&
            node_e.class != AIRLOCK_ERR_NOT_FOUND)
            log_warn("deleted volume's image left on a node", "volume=%s node=%s error=\"%s\"",
                     r.id, node, node_e.message);
    }
    PQclear(others);
    if (rc == 0) {
        log_info("volume deleted", "request=%s project=%s volume=%s id=%s", req->request_id,
                 req->project_id, r.name, r.id);
        reply_volume(call, row, NULL, NULL);
    } else {
        rpc_call_finish_error(call, &e);
    }
    PQclear(row);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

/* Answers snapshot row 0 of snap. */
static void reply_snapshot(struct rpc_call *call, PGresult *snap)
{
    Airlock__V1__VolumeSnapshot m;
    store_snapshot_msg(snap, 0, &m);
    rpc_call_send(call, &m.base);
    rpc_call_finish(call, GRPC_STATUS_OK, NULL);
}

void service_volume_snapshot_create(struct rpc_call *call, void *ctx)
{
    struct scheduler *s = ctx;
    VolumeCall *req = (void *)rpc_call_recv_request(call, &airlock__scheduler__v1__volume_call__descriptor);
    if (!req)
        return;
    struct airlock_error e;
    PGresult *row = NULL, *snap = NULL;
    char snap_id[VOLUME_ID_SIZE];
    int rc = call_volume(s, req, &row, &e);
    if (rc == 0)
        rc = volume_name_check("name", req->snapshot, &e);
    struct volume_row r;
    if (rc == 0) {
        store_volume_row(row, 0, &r);
        rc = store_snapshot_insert(&s->db, r.id, r.name, req->snapshot, snap_id, &e);
    }
    if (rc == 0 && *r.node) {
        Airlock__Vmhost__V1__VolumeRef nref = AIRLOCK__VMHOST__V1__VOLUME_REF__INIT;
        nref.volume_id = (char *)r.id;
        nref.snapshot_id = snap_id;
        rc = volume_on_node(s, r.node, NODE_OP(VOLUME_SNAPSHOT), &nref, NULL, &e);
        struct airlock_error undo;
        if (rc < 0 && store_snapshot_delete(&s->db, snap_id, req->snapshot, &undo) < 0)
            log_warn("unmade snapshot not unrecorded", "snapshot=%s error=\"%s\"", snap_id,
                     undo.message);
    }
    if (rc == 0)
        rc = store_volume_snapshot_get(&s->db, r.id, r.name, req->snapshot, &snap, &e);
    if (rc == 0)
        reply_snapshot(call, snap);
    else
        rpc_call_finish_error(call, &e);
    PQclear(row);
    PQclear(snap);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

void service_volume_snapshot_list(struct rpc_call *call, void *ctx)
{
    struct scheduler *s = ctx;
    VolumeCall *req = (void *)rpc_call_recv_request(call, &airlock__scheduler__v1__volume_call__descriptor);
    if (!req)
        return;
    struct airlock_error e;
    PGresult *row = NULL, *snaps = NULL;
    int rc = call_volume(s, req, &row, &e);
    if (rc == 0)
        rc = store_volume_snapshots(&s->db, PQgetvalue(row, 0, 0), &snaps, &e);
    if (rc == 0) {
        /* The snapshots as GetVolume shows them. */
        struct volume_msg m;
        rc = store_volume_msg(row, 0, snaps, &m, &e);
        if (rc == 0) {
            Airlock__V1__ListVolumeSnapshotsResponse resp =
                AIRLOCK__V1__LIST_VOLUME_SNAPSHOTS_RESPONSE__INIT;
            resp.snapshots = m.msg.snapshots;
            resp.n_snapshots = m.msg.n_snapshots;
            rpc_call_send(call, &resp.base);
        }
        store_volume_msg_free(&m);
    }
    rpc_call_finish_result(call, rc, &e);
    PQclear(row);
    PQclear(snaps);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

void service_volume_snapshot_delete(struct rpc_call *call, void *ctx)
{
    struct scheduler *s = ctx;
    VolumeCall *req = (void *)rpc_call_recv_request(call, &airlock__scheduler__v1__volume_call__descriptor);
    if (!req)
        return;
    struct airlock_error e;
    PGresult *row = NULL, *snap = NULL;
    int rc = call_volume(s, req, &row, &e);
    if (rc == 0)
        rc = volume_name_check("snapshot", req->snapshot, &e);
    if (rc == 0)
        rc = store_volume_snapshot_get(&s->db, PQgetvalue(row, 0, 0), req->name, req->snapshot,
                                       &snap, &e);
    char ref[VOLUME_REF_MAX + 1];
    snprintf(ref, sizeof(ref), "%s@%s", req->name, req->snapshot);
    if (rc == 0)
        rc = store_snapshot_delete(&s->db, PQgetvalue(snap, 0, SNAP_ID), ref, &e);
    const char *node = rc == 0 ? PQgetvalue(snap, 0, SNAP_NODE) : "";
    if (*node) {
        Airlock__Vmhost__V1__VolumeRef nref = AIRLOCK__VMHOST__V1__VOLUME_REF__INIT;
        nref.volume_id = PQgetvalue(row, 0, 0);
        nref.snapshot_id = PQgetvalue(snap, 0, SNAP_ID);
        struct airlock_error node_e; /* gone for its user already */
        if (volume_on_node(s, node, NODE_OP(VOLUME_SNAPSHOT_DELETE), &nref, NULL, &node_e) < 0 &&
            node_e.class != AIRLOCK_ERR_NOT_FOUND)
            log_warn("deleted snapshot's image left on its node", "snapshot=%s node=%s error=\"%s\"",
                     ref, node, node_e.message);
    }
    if (rc == 0)
        reply_snapshot(call, snap);
    else
        rpc_call_finish_error(call, &e);
    PQclear(row);
    PQclear(snap);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}
