/* egress's masking of an injected secret in responses (egress/
 * secret_redact.h): every occurrence masked wherever the stream is cut,
 * lengths kept, only a possible start of the secret held back, and the
 * same against random streams built from pieces of the secret. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "secret_redact.h"

#define MAX_PIECE 64
#define RANDOM_STREAMS 3000

/* Runs text through a redactor cut at the given points; the output. */
static char *redact_cut(const char *secret, const char *text, const size_t *cuts, size_t n_cuts,
                        unsigned *masked)
{
    struct secret_redactor r;
    assert_int_equal(secret_redactor_init(&r, (const uint8_t *)secret, strlen(secret), MAX_PIECE),
                     0);
    size_t len = strlen(text), at = 0, o = 0;
    char *out = calloc(1, len + 1);
    const uint8_t *p;
    size_t plen;
    for (size_t c = 0; c <= n_cuts; c++) {
        size_t end = c < n_cuts ? cuts[c] : len;
        while (at < end) {
            size_t piece = end - at < MAX_PIECE ? end - at : MAX_PIECE;
            secret_redactor_push(&r, (const uint8_t *)text + at, piece, &p, &plen);
            memcpy(out + o, p, plen);
            o += plen;
            at += piece;
        }
    }
    secret_redactor_finish(&r, &p, &plen);
    memcpy(out + o, p, plen);
    o += plen;
    assert_int_equal(o, len); /* lengths are kept */
    *masked = r.masked;
    secret_redactor_free(&r);
    return out;
}

static void test_every_cut_masks_the_secret(void **state)
{
    (void)state;
    const char *secret = "sk-live-42abc";
    const char *text = "{\"auth\":\"Bearer sk-live-42abc\",\"again\":\"sk-live-42abcsk-live-42abc\"}";
    const char *want = "{\"auth\":\"Bearer *************\",\"again\":\"**************************\"}";
    for (size_t cut = 0; cut <= strlen(text); cut++) {
        for (size_t cut2 = cut; cut2 <= strlen(text); cut2 += 3) {
            size_t cuts[] = { cut, cut2 };
            unsigned masked;
            char *out = redact_cut(secret, text, cuts, 2, &masked);
            assert_string_equal(out, want);
            assert_int_equal(masked, 3);
            free(out);
        }
    }
}

/* Text that is not a start of the secret goes on at once (SSE events are
 * not delayed); a possible start is held until it is decided. */
static void test_holds_only_a_possible_start(void **state)
{
    (void)state;
    struct secret_redactor r;
    const char *secret = "abcabd";
    assert_int_equal(secret_redactor_init(&r, (const uint8_t *)secret, 6, MAX_PIECE), 0);
    const uint8_t *p;
    size_t n;
    secret_redactor_push(&r, (const uint8_t *)"data: hi\n\n", 10, &p, &n);
    assert_int_equal(n, 10);
    secret_redactor_push(&r, (const uint8_t *)"xxabcab", 7, &p, &n);
    assert_int_equal(n, 2); /* "abcab" might continue as the secret */
    assert_memory_equal(p, "xx", 2);
    secret_redactor_push(&r, (const uint8_t *)"cabd!", 5, &p, &n);
    /* "abcabcabd!": the secret starts at the second "abc" (KMP fallback). */
    assert_int_equal(n, 10);
    assert_memory_equal(p, "abc******!", 10);
    secret_redactor_push(&r, (const uint8_t *)"ab", 2, &p, &n);
    assert_int_equal(n, 0);
    secret_redactor_finish(&r, &p, &n);
    assert_int_equal(n, 2);
    assert_memory_equal(p, "ab", 2);
    assert_int_equal(r.masked, 1);
    secret_redactor_free(&r);
}

/* Streams made of pieces of the secret and noise, cut at random points:
 * the output never contains the secret and has the input's length. */
static void test_random_streams(void **state)
{
    (void)state;
    const char *secret = "aab-aab-aaab";
    size_t slen = strlen(secret);
    srand(7);
    for (int run = 0; run < RANDOM_STREAMS; run++) {
        char text[400];
        size_t len = 0;
        while (len < sizeof(text) - slen - 2) {
            size_t take = 1 + (size_t)rand() % slen;
            if (rand() % 4 == 0)
                text[len++] = "ab-*x"[rand() % 5];
            else {
                memcpy(text + len, secret + (size_t)rand() % (slen - take + 1), take);
                len += take;
            }
        }
        text[len] = '\0';
        size_t cuts[3];
        for (int i = 0; i < 3; i++)
            cuts[i] = (size_t)rand() % (len + 1);
        if (cuts[0] > cuts[1]) { size_t t = cuts[0]; cuts[0] = cuts[1]; cuts[1] = t; }
        if (cuts[1] > cuts[2]) { size_t t = cuts[1]; cuts[1] = cuts[2]; cuts[2] = t; }
        if (cuts[0] > cuts[1]) { size_t t = cuts[0]; cuts[0] = cuts[1]; cuts[1] = t; }
        unsigned masked;
        char *out = redact_cut(secret, text, cuts, 3, &masked);
        assert_null(strstr(out, secret));
        /* Only occurrences were changed, to '*'. */
        for (size_t i = 0; i < len; i++)
            assert_true(out[i] == text[i] || out[i] == '*');
        free(out);
    }
}

static void test_mask_in_place(void **state)
{
    (void)state;
    char head[] = "HTTP/1.1 200 OK\r\nX-Echo: Bearer tok123\r\nX-Again: tok123tok123\r\n\r\n";
    assert_int_equal(secret_mask((uint8_t *)head, strlen(head), (const uint8_t *)"tok123", 6), 3);
    assert_string_equal(head,
                        "HTTP/1.1 200 OK\r\nX-Echo: Bearer ******\r\nX-Again: ************\r\n\r\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_cut_masks_the_secret),
        cmocka_unit_test(test_holds_only_a_possible_start),
        cmocka_unit_test(test_random_streams),
        cmocka_unit_test(test_mask_in_place),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
