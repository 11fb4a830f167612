/* GET /v1/nodes, GET /v1/nodes/{id}, POST /v1/nodes/{id}/drain and
 * /undrain (admin): the nodes and their drain state (docs/api.md
 * "Nodes"), nodes.proto's messages as JSON field for field, times as
 * RFC 3339 (*_unix_ms → *_at, null for never). */
#include "node_access.h"
#include "reply.h"
#include "route_handlers.h"

/* An RFC 3339 time, or null for 0 (never). */
static json_t *time_json(int64_t unix_ms)
{
    char text[40];
    if (unix_ms == 0)
        return json_null();
    reply_rfc3339(unix_ms, text, sizeof(text));
    return json_string(text);
}

static json_t *node_json(const Airlock__V1__Node *n)
{
    json_t *counts = json_object(), *templates = json_array();
    for (size_t i = 0; i < n->n_sandboxes; i++)
        json_object_set_new(counts, n->sandboxes[i]->key, json_integer(n->sandboxes[i]->value));
    for (size_t i = 0; i < n->n_templates; i++)
        json_array_append_new(templates, json_string(n->templates[i]));
    const Airlock__V1__NodeCapacity none = AIRLOCK__V1__NODE_CAPACITY__INIT,
                                    *c = n->capacity ? n->capacity : &none;
    json_t *capacity = json_pack(
        "{s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "vcpus_limit", (json_int_t)c->vcpus_limit,
        "vcpus_committed", (json_int_t)c->vcpus_committed, "memory_limit_mb",
        (json_int_t)c->memory_limit_mb, "memory_committed_mb", (json_int_t)c->memory_committed_mb,
        "free_memory_mb", (json_int_t)c->free_memory_mb, "sandbox_slots",
        (json_int_t)c->sandbox_slots, "sandbox_records", (json_int_t)c->sandbox_records);
    return json_pack("{s:s,s:s,s:b,s:o,s:o,s:s,s:s,s:s,s:o,s:o,s:o,s:o}", "id", n->id, "state",
                     n->state, "live", n->live, "last_heartbeat_at",
                     time_json(n->last_heartbeat_unix_ms), "state_changed_at",
                     time_json(n->state_changed_unix_ms), "state_changed_by", n->state_changed_by,
                     "vmhost_addr", n->vmhost_addr, "accel", n->accel, "started_at",
                     time_json(n->started_unix_ms), "capacity", capacity, "sandboxes", counts,
                     "templates", templates);
}

enum MHD_Result handle_nodes_list(struct gw_request *r)
{
    struct gw_caller c = gw_request_caller(r);
    Airlock__V1__ListNodesResponse *list;
    struct airlock_error e;
    if (gw_nodes_list(r->gw, &c, &list, &e) < 0)
        return reply_airlock_error(r, &e);
    json_t *nodes = json_array();
    for (size_t i = 0; i < list->n_nodes; i++)
        json_array_append_new(nodes, node_json(list->nodes[i]));
    protobuf_c_message_free_unpacked(&list->base, NULL);
    return reply_json(r, 200, json_pack("{s:o}", "nodes", nodes));
}

static enum MHD_Result node_call(struct gw_request *r, enum gw_node_call call)
{
    struct gw_caller c = gw_request_caller(r);
    Airlock__V1__Node *node;
    struct airlock_error e;
    if (gw_node_call(r->gw, &c, call, r->path_id, &node, &e) < 0)
        return reply_airlock_error(r, &e);
    enum MHD_Result sent = reply_json(r, 200, node_json(node));
    protobuf_c_message_free_unpacked(&node->base, NULL);
    return sent;
}

enum MHD_Result handle_node_get(struct gw_request *r)
{
    return node_call(r, GW_NODE_GET);
}

enum MHD_Result handle_node_drain(struct gw_request *r)
{
    return node_call(r, GW_NODE_DRAIN);
}

enum MHD_Result handle_node_undrain(struct gw_request *r)
{
    return node_call(r, GW_NODE_UNDRAIN);
}
