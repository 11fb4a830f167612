#include "quota_access.h"

#include <string.h>

/* The project a call names, checked: "" is the caller's own. */
static int quota_project(const struct gw_caller *c, bool admin, const char **project_id,
                         struct airlock_error *e)
{
    if (!**project_id)
        *project_id = c->project_id;
    if (gw_id_check(*project_id, e) < 0)
        return airlock_error_prefix(e, "project ");
    if (!admin && strcmp(*project_id, c->project_id) != 0)
        return airlock_error_set(e, AIRLOCK_ERR_PERMISSION,
                                 "a project key reads its own project's quotas only (%s); the "
                                 "admin key reads any",
                                 c->project_id);
    return 0;
}

int gw_quotas_get(struct gateway *gw, const struct gw_caller *c, bool admin, const char *project_id,
                  Airlock__V1__ProjectQuotas **out, struct airlock_error *e)
{
    *out = NULL;
    if (quota_project(c, admin, &project_id, e) < 0)
        return -1;
    Airlock__Scheduler__V1__ProjectRef req = AIRLOCK__SCHEDULER__V1__PROJECT_REF__INIT;
    req.request_id = (char *)c->request_id;
    req.project_id = (char *)project_id;
    return gw_unary(gw->scheduler, SCHEDULER_METHOD("GetQuotas"), &req.base,
                    &airlock__v1__project_quotas__descriptor, (ProtobufCMessage **)out,
                    GW_SCHEDULER_TIMEOUT_MS, e);
}

int gw_quotas_set(struct gateway *gw, const struct gw_caller *c, const char *project_id,
                  Airlock__V1__QuotaLimits *limits, Airlock__V1__ProjectQuotas **out,
                  struct airlock_error *e)
{
    *out = NULL;
    if (!*project_id)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID, "project_id: required");
    /* The admin's: its route and method let no other key in. */
    if (quota_project(c, true, &project_id, e) < 0)
        return -1;
    Airlock__Scheduler__V1__SetQuotasRequest req = AIRLOCK__SCHEDULER__V1__SET_QUOTAS_REQUEST__INIT;
    req.request_id = (char *)c->request_id;
    req.project_id = (char *)project_id;
    req.actor = (char *)c->key_id;
    req.limits = limits;
    return gw_unary(gw->scheduler, SCHEDULER_METHOD("SetQuotas"), &req.base,
                    &airlock__v1__project_quotas__descriptor, (ProtobufCMessage **)out,
                    GW_SCHEDULER_TIMEOUT_MS, e);
}
