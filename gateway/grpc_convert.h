/* The public gRPC API's messages (protos/airlock/v1) made from the
 * scheduler's and vmhost's, the public requests' policies as egress's
 * Policy (what the scheduler takes), and template specs as the JSON the
 * scheduler takes. Answers are built in an
 * arena (strings copied, or pointing into the source message, which must
 * outlive the send). */
#ifndef AIRLOCK_GATEWAY_GRPC_CONVERT_H
#define AIRLOCK_GATEWAY_GRPC_CONVERT_H

#include <jansson.h>

#include "airlock/v1/sandboxes.pb-c.h"
#include "airlock/v1/templates.pb-c.h"
#include "grpc_arena.h"
#include "scheduler.pb-c.h"
#include "vmhost.pb-c.h"

/* NULL only when out of memory (a->failed). */
Airlock__V1__Sandbox *grpc_sandbox_msg(struct grpc_arena *a, const Airlock__Scheduler__V1__Sandbox *sb);
/* Lists of those (NULL when n is 0 or out of memory). */
Airlock__V1__Sandbox **grpc_sandbox_list(struct grpc_arena *a,
                                         Airlock__Scheduler__V1__Sandbox *const *sandboxes, size_t n);
Airlock__V1__FileInfo **grpc_file_info_list(struct grpc_arena *a,
                                            Airlock__Guest__V1__FileInfo *const *entries, size_t n);
Airlock__V1__ProcessInfo **grpc_process_list(struct grpc_arena *a,
                                             Airlock__Guest__V1__ProcessInfo *const *processes,
                                             size_t n);
Airlock__V1__Checkpoint **grpc_checkpoint_list(struct grpc_arena *a,
                                               Airlock__Scheduler__V1__Checkpoint *const *checkpoints,
                                               size_t n);
Airlock__V1__Template **grpc_template_list(struct grpc_arena *a,
                                           Airlock__Scheduler__V1__Template *const *templates,
                                           size_t n);
Airlock__V1__FileInfo *grpc_file_info_msg(struct grpc_arena *a, const Airlock__Guest__V1__FileInfo *fi);
Airlock__V1__ProcessInfo *grpc_process_msg(struct grpc_arena *a,
                                           const Airlock__Guest__V1__ProcessInfo *p);
Airlock__V1__Checkpoint *grpc_checkpoint_msg(struct grpc_arena *a,
                                             const Airlock__Scheduler__V1__Checkpoint *c);
Airlock__V1__Template *grpc_template_msg(struct grpc_arena *a,
                                         const Airlock__Scheduler__V1__Template *t);

/* The repeated string field `name` as a JSON array in obj (left out when
 * empty); -1 with err naming prefix+name[i] when one is not UTF-8. */
int grpc_strings_json(json_t *obj, const char *prefix, const char *name, char *const *v, size_t n,
                      char *err, size_t errlen);
/* The policy as egress's (what the scheduler takes), its arrays borrowed
 * from p; -1 with err naming the field when a string is not UTF-8 or
 * default is neither "deny" nor "allow". egress judges the values. */
int grpc_network_policy(const Airlock__V1__NetworkPolicy *p, Airlock__Egress__V1__Policy *out,
                        char *err, size_t errlen);
/* The spec as the JSON the scheduler takes (docs/templates.md; fields at
 * their zero value left out, so their defaults apply; NULL m as {}): a
 * malloc'd string, or NULL with err naming the field that is not UTF-8. */
char *grpc_template_spec_json(const Airlock__V1__TemplateSpec *m, char *err, size_t errlen);

#endif
