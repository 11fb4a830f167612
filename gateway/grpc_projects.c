/* Service airlock.v1.Projects (protos/airlock/v1/projects.proto):
 * GetQuotas and SetQuotas, REST's /v1/projects/{id}/quotas. The
 * scheduler answers the public message itself, relayed as it is. */
#include "grpc_call.h"
#include "quota_access.h"

static void reply_quotas(struct grpc_request *r, int rc, Airlock__V1__ProjectQuotas *q,
                         const struct airlock_error *e)
{
    if (rc == 0)
        grpc_reply(r, &q->base);
    else
        grpc_fail_error(r, e);
    if (q)
        protobuf_c_message_free_unpacked(&q->base, NULL);
}

void grpc_get_quotas(struct grpc_request *r)
{
    const Airlock__V1__GetQuotasRequest *in = (const void *)r->msg;
    Airlock__V1__ProjectQuotas *q;
    struct airlock_error e;
    int rc = gw_quotas_get(r->gw, &r->caller, r->admin, in->project_id, &q, &e);
    reply_quotas(r, rc, q, &e);
}

void grpc_set_quotas(struct grpc_request *r)
{
    const Airlock__V1__SetQuotasRequest *in = (const void *)r->msg;
    Airlock__V1__QuotaLimits none = AIRLOCK__V1__QUOTA_LIMITS__INIT;
    Airlock__V1__ProjectQuotas *q;
    struct airlock_error e;
    int rc = gw_quotas_set(r->gw, &r->caller, in->project_id, in->limits ? in->limits : &none, &q,
                           &e);
    reply_quotas(r, rc, q, &e);
}
