/* GetNodeStats: what this node holds and can still take. */
#include "vmhost_service.h"
#include "warm_pool.h"

void service_node_stats(struct rpc_call *call, void *ctx)
{
    struct vmhost *vh = ctx;
    ProtobufCMessage *req =
        (void *)rpc_call_recv_request(call, &airlock__vmhost__v1__get_node_stats_request__descriptor);
    if (!req)
        return;
    protobuf_c_message_free_unpacked(req, NULL);
    Airlock__Vmhost__V1__NodeStats st = AIRLOCK__VMHOST__V1__NODE_STATS__INIT;
    pthread_mutex_lock(&vh->lock);
    st.sandboxes = vh->n_sandboxes;
    pthread_mutex_unlock(&vh->lock);
    st.max_sandboxes = vh->cfg.max_sandboxes;
    st.free_slots = st.sandboxes < st.max_sandboxes ? st.max_sandboxes - st.sandboxes : 0;
    struct warm_pool_stats ps;
    warm_pool_get_stats(vh->pool, &ps);
    st.pool_ready = ps.ready;
    st.pool_target = ps.target;
    st.pool_taken = ps.taken;
    st.pool_missed = ps.missed;
    struct node_budget_stats nb;
    node_budget_get(vh->budget, &nb);
    st.vcpus_limit = nb.vcpus_limit;
    st.vcpus_committed = nb.vcpus_committed;
    st.memory_limit_mb = nb.memory_limit_mb;
    st.memory_committed_mb = nb.memory_committed_mb;
    rpc_call_send(call, &st.base);
    rpc_call_finish(call, GRPC_STATUS_OK, NULL);
}
