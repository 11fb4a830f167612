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

int db_open(struct db *db, const char *url, char *err, size_t errlen)
{
    memset(db, 0, sizeof(*db));
    pthread_mutex_init(&db->lock, NULL);
    db->conn = PQconnectdb(url);
    if (PQstatus(db->conn) != CONNECTION_OK) {
        snprintf(err, errlen, "database: %s", PQerrorMessage(db->conn));
        /* libpq messages end in a newline. */
        err[strcspn(err, "\n")] = '\0';
        db_close(db);
        return -1;
    }
    PQsetNoticeProcessor(db->conn, db_ignore_notice, NULL);
    return 0;
}

void db_close(struct db *db)
{
    if (db->conn)
        PQfinish(db->conn);
    db->conn = NULL;
    pthread_mutex_destroy(&db->lock);
}

static PGresult *db_exec(struct db *db, const char *sql, int n, const char *const *params)
{
    return PQexecParams(db->conn, sql, n, NULL, params, NULL, NULL, 0);
}

PGresult *db_query_locked(struct db *db, const char *sql, int n, const char *const *params,
                          char *err, size_t errlen)
{
    PGresult *res = db_exec(db, sql, n, params);
    if (PQstatus(db->conn) == CONNECTION_BAD) {
        /* PostgreSQL restarted: reconnect and try the statement once more.
         * Statements are single round trips, so a retry cannot half-apply. */
        PQclear(res);
        log_warn("database connection lost, reconnecting");
        PQreset(db->conn);
        res = PQstatus(db->conn) == CONNECTION_OK ? db_exec(db, sql, n, params) : NULL;
    }
    ExecStatusType st = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;
    if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK)
        return res;
    snprintf(err, errlen, "database: %s",
             res ? PQresultErrorMessage(res) : PQerrorMessage(db->conn));
    err[strcspn(err, "\n")] = '\0';
    PQclear(res);
    return NULL;
}

PGresult *db_query(struct db *db, const char *sql, int n, const char *const *params, char *err,
                   size_t errlen)
{
    pthread_mutex_lock(&db->lock);
    PGresult *res = db_query_locked(db, sql, n, params, err, errlen);
    pthread_mutex_unlock(&db->lock);
    return res;
}
