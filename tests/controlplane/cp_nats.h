/* The stack's NATS identities (cp_stack.h), and a test's own connection
 * to its nats-server as one of its users, from that user's credentials
 * file, over TLS with a certificate of the stack's PKI (cp_pki.h) as the
 * services connect (nats_credentials.h). */
#ifndef AIRLOCK_CP_NATS_H
#define AIRLOCK_CP_NATS_H

#include <nats/nats.h>

#include "tls_credentials.h"

/* The stack's nodes (cp_stack.h): the first always runs; the others have
 * a NATS user and identities always, and run in a stack of more nodes.
 * In a one-node stack CP_OTHER_NODE_ID is the node another node's
 * credentials must not speak for. */
#define CP_NODE_ID "cp-node"
#define CP_OTHER_NODE_ID "cp-node-b"
#define CP_THIRD_NODE_ID "cp-node-c"

/* Connects to url as the user in creds_file ("user:password"; NULL: no
 * user) with tls's certificate (NULL: plain TCP); on_error (may be NULL)
 * gets what the server refuses later, e.g. a permissions violation.
 * NATS_OK, or the connect's status (a bad file: NATS_ERR, with the reason
 * on stderr). */
natsStatus cp_nats_connect(const char *url, const char *creds_file, const struct tls_files *tls,
                           natsErrHandler on_error, void *closure, natsConnection **nc);

#endif
