/* A service's PostgreSQL connection (libpq) and its versioned schema.
 *
 * One connection guarded by a mutex, or a small pool of them: statements
 * are short and the slow work (booting VMs, crypto) happens outside it.
 * Every statement is one round trip with text parameters (hot ones
 * prepared once per connection); multi-row changes that must be atomic
 * are written as one statement (a CTE) so no transaction spans a lock
 * release, and no caller relies on two statements sharing a session. A
 * broken connection (PostgreSQL restarted) is reset once before a
 * statement fails. */
#ifndef AIRLOCK_DB_H
#define AIRLOCK_DB_H

#include <libpq-fe.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#define DB_MAX_CONNS 8

struct db {
    PGconn *conn;                 /* conns[0]: the lock holder's (migrations) */
    pthread_mutex_t lock;
    PGconn *conns[DB_MAX_CONNS];
    bool busy[DB_MAX_CONNS];      /* under lock; conns[1..] serve db_query in a pool */
    int n_conns;
    pthread_cond_t freed;         /* a pool connection became idle */
};

/* One connection: db_query holds the lock for each statement, so a
 * session (e.g. an advisory lock) spans every statement. */
int db_open(struct db *db, const char *url, char *err, size_t errlen);
/* n_conns (1..DB_MAX_CONNS) connections: with more than one, db_query
 * runs statements side by side on conns[1..]; conns[0] is left to the
 * callers that hold the lock (db_query_locked, db_migrate). */
int db_open_pool(struct db *db, const char *url, int n_conns, char *err, size_t errlen);
void db_close(struct db *db);

/* Runs sql with n text parameters (NULL entries are SQL NULL) and returns
 * the result (PQclear it), or NULL with the server's message in err. Takes
 * the lock for the statement (one connection) or a pool connection. */
PGresult *db_query(struct db *db, const char *sql, int n, const char *const *params, char *err,
                   size_t errlen);
/* The same for a statement run often (a request's hot path): prepared
 * once per connection as name (one name per sql text) and then run
 * without being parsed and planned again. name NULL = db_query. */
PGresult *db_query_prepared(struct db *db, const char *name, const char *sql, int n,
                            const char *const *params, char *err, size_t errlen);
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
