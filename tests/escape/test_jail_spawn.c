/* The jail starts its program while vmhost's other threads come and go.
 * The jail's child is a copy of a multithreaded process made by a raw
 * clone3; a glibc wrapper there that waits for the other threads (the
 * set*id calls do) waited forever for one that was starting at the clone,
 * and the sandbox's create timed out (CI, controlplane.cli). Here threads
 * are created and joined without pause while programs are jailed, and
 * every one must reach exec and exit. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>

#include <cmocka.h>

#include "escape_jail.h"

#define SPAWN_UID_BASE 900200000u
#define SPAWN_UID_COUNT 4u
#define SPAWN_RUNS 150
#define SPAWN_CHURNERS 3
#define SPAWN_TIMEOUT_MS 15000

static atomic_bool churning;

static void *nothing(void *arg)
{
    return arg;
}

static void *churn(void *arg)
{
    while (atomic_load(&churning)) {
        pthread_t t;
        if (pthread_create(&t, NULL, nothing, NULL) == 0)
            pthread_join(t, NULL);
    }
    return arg;
}

static void spawn_while_threads_start(void **state)
{
    (void)state;
    struct escape_jail_env env;
    assert_int_equal(escape_jail_env_open(&env, SPAWN_UID_BASE, SPAWN_UID_COUNT, NULL), 0);
    pthread_t churners[SPAWN_CHURNERS];
    atomic_store(&churning, true);
    for (int i = 0; i < SPAWN_CHURNERS; i++)
        assert_int_equal(pthread_create(&churners[i], NULL, churn, NULL), 0);

    const struct jail_spec spec = escape_jail_spec(&env, "/usr/bin/true");
    char *const argv[] = { "/usr/bin/true", NULL };
    int hung = 0, failed = 0;
    for (int i = 0; i < SPAWN_RUNS; i++) {
        struct escape_run run;
        char err[512] = "";
        if (escape_jail_run(&env, &spec, argv, -1, SPAWN_TIMEOUT_MS, &run, err, sizeof(err)) < 0) {
            print_error("run %d: %s\n", i, err);
            failed++;
        } else if (run.timed_out) {
            print_error("run %d: still %s after %d ms, waiting in %s\n", i, run.comm,
                        SPAWN_TIMEOUT_MS, run.wchan);
            hung++;
        } else if (run.exit_code != 0) {
            print_error("run %d: exit %d signal %d\n", i, run.exit_code, run.signal);
            failed++;
        }
    }
    atomic_store(&churning, false);
    for (int i = 0; i < SPAWN_CHURNERS; i++)
        pthread_join(churners[i], NULL);
    escape_jail_env_close(&env, false);
    assert_int_equal(hung, 0);
    assert_int_equal(failed, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(spawn_while_threads_start),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
