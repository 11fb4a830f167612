/* The vault service's state: its database, the master key (locked memory),
 * the rate-limit buckets and the data keys of unlocked BYOK projects. */
#ifndef AIRLOCK_VAULT_H
#define AIRLOCK_VAULT_H

#include <stdbool.h>
#include <stddef.h>

#include "airlock_error.h"
#include "db.h"
#include "ratelimit.h"
#include "unlocked_keys.h"
#include "vault_metrics.h"

struct vault {
    struct db db;
    unsigned char *master_key; /* VAULT_KEY_BYTES, secmem */
    struct ratelimit ratelimit;
    struct unlocked_keys unlocked;
    struct vault_metrics metrics; /* set up by main after vault_init */
};

/* Opens the database, applies vault's migrations and loads (or creates)
 * the master key. 0 or -1 with err. */
int vault_init(struct vault *v, const char *database_url, const char *master_key_file, char *err,
               size_t errlen);
void vault_shutdown(struct vault *v);

/* Checks an id field (project_id, sandbox_id, name): 1..128 bytes of
 * [A-Za-z0-9_.-], or empty when !required. -1 with e invalid, "field: why". */
int vault_check_id(const char *field, const char *value, bool required, struct airlock_error *e);

/* The owner a list or delete names: project_id, or org_id alone (then
 * *by_org). -1 with e invalid, "field: why". */
int vault_check_owner(const char *project_id, const char *org_id, bool *by_org,
                      struct airlock_error *e);

/* Frees a string of a protobuf-c message we filled; unset ones point at
 * protobuf-c's shared static empty string. */
void vault_free_string(char *s);

#endif
