/* vmhost/node_budget: a node admits VMs by the vCPUs and memory they
 * hold against its CPUs and memory times the overcommit ratios, and by the
 * memory free now; a refusal names what ran out; a hold goes back once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "node_budget.h"

/* 2 CPUs x 2 = 4 vCPUs; (3072 - 1024) x 1.5 = 3072 MiB. The reserve is
 * far below what this machine has free, so only the sums decide. */
static struct node_budget *small_budget(void)
{
    struct node_budget_config c = { .cpus = 2, .memory_mb = 3072, .cpu_overcommit = 2,
                                    .memory_overcommit = 1.5, .reserve_mb = 1024 };
    struct node_budget *b;
    char err[256];
    assert_int_equal(node_budget_new(&c, &b, err, sizeof(err)), 0);
    return b;
}

static void limits_are_the_node_times_the_ratios(void **state)
{
    (void)state;
    struct node_budget *b = small_budget();
    struct node_budget_stats st;
    node_budget_get(b, &st);
    assert_int_equal(st.vcpus_limit, 4);
    assert_int_equal(st.memory_limit_mb, 3072);
    assert_int_equal(st.vcpus_committed, 0);
    assert_int_equal(st.memory_committed_mb, 0);
    node_budget_free(b);
}

static void vcpus_run_out_first(void **state)
{
    (void)state;
    struct node_budget *b = small_budget();
    struct node_claim a = { 0 }, c = { 0 }, d = { 0 };
    struct airlock_error e = { 0 };
    assert_int_equal(node_budget_claim(b, &a, 2, 512, &e), 0);
    assert_int_equal(node_budget_claim(b, &c, 2, 512, &e), 0);
    assert_int_equal(node_budget_claim(b, &d, 1, 128, &e), -1);
    assert_int_equal(e.class, AIRLOCK_ERR_CAPACITY);
    assert_non_null(strstr(e.message, "no room for 1 more vCPUs: 4 of 4 committed"));
    assert_non_null(strstr(e.message, "2 CPUs x overcommit 2"));
    assert_int_equal(d.vcpus, 0); /* a refusal holds nothing */
    node_budget_release(b, &c);
    assert_int_equal(node_budget_claim(b, &d, 1, 128, &e), 0);
    struct node_budget_stats st;
    node_budget_get(b, &st);
    assert_int_equal(st.vcpus_committed, 3);
    assert_int_equal(st.memory_committed_mb, 640);
    node_budget_free(b);
}

static void memory_runs_out(void **state)
{
    (void)state;
    struct node_budget *b = small_budget();
    struct node_claim a = { 0 }, c = { 0 };
    struct airlock_error e = { 0 };
    assert_int_equal(node_budget_claim(b, &a, 1, 2048, &e), 0);
    assert_int_equal(node_budget_claim(b, &c, 1, 1025, &e), -1);
    assert_int_equal(e.class, AIRLOCK_ERR_CAPACITY);
    assert_non_null(strstr(e.message, "no room for 1025 MiB more guest memory: 2048 of 3072"));
    assert_non_null(strstr(e.message, "1024 reserved for the host"));
    assert_int_equal(node_budget_claim(b, &c, 1, 1024, &e), 0); /* exactly full fits */
    node_budget_free(b);
}

/* A claim that holds is not taken twice (a restore keeps its VM's hold),
 * and a release gives back once. */
static void claims_and_releases_are_idempotent(void **state)
{
    (void)state;
    struct node_budget *b = small_budget();
    struct node_claim a = { 0 };
    struct airlock_error e = { 0 };
    assert_int_equal(node_budget_claim(b, &a, 2, 1024, &e), 0);
    assert_int_equal(node_budget_claim(b, &a, 2, 1024, &e), 0);
    struct node_budget_stats st;
    node_budget_get(b, &st);
    assert_int_equal(st.vcpus_committed, 2);
    node_budget_release(b, &a);
    node_budget_release(b, &a);
    node_budget_get(b, &st);
    assert_int_equal(st.vcpus_committed, 0);
    assert_int_equal(st.memory_committed_mb, 0);
    node_budget_free(b);
}

/* An adopted VM holds what it holds, past the limits; new ones wait. */
static void a_hold_may_exceed_the_limits(void **state)
{
    (void)state;
    struct node_budget *b = small_budget();
    struct node_claim a = { 0 }, c = { 0 };
    struct airlock_error e = { 0 };
    node_budget_hold(b, &a, 8, 4096);
    struct node_budget_stats st;
    node_budget_get(b, &st);
    assert_int_equal(st.vcpus_committed, 8);
    assert_int_equal(node_budget_claim(b, &c, 1, 128, &e), -1);
    node_budget_release(b, &a);
    assert_int_equal(node_budget_claim(b, &c, 1, 128, &e), 0);
    node_budget_free(b);
}

/* MemAvailable must cover the guest and the reserve, whatever the sums
 * say: a reserve above what this machine has free refuses everything. */
static void free_memory_is_checked(void **state)
{
    (void)state;
    unsigned long long available = node_mem_available_mb();
    assert_true(available > 0);
    struct node_budget_config c = { .cpus = 64, .memory_mb = available * 4,
                                    .reserve_mb = (unsigned)(available * 2) };
    struct node_budget *b;
    char err[256];
    assert_int_equal(node_budget_new(&c, &b, err, sizeof(err)), 0);
    struct node_claim a = { 0 };
    struct airlock_error e = { 0 };
    assert_int_equal(node_budget_claim(b, &a, 1, 128, &e), -1);
    assert_int_equal(e.class, AIRLOCK_ERR_CAPACITY);
    assert_non_null(strstr(e.message, "node's free memory is too low"));
    node_budget_free(b);
}

static void defaults_and_bad_configurations(void **state)
{
    (void)state;
    struct node_budget_config c = { 0 };
    struct node_budget *b;
    char err[256];
    assert_int_equal(node_budget_new(&c, &b, err, sizeof(err)), 0);
    struct node_budget_stats st;
    node_budget_get(b, &st);
    assert_true(st.vcpus_limit >= (unsigned)NODE_BUDGET_DEFAULT_CPU_OVERCOMMIT);
    assert_true(st.memory_limit_mb > 0);
    node_budget_free(b);

    struct node_budget_config tight = { .memory_mb = 1024, .reserve_mb = 1024 };
    assert_int_equal(node_budget_new(&tight, &b, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "leaves nothing of the node's 1024 MiB"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(limits_are_the_node_times_the_ratios),
        cmocka_unit_test(vcpus_run_out_first),
        cmocka_unit_test(memory_runs_out),
        cmocka_unit_test(claims_and_releases_are_idempotent),
        cmocka_unit_test(a_hold_may_exceed_the_limits),
        cmocka_unit_test(free_memory_is_checked),
        cmocka_unit_test(defaults_and_bad_configurations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
