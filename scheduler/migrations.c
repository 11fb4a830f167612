/* Versioned schema migrations. Each entry is applied once, in order, inside
 * its own transaction together with its schema_migrations row; a version is
 * never edited after it ships — changes are new entries. */
#include <stdio.h>
#include <stdlib.h>

#include "db.h"
#include "log.h"

/* Any constant the other users of this database do not use. */
#define MIGRATION_LOCK_KEY "7362104"

static const char *const migrations[] = {
    /* 1: the control plane's tables. */
    "CREATE TABLE projects ("
    "  id text PRIMARY KEY,"
    "  name text NOT NULL,"
    "  created_at timestamptz NOT NULL DEFAULT now());"
    "CREATE TABLE api_keys ("
    "  id text PRIMARY KEY,"
    "  project_id text NOT NULL REFERENCES projects(id),"
    "  name text NOT NULL DEFAULT '',"
    "  sha256 text NOT NULL UNIQUE," /* hex SHA-256 of the secret; the secret is never stored */
    "  admin boolean NOT NULL DEFAULT false,"
    "  created_at timestamptz NOT NULL DEFAULT now(),"
    "  revoked_at timestamptz);"
    "CREATE TABLE nodes ("
    "  id text PRIMARY KEY,"
    "  vmhost_addr text NOT NULL,"
    "  capacity integer NOT NULL,"
    "  sandboxes integer NOT NULL,"
    "  free_memory_mb bigint NOT NULL,"
    "  accel text NOT NULL,"
    "  last_seen timestamptz NOT NULL);"
    "CREATE TABLE templates ("
    "  id text PRIMARY KEY,"
    "  project_id text REFERENCES projects(id)," /* NULL = shared by all projects */
    "  created_at timestamptz NOT NULL DEFAULT now());"
    "INSERT INTO templates (id) VALUES ('default');"
    "CREATE TABLE sandboxes ("
    "  id text PRIMARY KEY,"
    "  project_id text NOT NULL REFERENCES projects(id),"
    "  state text NOT NULL,"
    "  template text NOT NULL REFERENCES templates(id),"
    "  cpus integer NOT NULL,"
    "  memory_mb integer NOT NULL,"
    "  node_id text REFERENCES nodes(id),"
    "  env jsonb NOT NULL DEFAULT '{}',"
    "  metadata jsonb NOT NULL DEFAULT '{}',"
    "  idle_timeout_s integer NOT NULL,"
    "  idempotency_key text,"
    "  error text NOT NULL DEFAULT '',"
    "  created_at timestamptz NOT NULL DEFAULT now(),"
    "  updated_at timestamptz NOT NULL DEFAULT now(),"
    "  UNIQUE (project_id, idempotency_key));"
    "CREATE INDEX sandboxes_live_by_project ON sandboxes (project_id) WHERE state <> 'deleted';"
    "CREATE TABLE sandbox_transitions ("
    "  id bigserial PRIMARY KEY,"
    "  sandbox_id text NOT NULL REFERENCES sandboxes(id),"
    "  at timestamptz NOT NULL DEFAULT now(),"
    "  who text NOT NULL,"
    "  from_state text," /* NULL for the first row (creation) */
    "  to_state text NOT NULL,"
    "  why text NOT NULL DEFAULT '',"
    "  request_id text NOT NULL DEFAULT '');"
    "CREATE INDEX sandbox_transitions_by_sandbox ON sandbox_transitions (sandbox_id, id);"
    "CREATE TABLE checkpoints ("
    "  sandbox_id text NOT NULL REFERENCES sandboxes(id),"
    "  name text NOT NULL,"
    "  kind text NOT NULL,"
    "  created_at timestamptz NOT NULL DEFAULT now(),"
    "  PRIMARY KEY (sandbox_id, name));",
};

static int migrate_locked(struct db *db, char *err, size_t errlen)
{
    PGresult *res = db_query_locked(db,
                                    "CREATE TABLE IF NOT EXISTS schema_migrations ("
                                    " version integer PRIMARY KEY,"
                                    " applied_at timestamptz NOT NULL DEFAULT now())",
                                    0, NULL, err, errlen);
    if (!res)
        return -1;
    PQclear(res);
    res = db_query_locked(db, "SELECT coalesce(max(version), 0) FROM schema_migrations", 0, NULL,
                          err, errlen);
    if (!res)
        return -1;
    int have = atoi(PQgetvalue(res, 0, 0));
    PQclear(res);
    int want = (int)(sizeof(migrations) / sizeof(*migrations));
    for (int v = have + 1; v <= want; v++) {
        char version[16];
        snprintf(version, sizeof(version), "%d", v);
        const char *params[] = { version };
        /* One transaction per version: the schema change and its record
         * land together or not at all. */
        res = db_query_locked(db, "BEGIN", 0, NULL, err, errlen);
        if (!res)
            return -1;
        PQclear(res);
        /* Multi-statement text needs the simple protocol (PQexec). */
        res = PQexec(db->conn, migrations[v - 1]);
        if (PQresultStatus(res) != PGRES_COMMAND_OK) {
            snprintf(err, errlen, "migration %d: %s", v, PQresultErrorMessage(res));
            PQclear(res);
            PQclear(PQexec(db->conn, "ROLLBACK"));
            return -1;
        }
        PQclear(res);
        res = db_query_locked(db, "INSERT INTO schema_migrations (version) VALUES ($1::integer)", 1,
                              params, err, errlen);
        if (!res) {
            PQclear(PQexec(db->conn, "ROLLBACK"));
            return -1;
        }
        PQclear(res);
        res = db_query_locked(db, "COMMIT", 0, NULL, err, errlen);
        if (!res)
            return -1;
        PQclear(res);
        log_info("schema migration applied", "version=%d", v);
    }
    return 0;
}

int db_migrate(struct db *db, int (*bootstrap)(struct db *db, void *arg, char *err, size_t errlen),
               void *arg, char *err, size_t errlen)
{
    pthread_mutex_lock(&db->lock);
    int rc = -1;
    PGresult *res = db_query_locked(db, "SELECT pg_advisory_lock(" MIGRATION_LOCK_KEY ")", 0, NULL,
                                    err, errlen);
    if (!res)
        goto out;
    PQclear(res);
    rc = migrate_locked(db, err, errlen);
    if (rc == 0 && bootstrap)
        rc = bootstrap(db, arg, err, errlen);
    char unlock_err[256];
    res = db_query_locked(db, "SELECT pg_advisory_unlock(" MIGRATION_LOCK_KEY ")", 0, NULL,
                          unlock_err, sizeof(unlock_err));
    PQclear(res);
out:
    pthread_mutex_unlock(&db->lock);
    return rc;
}
