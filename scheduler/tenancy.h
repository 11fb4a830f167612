/* Projects and API keys. Secrets are "ak_" + 64 hex digits, shown once;
 * the database keeps only their SHA-256. */
#ifndef AIRLOCK_SCHEDULER_TENANCY_H
#define AIRLOCK_SCHEDULER_TENANCY_H

#include <grpc/status.h>
#include <stdbool.h>
#include <stddef.h>

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

grpc_status_code tenancy_authenticate(struct db *db, const char *api_key, struct principal *out,
                                      char *err, size_t errlen);

/* New project; id (prj_…) and created_unix_ms into the out buffers. */
grpc_status_code tenancy_create_project(struct db *db, const char *name, char *id, size_t idlen,
                                        long long *created_unix_ms, char *err, size_t errlen);

/* New project key; secret gets the only copy of the secret. */
grpc_status_code tenancy_create_key(struct db *db, const char *project_id, const char *name,
                                    char *key_id, size_t idlen, char *secret, size_t secretlen,
                                    long long *created_unix_ms, char *err, size_t errlen);

/* Every project, oldest first: rows of (id, name, created ms). */
PGresult *tenancy_list_projects(struct db *db, char *err, size_t errlen);

/* A project's keys, oldest first: rows of (id, name, admin 't'/'f',
 * created ms, revoked ms or 0). NOT_FOUND for an unknown project. */
grpc_status_code tenancy_list_keys(struct db *db, const char *project_id, PGresult **rows,
                                   char *err, size_t errlen);

/* Where the key's columns start in tenancy_revoke_key's row. */
#define TENANCY_REVOKED_KEY_COLUMN 3

/* Revokes key_id of project_id at once (Authenticate refuses it from the
 * next request); *row has the key as tenancy_list_keys's rows do, from
 * column TENANCY_REVOKED_KEY_COLUMN. NOT_FOUND for a key not of
 * that project, FAILED_PRECONDITION for one revoked already or for the
 * last admin key in force. */
grpc_status_code tenancy_revoke_key(struct db *db, const char *project_id, const char *key_id,
                                    PGresult **row, char *err, size_t errlen);

#endif
