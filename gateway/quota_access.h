/* A project's quotas as REST and the public gRPC API share them
 * (protos/airlock/v1/projects.proto): who may read or set which project's,
 * and the scheduler's GetQuotas and SetQuotas. 0, or -1 with e, as
 * sandbox_access.h's functions. */
#ifndef AIRLOCK_GATEWAY_QUOTA_ACCESS_H
#define AIRLOCK_GATEWAY_QUOTA_ACCESS_H

#include <stdbool.h>

#include "airlock/v1/projects.pb-c.h"
#include "sandbox_access.h"

/* project_id's quotas and usage ("" = the caller's own project): any
 * project's for the admin key, only its own for a project key (permission
 * denied for another, whether it exists or not); not found for an unknown
 * project. *out: free with protobuf_c_message_free_unpacked. */
int gw_quotas_get(struct gateway *gw, const struct gw_caller *c, bool admin, const char *project_id,
                  Airlock__V1__ProjectQuotas **out, struct airlock_error *e);

/* Sets the quotas limits gives for project_id and answers them all as
 * they are now. For the admin key: its route and method say so (routes.c,
 * grpc_api.c). */
int gw_quotas_set(struct gateway *gw, const struct gw_caller *c, const char *project_id,
                  Airlock__V1__QuotaLimits *limits, Airlock__V1__ProjectQuotas **out,
                  struct airlock_error *e);

#endif
