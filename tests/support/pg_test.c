#include "pg_test.h"

#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fsutil.h"

#define PG_BIN "/usr/lib/postgresql/15/bin"

void test_print_log_tail(const char *dir, const char *name)
{
    char path[PATH_MAX], *text = NULL;
    size_t len = 0;
    if (fs_path(path, sizeof(path), "%s/%s", dir, name) < 0 ||
        fs_read_file(path, 64 << 20, &text, &len, NULL, 0) < 0)
        return;
    size_t start = len > 4000 ? len - 4000 : 0;
    fprintf(stderr, "---- %s tail ----\n%s\n----\n", name, text + start);
    free(text);
}

static int run_as_postgres(const char *const argv[], char *err, size_t errlen)
{
    const char *full[32] = { "runuser", "-u", "postgres", "--" };
    size_t n = 4;
    for (size_t i = 0; argv[i] && n < 31; i++)
        full[n++] = argv[i];
    full[n] = NULL;
    return run_command(full, "/", NULL, err, errlen);
}

int pg_test_start_again(struct pg_test *pg)
{
    char err[4096], opts[PATH_MAX + 64], log[PATH_MAX];
    fs_path(opts, sizeof(opts), "-k %s -p 5432 -c listen_addresses=''", pg->dir);
    fs_path(log, sizeof(log), "%s/postgres.log", pg->dir);
    const char *start[] = { PG_BIN "/pg_ctl", "-D", pg->data, "-o", opts, "-l", log, "-w",
                            "start", NULL };
    if (run_as_postgres(start, err, sizeof(err)) < 0) {
        fprintf(stderr, "pg_test: %s\n", err);
        test_print_log_tail(pg->dir, "postgres.log");
        return -1;
    }
    pg->started = true;
    return 0;
}

int pg_test_crash(struct pg_test *pg)
{
    const char *stop[] = { PG_BIN "/pg_ctl", "-D", pg->data, "-m", "immediate", "-w", "stop",
                           NULL };
    char err[1024];
    if (!pg->started || run_as_postgres(stop, err, sizeof(err)) < 0) {
        fprintf(stderr, "pg_test: %s\n", pg->started ? err : "not running");
        return -1;
    }
    pg->started = false;
    return 0;
}

int pg_test_start(struct pg_test *pg, const char *dir)
{
    struct passwd *pw = getpwnam("postgres");
    char err[4096];
    snprintf(pg->dir, sizeof(pg->dir), "%s", dir);
    if (!pw)
        return 77;
    fs_path(pg->data, sizeof(pg->data), "%s/pg", pg->dir);
    /* initdb refuses to run as root: the data dir and socket dir belong
     * to the postgres user. */
    if (chown(pg->dir, pw->pw_uid, pw->pw_gid) < 0) {
        perror("pg_test: chown");
        return -1;
    }
    const char *initdb[] = { PG_BIN "/initdb", "-D", pg->data, "-A", "trust", "-U", "airlock",
                             NULL };
    if (run_as_postgres(initdb, err, sizeof(err)) < 0) {
        fprintf(stderr, "pg_test: %s\n", err);
        return -1;
    }
    if (pg_test_start_again(pg) < 0)
        return -1;
    const char *createdb[] = { PG_BIN "/createdb", "-h", pg->dir, "-p", "5432", "-U", "airlock",
                               "airlock", NULL };
    if (run_as_postgres(createdb, err, sizeof(err)) < 0) {
        fprintf(stderr, "pg_test: %s\n", err);
        return -1;
    }
    fs_path(pg->url, sizeof(pg->url),
            "host=%s port=5432 user=airlock dbname=airlock", pg->dir);
    return 0;
}

int pg_test_restart(struct pg_test *pg)
{
    char log[PATH_MAX], err[4096];
    fs_path(log, sizeof(log), "%s/postgres.log", pg->dir);
    /* The server options come back from postmaster.opts. */
    const char *restart[] = { PG_BIN "/pg_ctl", "-D", pg->data, "-l", log, "-m", "fast", "-w",
                              "restart", NULL };
    if (run_as_postgres(restart, err, sizeof(err)) < 0) {
        fprintf(stderr, "pg_test: %s\n", err);
        test_print_log_tail(pg->dir, "postgres.log");
        return -1;
    }
    return 0;
}

void pg_test_stop(struct pg_test *pg)
{
    if (!pg->started)
        return;
    const char *stop[] = { PG_BIN "/pg_ctl", "-D", pg->data, "-m", "fast", "-w", "stop", NULL };
    char err[1024];
    if (run_as_postgres(stop, err, sizeof(err)) < 0)
        fprintf(stderr, "pg_test: %s\n", err);
    pg->started = false;
}
