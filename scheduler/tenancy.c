#include "tenancy.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "log.h"
#include "random_id.h"

#define KEY_PREFIX "ak_"
#define KEY_SECRET_BYTES 32
#define KEY_LEN (sizeof(KEY_PREFIX) - 1 + 2 * KEY_SECRET_BYTES)

static int sha256_hex(const char *s, char out[65])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    if (!EVP_Digest(s, strlen(s), md, &mdlen, EVP_sha256(), NULL) || mdlen != 32)
        return -1;
    for (unsigned i = 0; i < mdlen; i++)
        snprintf(out + 2 * i, 3, "%02x", md[i]);
    return 0;
}

/* Inserts a key row for project_id; secret receives the new secret. */
static int
insert_key(struct db *db,
           PGresult *(*query)(struct db *, const char *, int, const char *const *, char *, size_t),
           const char *project_id, const char *name, bool admin, char *key_id, size_t idlen,
           char *secret, size_t secretlen, long long *created_unix_ms, struct airlock_error *e)
{
    char hash[65];
    if (random_id("key_", 8, key_id, idlen) < 0 ||
        random_id(KEY_PREFIX, KEY_SECRET_BYTES, secret, secretlen) < 0 ||
        sha256_hex(secret, hash) < 0)
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "cannot generate a key");
    const char *params[] = { key_id, project_id, name, hash, admin ? "t" : "f" };
    /* INSERT ... SELECT so an unknown project yields no row (not found)
     * rather than a foreign-key error. */
    PGresult *res = query(db,
                          "INSERT INTO api_keys (id, project_id, name, sha256, admin)"
                          " SELECT $1, id, $3, $4, $5::boolean FROM projects WHERE id = $2"
                          " RETURNING (extract(epoch from created_at) * 1000)::bigint",
                          5, params, AIRLOCK_ERROR_MSG(e));
    if (!res)
        return airlock_error_classify(e, AIRLOCK_ERR_UNAVAILABLE);
    int rc = 0;
    if (PQntuples(res) == 0) {
        rc = airlock_error_set(e, AIRLOCK_ERR_NOT_FOUND, "project %s not found", project_id);
    } else if (created_unix_ms) {
        *created_unix_ms = atoll(PQgetvalue(res, 0, 0));
    }
    PQclear(res);
    return rc;
}

int tenancy_bootstrap(struct db *db, void *data_dir, char *err, size_t errlen)
{
    PGresult *res = db_query_locked(
        db, "INSERT INTO projects (id, name) VALUES ('" TENANCY_DEFAULT_PROJECT "', 'default')"
            " ON CONFLICT (id) DO NOTHING", 0, NULL, err, errlen);
    if (!res)
        return -1;
    PQclear(res);
    res = db_query_locked(db, "SELECT count(*) FROM api_keys WHERE admin AND revoked_at IS NULL",
                          0, NULL, err, errlen);
    if (!res)
        return -1;
    long have = atol(PQgetvalue(res, 0, 0));
    PQclear(res);
    if (have > 0)
        return 0;
    char key_id[64], secret[KEY_LEN + 1], path[4096];
    struct airlock_error e;
    if (insert_key(db, db_query_locked, TENANCY_DEFAULT_PROJECT, "admin", true, key_id,
                   sizeof(key_id), secret, sizeof(secret), NULL, &e) < 0) {
        snprintf(err, errlen, "%s", e.message); /* db_migrate's step reports a message */
        return -1;
    }
    char line[KEY_LEN + 2];
    snprintf(line, sizeof(line), "%s\n", secret);
    if (fs_path(path, sizeof(path), "%s/admin-key", (const char *)data_dir) < 0 ||
        fs_write_file_atomic(path, line, strlen(line), 0600, err, errlen) < 0)
        return -1;
    /* The one time the secret is shown; the database keeps only its hash. */
    printf("admin key (shown once, also in %s): %s\n", path, secret);
    fflush(stdout);
    log_info("admin key created", "key=%s path=%s", key_id, path);
    return 0;
}

int tenancy_authenticate(struct db *db, const char *api_key, struct principal *out,
                         struct airlock_error *e)
{
    char hash[65];
    if (strlen(api_key) != KEY_LEN || strncmp(api_key, KEY_PREFIX, 3) != 0)
        return airlock_error_set(e, AIRLOCK_ERR_UNAUTHENTICATED,
                                 "malformed API key (expected %s followed by %d hex digits)",
                                 KEY_PREFIX, 2 * KEY_SECRET_BYTES);
    if (sha256_hex(api_key, hash) < 0)
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "cannot hash the key");
    const char *params[] = { hash };
    /* Every API request: prepared once. */
    PGresult *res = db_query_prepared(db, "api_key_authenticate",
                                      "SELECT id, project_id, admin FROM api_keys"
                                      " WHERE sha256 = $1 AND revoked_at IS NULL",
                                      1, params, AIRLOCK_ERROR_MSG(e));
    if (!res)
        return airlock_error_classify(e, AIRLOCK_ERR_UNAVAILABLE);
    int rc = 0;
    if (PQntuples(res) != 1) {
        rc = airlock_error_set(e, AIRLOCK_ERR_UNAUTHENTICATED, "unknown API key");
    } else {
        snprintf(out->key_id, sizeof(out->key_id), "%s", PQgetvalue(res, 0, 0));
        snprintf(out->project_id, sizeof(out->project_id), "%s", PQgetvalue(res, 0, 1));
        out->admin = PQgetvalue(res, 0, 2)[0] == 't';
    }
    PQclear(res);
    return rc;
}

int tenancy_create_project(struct db *db, const char *name, char *id, size_t idlen,
                           long long *created_unix_ms, struct airlock_error *e)
{
    if (random_id("prj_", 8, id, idlen) < 0)
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "cannot generate an id");
    const char *params[] = { id, name };
    PGresult *res = db_query(db,
                             "INSERT INTO projects (id, name) VALUES ($1, $2)"
                             " RETURNING (extract(epoch from created_at) * 1000)::bigint",
                             2, params, AIRLOCK_ERROR_MSG(e));
    if (!res)
        return airlock_error_classify(e, AIRLOCK_ERR_UNAVAILABLE);
    *created_unix_ms = atoll(PQgetvalue(res, 0, 0));
    PQclear(res);
    return 0;
}

int tenancy_create_key(struct db *db, const char *project_id, const char *name, char *key_id,
                       size_t idlen, char *secret, size_t secretlen, long long *created_unix_ms,
                       struct airlock_error *e)
{
    return insert_key(db, db_query, project_id, name, false, key_id, idlen, secret, secretlen,
                      created_unix_ms, e);
}

#define KEY_COLUMNS                                                                                \
    "id, name, admin, (extract(epoch from created_at) * 1000)::bigint,"                           \
    " coalesce((extract(epoch from revoked_at) * 1000)::bigint, 0)"

int tenancy_list_projects(struct db *db, PGresult **rows, struct airlock_error *e)
{
    *rows = db_query(db,
                     "SELECT id, name, (extract(epoch from created_at) * 1000)::bigint"
                     " FROM projects ORDER BY created_at, id",
                     0, NULL, AIRLOCK_ERROR_MSG(e));
    return *rows ? 0 : airlock_error_classify(e, AIRLOCK_ERR_UNAVAILABLE);
}

int tenancy_list_keys(struct db *db, const char *project_id, PGresult **rows,
                      struct airlock_error *e)
{
    const char *params[] = { project_id };
    /* The project's existence rides along, so an unknown one is not found
     * and not an empty list. */
    PGresult *res = db_query(db,
                             "SELECT " KEY_COLUMNS ", true FROM api_keys WHERE project_id = $1"
                             " UNION ALL SELECT '', '', false, 0, 0, false"
                             " WHERE NOT EXISTS (SELECT 1 FROM projects WHERE id = $1)"
                             " ORDER BY 4, 1",
                             1, params, AIRLOCK_ERROR_MSG(e));
    if (!res)
        return airlock_error_classify(e, AIRLOCK_ERR_UNAVAILABLE);
    if (PQntuples(res) == 1 && PQgetvalue(res, 0, 5)[0] == 'f') {
        PQclear(res);
        return airlock_error_set(e, AIRLOCK_ERR_NOT_FOUND, "project %s not found", project_id);
    }
    *rows = res;
    return 0;
}

int tenancy_revoke_key(struct db *db, const char *project_id, const char *key_id, PGresult **row,
                       struct airlock_error *e)
{
    const char *params[] = { project_id, key_id };
    /* One statement that locks the admin keys in force: two revokes of the
     * last two admin keys cannot both see the other still there. */
    PGresult *res = db_query(
        db,
        "WITH k AS (SELECT id, admin, revoked_at FROM api_keys WHERE id = $2 AND project_id = $1"
        "   FOR UPDATE),"
        " admins AS (SELECT count(*) AS n FROM (SELECT 1 FROM api_keys"
        "   WHERE admin AND revoked_at IS NULL FOR UPDATE) a),"
        " done AS (UPDATE api_keys SET revoked_at = now() WHERE id = (SELECT id FROM k)"
        "   AND revoked_at IS NULL AND (NOT admin OR (SELECT n FROM admins) > 1)"
        "   RETURNING " KEY_COLUMNS ")"
        " SELECT (SELECT count(*) FROM k), (SELECT revoked_at IS NOT NULL FROM k),"
        "   (SELECT admin FROM k), d.* FROM (SELECT 1) one LEFT JOIN done d ON true",
        2, params, AIRLOCK_ERROR_MSG(e));
    if (!res)
        return airlock_error_classify(e, AIRLOCK_ERR_UNAVAILABLE);
    int rc = 0;
    if (atoi(PQgetvalue(res, 0, 0)) == 0) {
        rc = airlock_error_set(e, AIRLOCK_ERR_NOT_FOUND, "key %s not found in project %s", key_id,
                               project_id);
    } else if (PQgetvalue(res, 0, 1)[0] == 't') {
        rc = airlock_error_set(e, AIRLOCK_ERR_STATE, "key %s is revoked already", key_id);
    } else if (PQgetisnull(res, 0, 3)) {
        rc = airlock_error_set(e, AIRLOCK_ERR_STATE,
                               "key %s is the last admin key: create another admin key first, or "
                               "everyone would be locked out",
                               key_id);
    }
    if (rc < 0) {
        PQclear(res);
        return rc;
    }
    *row = res; /* from column TENANCY_REVOKED_KEY_COLUMN: as tenancy_list_keys's */
    return 0;
}
