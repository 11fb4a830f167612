/* Injection bound to placement (docs/security.md "Between services:
 * mutual TLS", rows T10-T11): with mutual TLS, egress on node N is egress:N by its
 * certificate, and gets the secrets of a sandbox only while the scheduler
 * has it placed on N. vault reads the scheduler's sandboxes row (the two
 * share the database), so a node that is taken over cannot ask for any
 * other node's sandboxes, nor for a project its own sandbox is not in. */
#ifndef AIRLOCK_VAULT_PLACEMENT_H
#define AIRLOCK_VAULT_PLACEMENT_H

#include "airlock_error.h"
#include "vault.h"

/* 0 when sandbox_id of project_id is placed on node and not deleted; else
 * -1 with e PERMISSION ("sandbox … is not placed on node …") — also when
 * the scheduler's table is missing: vault fails closed. */
int placement_check(struct vault *v, const char *node, const char *project_id,
                    const char *sandbox_id, struct airlock_error *e);

#endif
