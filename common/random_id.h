/* Unguessable identifiers and secrets from the kernel's CSPRNG. */
#ifndef AIRLOCK_RANDOM_ID_H
#define AIRLOCK_RANDOM_ID_H

#include <stddef.h>

/* prefix followed by 2*n_bytes lowercase hex digits ("sb_3fa9..."). Returns
 * 0, or -1 when out is too small or getrandom failed. */
int random_id(const char *prefix, size_t n_bytes, char *out, size_t outlen);

#endif
