/* Paths, argv and environment entries arrive as bytes (Linux names need not
 * be UTF-8). These helpers turn them into C strings safely and quote them
 * for human-readable messages. */
#ifndef GUESTD_BYTES_H
#define GUESTD_BYTES_H

#include <protobuf-c/protobuf-c.h>
#include <stddef.h>

/* A malloc'd NUL-terminated copy, or NULL when b contains a NUL byte
 * (errno = EINVAL) or on allocation failure (errno = ENOMEM). */
char *bytes_to_cstr(const ProtobufCBinaryData *b);

/* Like bytes_to_cstr for a path: rejects empty paths, and makes relative
 * paths relative to "/" (the daemon's working directory is not part of the
 * protocol). Returns NULL with errno EINVAL or ENOMEM. */
char *bytes_to_path(const ProtobufCBinaryData *b);

/* s between double quotes, with bytes outside printable ASCII, '"' and '\'
 * escaped as \xNN; truncated with "..." if long. For log lines and Result
 * messages: returns a value so it can be used inside one expression:
 *   printf("%s", quoted(path).s) */
struct quoted {
    char s[384];
};
struct quoted quoted(const char *s);
struct quoted quoted_bytes(const void *data, size_t len);

#endif
