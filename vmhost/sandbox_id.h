/* The check every name that becomes a directory passes (sandbox ids,
 * checkpoint names): a leaf, so the files that check names need nothing
 * else of the sandbox module. */
#ifndef AIRLOCK_VMHOST_SANDBOX_ID_H
#define AIRLOCK_VMHOST_SANDBOX_ID_H

#include <stdbool.h>

/* 1-64 characters of a-z, 0-9, '_' and '-'. */
bool sandbox_id_valid(const char *id);

#endif
