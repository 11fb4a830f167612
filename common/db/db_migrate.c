/* The versioned migration runner every service with a schema shares. */
#include <stdio.h>
#include <stdlib.h>

#include "db.h"
#include "log.h"

/* Runs one statement without parameters; fmt may name one of the schema's
 * identifiers (a), which are compile-time constants, never input. *out, when
 * given, gets the result. */
static int exec_fmt(struct db *db, char *err, size_t errlen, const char *fmt, const char *a,
                    PGresult **out)
{
    char sql[512];
    snprintf(sql, sizeof(sql), fmt, a ? a : "");
    PGresult *res = db_query_locked(db, sql, 0, NULL, err, errlen);
    if (!res)
        return -1;
    if (out)
        *out = res;
    else
        PQclear(res);
    return 0;
}

static int apply_version(struct db *db, const struct db_schema *schema, int v, char *err,
                         size_t errlen)
{
    char version[16], insert[256];
    snprintf(version, sizeof(version), "%d", v);
    snprintf(insert, sizeof(insert), "INSERT INTO %s (version) VALUES ($1::integer)",
             schema->version_table);
    const char *params[] = { version };
    /* One transaction per version: the schema change and its record land
     * together or not at all. */
    if (exec_fmt(db, err, errlen, "BEGIN", NULL, NULL) < 0)
        return -1;
    /* Multi-statement text needs the simple protocol (PQexec). */
    PGresult *res = PQexec(db->conn, schema->migrations[v - 1]);
    if (PQresultStatus(res) != PGRES_COMMAND_OK) {
        snprintf(err, errlen, "migration %s %d: %s", schema->version_table, v,
                 PQresultErrorMessage(res));
        goto rollback;
    }
    PQclear(res);
    res = db_query_locked(db, insert, 1, params, err, errlen);
    if (!res)
        goto rollback;
    PQclear(res);
    if (exec_fmt(db, err, errlen, "COMMIT", NULL, NULL) < 0)
        return -1;
    log_info("schema migration applied", "schema=%s version=%d", schema->version_table, v);
    return 0;
rollback:
    PQclear(res);
    PQclear(PQexec(db->conn, "ROLLBACK"));
    return -1;
}

static int migrate_locked(struct db *db, const struct db_schema *schema, char *err, size_t errlen)
{
    PGresult *res = NULL;
    if (exec_fmt(db, err, errlen,
                 "CREATE TABLE IF NOT EXISTS %s ("
                 " version integer PRIMARY KEY,"
                 " applied_at timestamptz NOT NULL DEFAULT now())",
                 schema->version_table, NULL) < 0 ||
        exec_fmt(db, err, errlen, "SELECT coalesce(max(version), 0) FROM %s",
                 schema->version_table, &res) < 0)
        return -1;
    int have = atoi(PQgetvalue(res, 0, 0));
    PQclear(res);
    for (int v = have + 1; v <= (int)schema->n_migrations; v++)
        if (apply_version(db, schema, v, err, errlen) < 0)
            return -1;
    return 0;
}

int db_migrate(struct db *db, const struct db_schema *schema,
               int (*bootstrap)(struct db *db, void *arg, char *err, size_t errlen), void *arg,
               char *err, size_t errlen)
{
    pthread_mutex_lock(&db->lock);
    int rc = -1;
    if (exec_fmt(db, err, errlen, "SELECT pg_advisory_lock(%s)", schema->lock_key, NULL) < 0)
        goto out;
    rc = migrate_locked(db, schema, err, errlen);
    if (rc == 0 && bootstrap)
        rc = bootstrap(db, arg, err, errlen);
    char unlock_err[256];
    exec_fmt(db, unlock_err, sizeof(unlock_err), "SELECT pg_advisory_unlock(%s)", schema->lock_key,
             NULL);
out:
    pthread_mutex_unlock(&db->lock);
    return rc;
}
