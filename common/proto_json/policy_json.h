/* The JSON form of egress.proto's Policy — "network" in the REST API and
 * in the scheduler's sandboxes.network column
 * (docs/api.md): {"default":"deny|allow", "allow_domains":[…],
 * "deny_domains":[…], "allow_cidrs":[…], "deny_cidrs":[…],
 * "allow_ports":[…], "deny_ports":[…]}, every field optional. Only shape
 * and types are checked here; what the values mean (a CIDR's syntax, a
 * port's range) is egress's to judge, so there is one authority for it. */
#ifndef AIRLOCK_POLICY_JSON_H
#define AIRLOCK_POLICY_JSON_H

#include <jansson.h>
#include <stddef.h>

#include "egress.pb-c.h"

/* v as a Policy in *out: 0, or -1 with err naming the field below `name`
 * ("network.allow_domains[1]: must be a string") and *out empty. Strings
 * point into v (keep it until done); free *out with policy_json_release. */
int policy_json_to_proto(json_t *v, const char *name, Airlock__Egress__V1__Policy *out, char *err,
                         size_t errlen);
void policy_json_release(Airlock__Egress__V1__Policy *p);
/* "deny" or "allow" as *out; -1 with err naming `name`.default otherwise. */
int policy_default_action(const char *s, const char *name, Airlock__Egress__V1__DefaultAction *out,
                          char *err, size_t errlen);
/* "deny", "allow", or NULL for unspecified (egress: deny). */
const char *policy_default_name(Airlock__Egress__V1__DefaultAction a);
/* p as that JSON object, fields at their zero value left out (so egress's
 * defaults apply; policy_json_to_proto reads it back as p); NULL with err
 * naming the field below `name` when a string is not UTF-8
 * ("network.deny_cidrs[1]: must be UTF-8"), or out of memory. */
json_t *policy_json_from_proto(const Airlock__Egress__V1__Policy *p, const char *name, char *err,
                               size_t errlen);

#endif
