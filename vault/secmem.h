/* Memory for key material and plaintext secrets: its own pages, locked in
 * RAM (never swapped) and excluded from core dumps, zeroed before release. */
#ifndef AIRLOCK_VAULT_SECMEM_H
#define AIRLOCK_VAULT_SECMEM_H

#include <stddef.h>

/* Zeroed memory for len bytes; NULL when mmap or mlock fails (vault would
 * rather refuse than hold a key in swappable memory). */
void *secmem_alloc(size_t len);
/* Zeroes and unmaps; p may be NULL. */
void secmem_free(void *p, size_t len);

#endif
