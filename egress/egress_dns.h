/* A sandbox's DNS (egress_dns.c): the answer to one guest query. */
#ifndef AIRLOCK_EGRESS_DNS_H
#define AIRLOCK_EGRESS_DNS_H

#include <stddef.h>
#include <stdint.h>

#include "egress_state.h"

/* The reply to one guest DNS message (0 = send nothing). Blocks on the
 * upstream resolver for at most dns_timeout_ms. */
size_t egress_dns_answer(struct egress_sandbox *sb, const uint8_t *query, size_t len,
                         uint8_t *out, size_t outlen);

#endif
