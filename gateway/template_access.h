/* What REST's template routes (handlers_template.c) and the public gRPC
 * API's Templates service (grpc_templates.c) share on their way to the
 * scheduler, which checks the spec (common/template_spec) and scopes every
 * call to the caller's project. */
#ifndef AIRLOCK_GATEWAY_TEMPLATE_ACCESS_H
#define AIRLOCK_GATEWAY_TEMPLATE_ACCESS_H

#include "rpc_client.h"
#include "sandbox_access.h"

/* A build may install packages (mmdebstrap) and run long commands. */
#define GW_TEMPLATE_BUILD_TIMEOUT_MS (2 * 60 * 60 * 1000 + 60000)

/* The scheduler's BuildTemplate stream for the caller's spec (JSON, as
 * REST takes it), its request sent; NULL when out of memory. The stream is
 * the caller's to finish. */
struct rpc_stream *gw_template_build_open(struct gateway *gw, const struct gw_caller *c,
                                          const char *spec_json);

/* The next event of a build stream: rpc_stream_recv's answer. */
int gw_template_build_next(struct rpc_stream *s, Airlock__Scheduler__V1__BuildTemplateEvent **ev);

#endif
