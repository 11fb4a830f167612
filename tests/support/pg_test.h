/* A throwaway PostgreSQL for tests: initdb in a directory the test owns,
 * listening on a unix socket there only, stopped with pg_ctl. Shared by
 * the control-plane stack and vault's tests. */
#ifndef AIRLOCK_PG_TEST_H
#define AIRLOCK_PG_TEST_H

#include <limits.h>
#include <stdbool.h>

struct pg_test {
    char dir[PATH_MAX];      /* socket, log and data (dir/pg) live here */
    char data[PATH_MAX];
    char url[PATH_MAX + 64]; /* libpq connection string */
    bool started;
};

/* Runs PostgreSQL in dir (which must exist; it is handed to the postgres
 * user) with database "airlock". 0, -1 after printing why, or 77 when
 * PostgreSQL is not installed. */
int pg_test_start(struct pg_test *pg, const char *dir);
/* Stops it if started; safe to call twice. */
void pg_test_stop(struct pg_test *pg);
/* pg_ctl restart -m fast: every client's session is cut, as when the
 * server restarts. 0 or -1 after printing why. */
int pg_test_restart(struct pg_test *pg);

/* pg_ctl stop -m immediate: every process of the server quits at once
 * without a checkpoint (clients' connections drop; the next start runs
 * crash recovery), as when the server is killed. 0 or -1 after printing
 * why. */
int pg_test_crash(struct pg_test *pg);
/* Starts it again on the same data dir and socket after pg_test_crash. */
int pg_test_start_again(struct pg_test *pg);

/* Prints the last 4000 bytes of dir/name to stderr. */
void test_print_log_tail(const char *dir, const char *name);

#endif
