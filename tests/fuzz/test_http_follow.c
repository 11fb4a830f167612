/* egress's follower of plaintext HTTP connections (egress/http_follow.h):
 * every request on a connection is checked, bodies are skipped by their
 * framing (so a request inside a body is not one), ambiguous framing is
 * refused, and a head is held back until it is complete. Then the same
 * streams mutated and cut at random points, which under ASan/UBSan must
 * never read out of bounds or break the byte accounting. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_rng.h"
#include "http_follow.h"

#define MUTATIONS 20000

/* What the check saw; it refuses denied.test and Host-less requests when
 * told to. */
struct seen {
    char names[16][64];
    size_t n;
    bool refuse_hostless;
};

static bool check(void *ctx, const char *name)
{
    struct seen *s = ctx;
    if (s->n < 16)
        snprintf(s->names[s->n++], sizeof(*s->names), "%s", name ? name : "(none)");
    if (!name)
        return !s->refuse_hostless;
    return strcmp(name, "denied.test") != 0;
}

/* Feeds text in pieces of `step` bytes (0: at once); returns the result
 * of the last feed and checks that every byte is either ready or held. */
static enum http_follow_result feed(struct http_follow *f, const char *text, size_t step,
                                    size_t *ready_total)
{
    size_t len = strlen(text), held_before = http_follow_held(f);
    enum http_follow_result r = HTTP_FOLLOW_OK;
    *ready_total = 0;
    for (size_t off = 0; off < len && r == HTTP_FOLLOW_OK;) {
        size_t n = step && len - off > step ? step : len - off, ready;
        r = http_follow_feed(f, (const uint8_t *)text + off, n, &ready);
        *ready_total += ready;
        off += n;
        if (r == HTTP_FOLLOW_OK)
            assert_int_equal(held_before + off, *ready_total + http_follow_held(f));
    }
    return r;
}

static enum http_follow_result follow_all(const char *text, size_t step, struct seen *s,
                                          size_t *ready)
{
    struct http_follow *f = http_follow_new(check, s);
    assert_non_null(f);
    enum http_follow_result r = feed(f, text, step, ready);
    http_follow_free(f);
    return r;
}

static const size_t steps[] = { 0, 1, 3, 7 };
#define N_STEPS (sizeof(steps) / sizeof(*steps))

static void test_every_request_is_checked(void **state)
{
    (void)state;
    const char *two = "GET / HTTP/1.1\r\nHost: allowed.test\r\n\r\n"
                      "GET /x HTTP/1.1\r\nHost: denied.test\r\n\r\n";
    for (size_t i = 0; i < N_STEPS; i++) {
        struct seen s = { 0 };
        size_t ready;
        assert_int_equal(follow_all(two, steps[i], &s, &ready), HTTP_FOLLOW_DENIED);
        assert_int_equal(s.n, 2);
        assert_string_equal(s.names[0], "allowed.test");
        assert_string_equal(s.names[1], "denied.test");
    }
    /* Both allowed: everything may go, blank lines between included. */
    const char *ok = "GET / HTTP/1.1\r\nHost: allowed.test\r\n\r\n\r\n"
                     "HEAD / HTTP/1.1\r\nHost: ALLOWED.test.\r\n\r\n";
    struct seen s = { 0 };
    size_t ready;
    assert_int_equal(follow_all(ok, 0, &s, &ready), HTTP_FOLLOW_OK);
    assert_int_equal(ready, strlen(ok));
    assert_string_equal(s.names[1], "allowed.test");
    /* HTTP/1.0 without a Host is a request naming nothing. */
    struct seen strict = { .refuse_hostless = true };
    assert_int_equal(follow_all("GET / HTTP/1.1\r\nHost: allowed.test\r\n\r\n"
                                "GET / HTTP/1.0\r\n\r\n",
                                0, &strict, &ready),
                     HTTP_FOLLOW_DENIED);
    assert_string_equal(strict.names[1], "(none)");
}

static void test_a_head_is_held_until_complete(void **state)
{
    (void)state;
    struct seen s = { 0 };
    struct http_follow *f = http_follow_new(check, &s);
    size_t ready;
    const char *part = "GET / HTTP/1.1\r\nHost: denied.te";
    assert_int_equal(feed(f, part, 0, &ready), HTTP_FOLLOW_OK);
    assert_int_equal(ready, 0);
    assert_int_equal(http_follow_held(f), strlen(part));
    assert_int_equal(s.n, 0);
    assert_int_equal(feed(f, "st\r\n\r\n", 0, &ready), HTTP_FOLLOW_DENIED);
    assert_int_equal(ready, 0);
    /* After a refusal the follower stays refused. */
    assert_int_equal(http_follow_feed(f, (const uint8_t *)"x", 1, &ready), HTTP_FOLLOW_MALFORMED);
    http_follow_free(f);
}

static void test_bodies_are_skipped_by_their_framing(void **state)
{
    (void)state;
    /* A request inside a body is data, not a request. */
    const char *with_length = "POST / HTTP/1.1\r\nHost: allowed.test\r\nContent-Length: 37\r\n\r\n"
                              "GET / HTTP/1.1\r\nHost: denied.test\r\n\r\n"
                              "GET / HTTP/1.1\r\nHost: allowed.test\r\n\r\n";
    const char *chunked = "POST / HTTP/1.1\r\nHost: allowed.test\r\nTransfer-Encoding: chunked\r\n\r\n"
                          "25;ext=1\r\nGET / HTTP/1.1\r\nHost: denied.test\r\n\r\n\r\n"
                          "0\r\nX-Trailer: 1\r\n\r\n"
                          "GET / HTTP/1.1\r\nHost: allowed.test\r\n\r\n";
    const char *texts[] = { with_length, chunked };
    for (size_t t = 0; t < 2; t++) {
        for (size_t i = 0; i < N_STEPS; i++) {
            struct seen s = { 0 };
            size_t ready;
            assert_int_equal(follow_all(texts[t], steps[i], &s, &ready), HTTP_FOLLOW_OK);
            assert_int_equal(ready, strlen(texts[t]));
            assert_int_equal(s.n, 2);
            assert_string_equal(s.names[1], "allowed.test");
        }
    }
    /* The body ends where its length says: the next head is checked. */
    struct seen s = { 0 };
    size_t ready;
    assert_int_equal(follow_all("POST / HTTP/1.1\r\nHost: allowed.test\r\nContent-Length: 2\r\n\r\n"
                                "okGET / HTTP/1.1\r\nHost: denied.test\r\n\r\n",
                                1, &s, &ready),
                     HTTP_FOLLOW_DENIED);
}

static void test_ambiguous_framing_is_refused(void **state)
{
    (void)state;
    const char *bad[] = {
        /* request smuggling: both lengths */
        "POST / HTTP/1.1\r\nHost: allowed.test\r\nContent-Length: 4\r\n"
        "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: allowed.test\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: allowed.test\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx",
        "POST / HTTP/1.1\r\nHost: allowed.test\r\nContent-Length: -1\r\n\r\n",
        "POST / HTTP/1.1\r\nHost: allowed.test\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        "POST / HTTP/1.1\r\nHost: allowed.test\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabX",
        /* bare LF, "Host :", a line that is not a field */
        "GET / HTTP/1.1\r\nHost: allowed.test\r\nX: y\nHost: denied.test\r\n\r\n",
        "GET / HTTP/1.1\r\nHost : denied.test\r\nHost: allowed.test\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: allowed.test\r\nnot a field\r\n\r\n",
        /* not HTTP after an HTTP request */
        "GET / HTTP/1.1\r\nHost: allowed.test\r\n\r\n\x16\x03\x01\x01\x05hello\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: allowed.test\r\n\r\nCONNECT denied.test:443 HTTP/1.1\r\n"
        "Host: denied.test:443\r\n\r\n",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
        struct seen s = { 0 };
        size_t ready;
        enum http_follow_result r = follow_all(bad[i], 0, &s, &ready);
        if (r != HTTP_FOLLOW_MALFORMED)
            fail_msg("case %zu: %d, not MALFORMED", i, r);
    }
    /* A head that never ends is refused at 16 KiB, not held forever. */
    size_t n = 20000;
    char *big = malloc(n + 1);
    memcpy(big, "GET / HTTP/1.1\r\nX: ", 19);
    memset(big + 19, 'a', n - 19);
    big[n] = '\0';
    struct seen s = { 0 };
    size_t ready;
    assert_int_equal(follow_all(big, 0, &s, &ready), HTTP_FOLLOW_MALFORMED);
    free(big);
}

static void test_only_a_granted_upgrade_ends_the_following(void **state)
{
    (void)state;
    const char *upgrade = "GET /ws HTTP/1.1\r\nHost: allowed.test\r\nUpgrade: websocket\r\n"
                          "Connection: Upgrade\r\n\r\n";
    const char *frames = "\x81\x05hello GET / HTTP/1.1\r\nHost: denied.test\r\n\r\n";
    const char *answers[] = { "HTTP/1.1 101 Switching Protocols\r\n", "HTTP/1.1 400 Bad\r\n" };
    for (size_t i = 0; i < 2; i++) {
        struct seen s = { 0 };
        struct http_follow *f = http_follow_new(check, &s);
        size_t ready;
        assert_int_equal(feed(f, upgrade, 0, &ready), HTTP_FOLLOW_OK);
        http_follow_response(f, (const uint8_t *)answers[i], 5);
        http_follow_response(f, (const uint8_t *)answers[i] + 5, strlen(answers[i]) - 5);
        enum http_follow_result r = feed(f, frames, 0, &ready);
        if (i == 0) {
            assert_int_equal(r, HTTP_FOLLOW_OK);
            assert_int_equal(ready, strlen(frames));
        } else {
            assert_int_not_equal(r, HTTP_FOLLOW_OK);
        }
        http_follow_free(f);
    }
    /* An upgrade asked for on a later request is not honoured. */
    struct seen s = { 0 };
    struct http_follow *f = http_follow_new(check, &s);
    size_t ready;
    assert_int_equal(feed(f, "GET / HTTP/1.1\r\nHost: allowed.test\r\n\r\n", 0, &ready),
                     HTTP_FOLLOW_OK);
    assert_int_equal(feed(f, upgrade, 0, &ready), HTTP_FOLLOW_OK);
    http_follow_response(f, (const uint8_t *)answers[0], strlen(answers[0]));
    assert_int_not_equal(feed(f, frames, 0, &ready), HTTP_FOLLOW_OK);
    http_follow_free(f);
}

static uint64_t rng_state = 0x2545f4914f6cdd1dull;

static uint64_t rng(void)
{
    return fuzz_rng(&rng_state);
}

/* Mutated streams fed in random pieces, each an exact-size heap copy so
 * ASan sees any overread; the accounting must hold whatever the bytes. */
static void test_mutations_keep_the_accounting(void **state)
{
    (void)state;
    const char *seed = "POST / HTTP/1.1\r\nHost: allowed.test\r\nTransfer-Encoding: chunked\r\n\r\n"
                       "5\r\nhello\r\n0\r\n\r\n"
                       "PUT /a HTTP/1.1\r\nHost: allowed.test\r\nContent-Length: 3\r\n\r\nabc"
                       "GET / HTTP/1.1\r\nHost: allowed.test\r\nUpgrade: x\r\n\r\n";
    size_t len = strlen(seed);
    uint8_t *buf = malloc(len);
    for (int m = 0; m < MUTATIONS; m++) {
        memcpy(buf, seed, len);
        for (int k = 1 + (int)(rng() % 4); k > 0; k--)
            buf[rng() % len] = (uint8_t)rng();
        struct seen s = { 0 };
        struct http_follow *f = http_follow_new(check, &s);
        size_t off = 0, ready_total = 0;
        enum http_follow_result r = HTTP_FOLLOW_OK;
        while (off < len && r == HTTP_FOLLOW_OK) {
            size_t n = 1 + rng() % 40;
            if (n > len - off)
                n = len - off;
            uint8_t *piece = malloc(n);
            memcpy(piece, buf + off, n);
            size_t ready;
            r = http_follow_feed(f, piece, n, &ready);
            free(piece);
            off += n;
            ready_total += ready;
            if (r == HTTP_FOLLOW_OK)
                assert_int_equal(off, ready_total + http_follow_held(f));
            else
                assert_int_equal(ready, 0);
        }
        http_follow_free(f);
    }
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_request_is_checked),
        cmocka_unit_test(test_a_head_is_held_until_complete),
        cmocka_unit_test(test_bodies_are_skipped_by_their_framing),
        cmocka_unit_test(test_ambiguous_framing_is_refused),
        cmocka_unit_test(test_only_a_granted_upgrade_ends_the_following),
        cmocka_unit_test(test_mutations_keep_the_accounting),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
