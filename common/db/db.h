/* A service's PostgreSQL connection (libpq) and its versioned schema.
 *
 * One connection guarded by a mutex: statements are short and the slow work
 * (booting VMs, crypto) happens outside it. Every statement is one round trip with
 * text parameters; multi-row changes that must be atomic are written as one
 * statement (a CTE) so no transaction spans a lock release. A broken
 * connection (PostgreSQL restarted) is reset once before a statement fails. */
#ifndef AIRLOCK_DB_H
#define AIRLOCK_DB_H

#include <libpq-fe.h>
#include <pthread.h>
#include <stddef.h>

struct db {
    PGconn *conn;
    pthread_mutex_t lock;
};

int db_open(struct db *db, const char *url, char *err, size_t errlen);
void db_close(struct db *db);

/* Runs sql with n text parameters (NULL entries are SQL NULL) and returns
 * the result (PQclear it), or NULL with the server's message in err. Takes
 * the lock for the statement. */
PGresult *db_query(struct db *db, const char *sql, int n, const char *const *params, char *err,
                   size_t errlen);
/* The same, for callers that already hold db->lock (migrations). */
PGresult *db_query_locked(struct db *db, const char *sql, int n, const char *const *params,
                          char *err, size_t errlen);

/* One service's schema: migrations[i] is version i + 1, applied once, in
 * order, each in its own transaction with its row in version_table. A
 * version is never edited after it ships — changes are new entries. Services
 * sharing a database use distinct version tables and lock keys. */
struct db_schema {
    const char *version_table; /* "schema_migrations" */
    const char *lock_key;      /* advisory lock key, a decimal constant */
    const char *const *migrations;
    size_t n_migrations;
};

/* Applies the versioned schema migrations that are missing, under a
 * session advisory lock so replicas starting at once apply each exactly
 * once. Then runs bootstrap (may be NULL) while still holding the lock. */
int db_migrate(struct db *db, const struct db_schema *schema,
               int (*bootstrap)(struct db *db, void *arg, char *err, size_t errlen), void *arg,
               char *err, size_t errlen);

#endif
