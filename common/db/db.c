#include "db.h"

#include <stdio.h>
#include <string.h>

#include "log.h"

/* NOTICEs ("relation ... already exists, skipping") are not our errors. */
static void db_ignore_notice(void *arg, const char *message)
{
    (void)arg;
    (void)message;
}

/* generic_plans: the connection runs prepared statements with the plan
 * made once for any parameters. By default PostgreSQL plans the first
 * five runs of each statement anew for their values, on every connection
 * (the create's insert: 0.9 ms each, 0.3 with the generic plan). What runs
 * on a pool's connections are key lookups and single-row writes on small
 * tables, which one plan suits. A plan_cache_mode in url's own options
 * wins (later keywords override). */
static PGconn *db_connect(const char *url, bool generic_plans, char *err, size_t errlen)
{
    const char *const keys[] = { "options", "dbname", NULL };
    const char *const values[] = { "-c plan_cache_mode=force_generic_plan", url, NULL };
    PGconn *conn = generic_plans ? PQconnectdbParams(keys, values, 1) : PQconnectdb(url);
    if (PQstatus(conn) != CONNECTION_OK) {
        snprintf(err, errlen, "database: %s", PQerrorMessage(conn));
        /* libpq messages end in a newline. */
        err[strcspn(err, "\n")] = '\0';
        PQfinish(conn);
        return NULL;
    }
    PQsetNoticeProcessor(conn, db_ignore_notice, NULL);
    return conn;
}

int db_open_pool(struct db *db, const char *url, int n_conns, char *err, size_t errlen)
{
    memset(db, 0, sizeof(*db));
    pthread_mutex_init(&db->lock, NULL);
    pthread_cond_init(&db->freed, NULL);
    if (n_conns < 1 || n_conns > DB_MAX_CONNS) {
        snprintf(err, errlen, "database: %d connections (1..%d)", n_conns, DB_MAX_CONNS);
        goto fail;
    }
    for (; db->n_conns < n_conns; db->n_conns++)
        if (!(db->conns[db->n_conns] = db_connect(url, db->n_conns > 0, err, errlen)))
            goto fail;
    db->conn = db->conns[0];
    return 0;
fail:
    db_close(db);
    return -1;
}

int db_open(struct db *db, const char *url, char *err, size_t errlen)
{
    return db_open_pool(db, url, 1, err, errlen);
}

void db_close(struct db *db)
{
    for (int i = 0; i < db->n_conns; i++)
        PQfinish(db->conns[i]);
    db->n_conns = 0;
    db->conn = NULL;
    pthread_cond_destroy(&db->freed);
    pthread_mutex_destroy(&db->lock);
}

/* name NULL: sql parsed and planned for this run; else the statement
 * prepared as name on this connection, prepared first when it is not
 * (yet, or any more: a reset connection forgets its statements). */
static PGresult *db_exec(PGconn *conn, const char *name, const char *sql, int n,
                         const char *const *params)
{
    if (!name)
        return PQexecParams(conn, sql, n, NULL, params, NULL, NULL, 0);
    PGresult *res = PQexecPrepared(conn, name, n, params, NULL, NULL, 0);
    const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
    if (!state || strcmp(state, "26000") != 0) /* invalid_sql_statement_name */
        return res;
    PQclear(res);
    res = PQprepare(conn, name, sql, n, NULL);
    if (PQresultStatus(res) != PGRES_COMMAND_OK)
        return res;
    PQclear(res);
    return PQexecPrepared(conn, name, n, params, NULL, NULL, 0);
}

/* One statement on conn, which the caller has to itself. */
static PGresult *db_run(PGconn *conn, const char *name, const char *sql, int n,
                        const char *const *params, char *err, size_t errlen)
{
    PGresult *res = db_exec(conn, name, sql, n, params);
    if (PQstatus(conn) == CONNECTION_BAD) {
        /* PostgreSQL restarted: reconnect and try the statement once more.
         * Statements are single round trips, so a retry cannot half-apply. */
        PQclear(res);
        log_warn("database connection lost, reconnecting");
        PQreset(conn);
        res = PQstatus(conn) == CONNECTION_OK ? db_exec(conn, name, sql, n, params) : NULL;
    }
    ExecStatusType st = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;
    if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK)
        return res;
    snprintf(err, errlen, "database: %s", res ? PQresultErrorMessage(res) : PQerrorMessage(conn));
    err[strcspn(err, "\n")] = '\0';
    PQclear(res);
    return NULL;
}

PGresult *db_query_locked(struct db *db, const char *sql, int n, const char *const *params,
                          char *err, size_t errlen)
{
    return db_run(db->conn, NULL, sql, n, params, err, errlen);
}

PGresult *db_query_prepared(struct db *db, const char *name, const char *sql, int n,
                            const char *const *params, char *err, size_t errlen)
{
    pthread_mutex_lock(&db->lock);
    if (db->n_conns == 1) {
        PGresult *res = db_run(db->conn, name, sql, n, params, err, errlen);
        pthread_mutex_unlock(&db->lock);
        return res;
    }
    /* A pool: an idle connection other than the first (the lock holders'),
     * used without the lock so statements run side by side. */
    int i;
    for (;;) {
        for (i = 1; i < db->n_conns && db->busy[i]; i++)
            ;
        if (i < db->n_conns)
            break;
        pthread_cond_wait(&db->freed, &db->lock);
    }
    db->busy[i] = true;
    pthread_mutex_unlock(&db->lock);
    PGresult *res = db_run(db->conns[i], name, sql, n, params, err, errlen);
    pthread_mutex_lock(&db->lock);
    db->busy[i] = false;
    pthread_cond_signal(&db->freed);
    pthread_mutex_unlock(&db->lock);
    return res;
}

PGresult *db_query(struct db *db, const char *sql, int n, const char *const *params, char *err,
                   size_t errlen)
{
    return db_query_prepared(db, NULL, sql, n, params, err, errlen);
}
