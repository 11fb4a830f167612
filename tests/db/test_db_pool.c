/* common/db against a real PostgreSQL: what each connection of a pool is
 * set up with, and that a reconnect (server restart) keeps it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "db.h"
#include "fsutil.h"
#include "pg_test.h"
#include "test_proc.h"

static struct pg_test pg;
static char dir[PATH_MAX];

static void cleanup(void)
{
    pg_test_stop(&pg);
    if (dir[0])
        fs_remove_tree(dir, NULL, 0);
    dir[0] = '\0';
}

/* The plan_cache_mode of conn (its session's setting). */
static void plan_mode(PGconn *conn, char *out, size_t len)
{
    PGresult *res = PQexec(conn, "SELECT current_setting('plan_cache_mode')");
    assert_int_equal(PQresultStatus(res), PGRES_TUPLES_OK);
    snprintf(out, len, "%s", PQgetvalue(res, 0, 0));
    PQclear(res);
}

/* The pool's connections (the prepared hot statements) use the generic
 * plan from the first run; the lock holder's connection keeps the
 * default; a reconnect after a server restart keeps both. */
static void test_pool_connections_use_generic_plans(void **state)
{
    (void)state;
    struct db db;
    char err[512], mode[64];
    assert_int_equal(db_open_pool(&db, pg.url, 3, err, sizeof(err)), 0);
    plan_mode(db.conns[0], mode, sizeof(mode));
    assert_string_equal(mode, "auto");
    for (int i = 1; i < 3; i++) {
        plan_mode(db.conns[i], mode, sizeof(mode));
        assert_string_equal(mode, "force_generic_plan");
    }
    assert_int_equal(pg_test_restart(&pg), 0);
    PGresult *res = db_query_prepared(&db, "plan_mode",
                                      "SELECT current_setting('plan_cache_mode')", 0, NULL, err,
                                      sizeof(err));
    assert_non_null(res);
    assert_string_equal(PQgetvalue(res, 0, 0), "force_generic_plan");
    PQclear(res);
    db_close(&db);
}

/* A plan_cache_mode in the operator's own URL wins. */
static void test_url_options_win(void **state)
{
    (void)state;
    struct db db;
    char url[sizeof(pg.url) + 64], err[512], mode[64];
    snprintf(url, sizeof(url), "%s options='-c plan_cache_mode=force_custom_plan'", pg.url);
    assert_int_equal(db_open_pool(&db, url, 2, err, sizeof(err)), 0);
    plan_mode(db.conns[1], mode, sizeof(mode));
    assert_string_equal(mode, "force_custom_plan");
    db_close(&db);
}

/* A URL that names no server gives a clear error and no connection. */
static void test_bad_url(void **state)
{
    (void)state;
    struct db db;
    char url[PATH_MAX + 64], err[512];
    snprintf(url, sizeof(url), "host=%s/nowhere port=5432 user=airlock dbname=airlock", dir);
    assert_int_equal(db_open_pool(&db, url, 3, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "database: "));
    assert_null(strchr(err, '\n'));
}

int main(void)
{
    if (test_temp_dir(dir, sizeof(dir), "airlock-db") < 0)
        return 1;
    test_cleanup_install(cleanup);
    int rc = pg_test_start(&pg, dir);
    if (rc != 0) {
        cleanup();
        return rc;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pool_connections_use_generic_plans),
        cmocka_unit_test(test_url_options_win),
        cmocka_unit_test(test_bad_url),
    };
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    cleanup();
    return rc;
}
