/* ResolveInjection: the header egress puts into a guest's request. */
#ifndef AIRLOCK_VAULT_INJECT_H
#define AIRLOCK_VAULT_INJECT_H

#include "vault.h"
#include "vault.pb-c.h"

/* The narrowest binding for the request's host wins: a sandbox-scoped
 * secret over a project-scoped one over one of the project's org, then an
 * exact host pattern over a wildcard.
 * Every outcome for a matched secret is audited. On 0 out's strings are
 * allocated (injection_clear zeroes and frees them). Zeroes
 * req->customer_key. */
/* caller_node: the node of the calling egress by its certificate (mutual
 * TLS), whose sandboxes alone it may ask for (placement.h), and the actor
 * of the audit row; NULL without TLS (req->actor is recorded then). */
int inject_resolve(struct vault *v, Airlock__Vault__V1__ResolveInjectionRequest *req,
                   const char *caller_node, Airlock__Vault__V1__Injection *out,
                   struct airlock_error *e);
void injection_clear(Airlock__Vault__V1__Injection *out);

#endif
