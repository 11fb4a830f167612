/* The master key: 32 random bytes in a file only root can read. */
#ifndef AIRLOCK_VAULT_MASTER_KEY_H
#define AIRLOCK_VAULT_MASTER_KEY_H

#include <stddef.h>

/* Reads path into key (VAULT_KEY_BYTES, in locked memory), creating it
 * (mode 0600, random) when missing. Refuses a file of another size or one
 * that group or others may read. 0 or -1 with err. */
int master_key_load(const char *path, unsigned char *key, char *err, size_t errlen);

#endif
