/* Sandbox ids as every service takes them: what vmhost and the scheduler
 * generate and what a caller may choose, and the names that become a
 * directory on a node (checkpoints). One check, so the gateway, egress and
 * vmhost refuse the same ids. */
#ifndef AIRLOCK_SANDBOX_ID_H
#define AIRLOCK_SANDBOX_ID_H

#include <stdbool.h>

/* 1-64 characters of a-z, 0-9, '_' and '-'. */
bool sandbox_id_valid(const char *id);

#endif
