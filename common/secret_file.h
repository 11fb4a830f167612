/* Reading a small secret from a file (the internal token, NATS
 * credentials): the file must be private to its owner, so a secret is
 * never taken from a file others could have read or written. */
#ifndef AIRLOCK_SECRET_FILE_H
#define AIRLOCK_SECRET_FILE_H

#include <stddef.h>

/* Reads path, a regular file (symlinks followed: Kubernetes mounts Secret
 * keys as links) with no group or other permission bits, of at most max
 * bytes after one trailing newline (\n or \r\n) is dropped. what names the
 * secret in messages ("internal token"). Returns the malloc'd text, or NULL
 * with a message naming path in err; the message never contains the text.
 * Free it with secret_free. */
char *secret_file_load(const char *path, const char *what, size_t max, char *err, size_t errlen);

/* Zeroes and frees a secret_file_load result (NULL is fine). */
void secret_free(char *secret);

#endif
