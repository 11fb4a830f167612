/* The shared internal token: the secret airlock's services present to each
 * other (gRPC "authorization: Bearer <token>"; NATS has a user per identity
 * instead: nats_auth/nats_credentials.h) so that only
 * they, not a sandbox that can reach the pod network, may call the internal
 * APIs. Every service reads it once at start from --internal-token-file
 * (env AIRLOCK_INTERNAL_TOKEN_FILE). See docs/operations.md. */
#ifndef AIRLOCK_INTERNAL_TOKEN_H
#define AIRLOCK_INTERNAL_TOKEN_H

#include <stddef.h>

#define INTERNAL_TOKEN_ENV "AIRLOCK_INTERNAL_TOKEN_FILE"
#define INTERNAL_TOKEN_MIN_LEN 32
#define INTERNAL_TOKEN_MAX_LEN 1024

/* Reads the token from path: one trailing newline (\n or \r\n) is dropped.
 * Refuses a file group or others may read (mode & 077), an empty file, a
 * token shorter than INTERNAL_TOKEN_MIN_LEN or with characters other than
 * printable ASCII without space, quote and backslash (it goes into HTTP
 * headers and nats-server's config). Returns the malloc'd token, or NULL
 * with a message naming path in err; the message never contains the token. */
char *internal_token_load(const char *path, char *err, size_t errlen);

/* The token a service runs with: from path (its --internal-token-file), else
 * from the file named by env AIRLOCK_INTERNAL_TOKEN_FILE. With neither,
 * *token = NULL (the internal API stays unauthenticated, as before) and one
 * warning line is logged. Returns 0, or -1 with a message in err. */
int internal_token_configure(const char *path, char **token, char *err, size_t errlen);

#endif
