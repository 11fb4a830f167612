/* Client certificates a server verified (tls_credentials_verify_peer): a
 * gRPC channel makes many calls over one connection, each presenting the
 * same certificate, and checking it again each time (parse, chain,
 * signature) is most of what mutual TLS costs a call. An entry holds the
 * certificate's PEM and identity until its notAfter, for the generation of
 * the credentials it was checked with (a reload, which may change the CA,
 * starts over). A fixed table: a new certificate takes its slot's place. */
#ifndef AIRLOCK_PEER_CACHE_H
#define AIRLOCK_PEER_CACHE_H

#include <stdbool.h>
#include <time.h>

#include "peer_identity.h"

struct peer_cache;

struct peer_cache *peer_cache_new(void);
void peer_cache_free(struct peer_cache *c);

/* true with *id when pem was verified under generation and now is before
 * its notAfter. */
bool peer_cache_get(struct peer_cache *c, const char *pem, unsigned generation, time_t now,
                    struct peer_identity *id);

/* Records a verified certificate (out of memory: nothing is recorded). */
void peer_cache_put(struct peer_cache *c, const char *pem, unsigned generation, time_t not_after,
                    const struct peer_identity *id);

#endif
