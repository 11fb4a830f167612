/* GET and PUT /v1/projects/{id}/quotas: a project's quotas and usage
 * (docs/api.md "Quotas"), projects.proto's messages as JSON field for
 * field. GET: the admin key, or a project key for its own project; PUT:
 * the admin key. */
#include "quota.h"
#include "quota_access.h"
#include "reply.h"
#include "route_handlers.h"

static json_t *quotas_json(const Airlock__V1__ProjectQuotas *q)
{
    json_t *quotas = json_object();
    for (int k = 0; k < QUOTA_KIND_COUNT; k++) {
        const Airlock__V1__Quota *one =
            *quota_field((Airlock__V1__ProjectQuotas *)q, (enum quota_kind)k);
        if (one)
            json_object_set_new(quotas, quota_name((enum quota_kind)k),
                                json_pack("{s:I,s:I,s:b}", "limit", (json_int_t)one->limit,
                                          "used", (json_int_t)one->used, "is_default",
                                          one->is_default));
    }
    return json_pack("{s:s,s:o}", "project_id", q->project_id, "quotas", quotas);
}

static enum MHD_Result reply_quotas(struct gw_request *r, int rc, Airlock__V1__ProjectQuotas *q,
                                    const struct airlock_error *e)
{
    enum MHD_Result sent = rc == 0 ? reply_json(r, 200, quotas_json(q)) : reply_airlock_error(r, e);
    if (q)
        protobuf_c_message_free_unpacked(&q->base, NULL);
    return sent;
}

enum MHD_Result handle_quotas_get(struct gw_request *r)
{
    struct gw_caller c = gw_request_caller(r);
    Airlock__V1__ProjectQuotas *q;
    struct airlock_error e;
    int rc = gw_quotas_get(r->gw, &c, r->admin, r->path_id, &q, &e);
    return reply_quotas(r, rc, q, &e);
}

/* The body {"sandboxes":4,"vcpus":-1,…} as limits: every field a quota's
 * name with an integer (the scheduler judges the value). */
static int limits_from_json(json_t *body, Airlock__V1__QuotaLimits *limits,
                            struct airlock_error *e)
{
    const char *name;
    json_t *value;
    json_object_foreach(body, name, value) {
        int k = quota_kind_parse(name);
        if (k < 0) {
            char names[200];
            quota_names(names, sizeof(names));
            return airlock_error_set(e, AIRLOCK_ERR_INVALID, "unknown field \"%s\" (quotas: %s)",
                                     name, names);
        }
        if (!json_is_integer(value))
            return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                     "%s: must be an integer (0 = the default, -1 = unlimited)",
                                     name);
        quota_limits_set(limits, (enum quota_kind)k, json_integer_value(value));
    }
    return 0;
}

enum MHD_Result handle_quotas_put(struct gw_request *r)
{
    struct airlock_error e;
    json_t *body = NULL;
    Airlock__V1__QuotaLimits limits = AIRLOCK__V1__QUOTA_LIMITS__INIT;
    Airlock__V1__ProjectQuotas *q = NULL;
    int rc = json_input_object(r->body.data, r->body.len, &body, &e);
    if (rc == 0)
        rc = limits_from_json(body, &limits, &e);
    json_decref(body);
    if (rc == 0) {
        struct gw_caller c = gw_request_caller(r);
        rc = gw_quotas_set(r->gw, &c, r->path_id, &limits, &q, &e);
    }
    return reply_quotas(r, rc, q, &e);
}
