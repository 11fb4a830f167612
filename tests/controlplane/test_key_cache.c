/* The gateway's API key cache (gateway/key_cache.c) on its own: hits,
 * misses, expiry on an injected clock, eviction at capacity, drops by key
 * id, flushes, failures never stored, answers fetched across a drop never
 * stored, and the bypass while revocations cannot arrive. The fetch
 * function stands in for the scheduler's Authenticate, counting calls. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "key_cache.h"

static int64_t fake_now;

static int64_t fake_clock(void)
{
    return fake_now;
}

/* What the stand-in scheduler answers, and how often it was asked. */
struct fetcher {
    int calls;
    enum airlock_err refusal;      /* AIRLOCK_OK: it knows the key */
    struct key_cache *drop_during; /* drops key "k1" while fetching */
};

static int fetch(void *ctx, const char *key, struct key_principal *who, struct airlock_error *e)
{
    struct fetcher *f = ctx;
    f->calls++;
    if (f->drop_during)
        key_cache_drop_key(f->drop_during, "k1");
    if (f->refusal != AIRLOCK_OK)
        return airlock_error_set(e, f->refusal, "unknown API key");
    /* key "secret-N" belongs to key id "kN" of project "prj_N". */
    const char *n = strchr(key, '-') ? strchr(key, '-') + 1 : key;
    snprintf(who->key_id, sizeof(who->key_id), "k%s", n);
    snprintf(who->project_id, sizeof(who->project_id), "prj_%s", n);
    who->admin = strcmp(n, "0") == 0;
    return 0;
}

/* Each test's cache (4 entries, 10 s unless it makes its own), stand-in
 * scheduler and last answer. */
struct fixture {
    struct key_cache c;
    struct fetcher f;
    struct key_principal who;
};

/* AIRLOCK_OK, or the class of the refusal. */
static enum airlock_err auth(struct fixture *x, const char *key)
{
    struct airlock_error e;
    return key_cache_authenticate(&x->c, key, true, fetch, &x->f, &x->who, &e) == 0 ? AIRLOCK_OK
                                                                                    : e.class;
}

static void remake(struct fixture *x, size_t capacity, int64_t ttl_ms)
{
    key_cache_destroy(&x->c);
    assert_int_equal(key_cache_init(&x->c, capacity, ttl_ms, fake_clock), 0);
}

static int setup(void **state)
{
    static struct fixture x;
    memset(&x, 0, sizeof(x));
    fake_now = 1000;
    if (key_cache_init(&x.c, 4, 10000, fake_clock) < 0)
        return -1;
    *state = &x;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *x = *state;
    key_cache_destroy(&x->c);
    return 0;
}

static void hit_after_miss(void **state)
{
    struct fixture *x = *state;
    assert_int_equal(auth(x, "secret-1"), AIRLOCK_OK);
    memset(&x->who, 0, sizeof(x->who));
    assert_int_equal(auth(x, "secret-1"), AIRLOCK_OK);
    assert_int_equal(x->f.calls, 1); /* the principal below is the cache's */
    assert_string_equal(x->who.key_id, "k1");
    assert_string_equal(x->who.project_id, "prj_1");
    assert_false(x->who.admin);
    assert_int_equal(auth(x, "secret-0"), AIRLOCK_OK);
    assert_int_equal(x->f.calls, 2); /* another key: a miss */
    assert_true(x->who.admin);
    assert_int_equal(x->c.hits, 1);
    assert_int_equal(x->c.misses, 2);
}

static void expires_after_ttl(void **state)
{
    struct fixture *x = *state;
    remake(x, 4, 500);
    auth(x, "secret-1");
    fake_now += 499;
    auth(x, "secret-1");
    assert_int_equal(x->f.calls, 1);
    fake_now += 1;
    auth(x, "secret-1");
    assert_int_equal(x->f.calls, 2);
}

static void evicts_oldest_at_capacity(void **state)
{
    struct fixture *x = *state;
    remake(x, 2, 10000);
    auth(x, "secret-1");
    fake_now++;
    auth(x, "secret-2");
    fake_now++;
    auth(x, "secret-3"); /* full: "secret-1" goes */
    assert_int_equal(x->f.calls, 3);
    auth(x, "secret-3");
    auth(x, "secret-2");
    assert_int_equal(x->f.calls, 3);
    auth(x, "secret-1");
    assert_int_equal(x->f.calls, 4);
}

static void drop_and_flush(void **state)
{
    struct fixture *x = *state;
    auth(x, "secret-1");
    auth(x, "secret-2");
    key_cache_drop_key(&x->c, "k1");
    auth(x, "secret-2");
    assert_int_equal(x->f.calls, 2); /* k2 stays */
    auth(x, "secret-1");
    assert_int_equal(x->f.calls, 3); /* k1 was dropped */
    key_cache_flush(&x->c);
    auth(x, "secret-1");
    auth(x, "secret-2");
    assert_int_equal(x->f.calls, 5);
}

static void failures_not_cached(void **state)
{
    struct fixture *x = *state;
    struct airlock_error e;
    x->f.refusal = AIRLOCK_ERR_UNAUTHENTICATED;
    assert_int_equal(key_cache_authenticate(&x->c, "secret-1", true, fetch, &x->f, &x->who, &e),
                     -1);
    assert_int_equal(e.class, AIRLOCK_ERR_UNAUTHENTICATED);
    assert_string_equal(e.message, "unknown API key");
    x->f.refusal = AIRLOCK_ERR_UNAVAILABLE;
    assert_int_equal(auth(x, "secret-1"), AIRLOCK_ERR_UNAVAILABLE);
    x->f.refusal = AIRLOCK_OK;
    assert_int_equal(auth(x, "secret-1"), AIRLOCK_OK);
    assert_int_equal(x->f.calls, 3);
    assert_int_equal(auth(x, "secret-1"), AIRLOCK_OK);
    assert_int_equal(x->f.calls, 3);
}

/* A revocation that lands while the scheduler is being asked may have
 * been committed after it answered: that answer is served, not kept. */
static void fetched_across_a_drop_not_kept(void **state)
{
    struct fixture *x = *state;
    x->f.drop_during = &x->c;
    assert_int_equal(auth(x, "secret-1"), AIRLOCK_OK);
    x->f.drop_during = NULL;
    auth(x, "secret-1");
    assert_int_equal(x->f.calls, 2);
    auth(x, "secret-1");
    assert_int_equal(x->f.calls, 2);
}

static void bypassed_when_unusable_or_off(void **state)
{
    struct fixture *x = *state;
    struct airlock_error e;
    auth(x, "secret-1");
    /* Revocations may be missed: neither served nor stored. */
    key_cache_authenticate(&x->c, "secret-1", false, fetch, &x->f, &x->who, &e);
    key_cache_authenticate(&x->c, "secret-2", false, fetch, &x->f, &x->who, &e);
    assert_int_equal(x->f.calls, 3);
    auth(x, "secret-2");
    assert_int_equal(x->f.calls, 4);

    remake(x, 4, 0); /* TTL 0: off */
    auth(x, "secret-1");
    auth(x, "secret-1");
    assert_int_equal(x->f.calls, 6);
    key_cache_drop_key(&x->c, "k1");
    key_cache_flush(&x->c);
}

static void metrics_text(void **state)
{
    struct fixture *x = *state;
    auth(x, "secret-1");
    auth(x, "secret-1");
    struct metrics_registry *reg = metrics_registry_new();
    assert_int_equal(key_cache_register_metrics(&x->c, reg), 0);
    struct strbuf out = { 0 };
    metrics_render(reg, &out);
    assert_non_null(strstr(strbuf_str(&out), "airlock_gateway_key_cache_hits_total 1\n"));
    assert_non_null(strstr(strbuf_str(&out), "airlock_gateway_key_cache_misses_total 1\n"));
    strbuf_free(&out);
    metrics_registry_free(reg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(hit_after_miss, setup, teardown),
        cmocka_unit_test_setup_teardown(expires_after_ttl, setup, teardown),
        cmocka_unit_test_setup_teardown(evicts_oldest_at_capacity, setup, teardown),
        cmocka_unit_test_setup_teardown(drop_and_flush, setup, teardown),
        cmocka_unit_test_setup_teardown(failures_not_cached, setup, teardown),
        cmocka_unit_test_setup_teardown(fetched_across_a_drop_not_kept, setup, teardown),
        cmocka_unit_test_setup_teardown(bypassed_when_unusable_or_off, setup, teardown),
        cmocka_unit_test_setup_teardown(metrics_text, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
