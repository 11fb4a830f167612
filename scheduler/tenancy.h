/* Projects and API keys. Secrets are "ak_" + 64 hex digits, shown once;
 * the database keeps only their SHA-256. A function that fails returns -1
 * with e set (unavailable when the database is). */
#ifndef AIRLOCK_SCHEDULER_TENANCY_H
#define AIRLOCK_SCHEDULER_TENANCY_H

#include <stdbool.h>
#include <stddef.h>

#include "airlock_error.h"
#include "db.h"

#define TENANCY_DEFAULT_PROJECT "prj_default"

struct principal {
    char key_id[64];
    char project_id[64];
    bool admin;
};

/* db_migrate bootstrap step (arg: the data directory): at first start,
 * creates the default project and an admin key in it, prints the secret
 * once on stdout and writes it (mode 0600) to DATA_DIR/admin-key. */
int tenancy_bootstrap(struct db *db, void *data_dir, char *err, size_t errlen);

int tenancy_authenticate(struct db *db, const char *api_key, struct principal *out,
                         struct airlock_error *e);

/* New project; id (prj_…) and created_unix_ms into the out buffers. */
int tenancy_create_project(struct db *db, const char *name, char *id, size_t idlen,
                           long long *created_unix_ms, struct airlock_error *e);

/* New project key; secret gets the only copy of the secret. */
int tenancy_create_key(struct db *db, const char *project_id, const char *name, char *key_id,
                       size_t idlen, char *secret, size_t secretlen, long long *created_unix_ms,
                       struct airlock_error *e);

/* Every project, oldest first: rows of (id, name, created ms). */
int tenancy_list_projects(struct db *db, PGresult **rows, struct airlock_error *e);

/* A project's keys, oldest first: rows of (id, name, admin 't'/'f',
 * created ms, revoked ms or 0). Not found for an unknown project. */
int tenancy_list_keys(struct db *db, const char *project_id, PGresult **rows,
                      struct airlock_error *e);

/* Where the key's columns start in tenancy_revoke_key's row. */
#define TENANCY_REVOKED_KEY_COLUMN 3

/* Revokes key_id of project_id at once (Authenticate refuses it from the
 * next request); *row has the key as tenancy_list_keys's rows do, from
 * column TENANCY_REVOKED_KEY_COLUMN. Not found for a key not of
 * that project, state for one revoked already or for the
 * last admin key in force. */
int tenancy_revoke_key(struct db *db, const char *project_id, const char *key_id, PGresult **row,
                       struct airlock_error *e);

#endif
