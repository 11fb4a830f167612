/* The parsers egress runs on guest bytes (sniff: SNI and Host; dns_wire:
 * queries and replies) against the corpus in tests/fuzz/corpus, every
 * truncation of each entry, and deterministic random mutations and garbage.
 * Under ASan/UBSan any read past a buffer fails the run; the asserts check
 * that whatever a parser returns is well formed. Each corpus entry also
 * has an expected result, so the corpus keeps meaning what it says. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dns_wire.h"
#include "fsutil.h"
#include "names.h"
#include "sniff.h"

#define MUTATIONS_PER_ENTRY 20000
#define GARBAGE_RUNS 20000

struct corpus_entry {
    const char *file;
    enum sniff_result sniff;
    const char *name;
};

static const struct corpus_entry corpus[] = {
    { "tls_sni", SNIFF_FOUND, "allowed.test" },
    { "tls_sni_3_records", SNIFF_FOUND, "www.example.test" },
    { "tls_no_sni", SNIFF_NONE, NULL },
    { "http_host", SNIFF_FOUND, "allowed.test" },
    { "http_absolute", SNIFF_FOUND, "allowed.test" },
    { "http_connect", SNIFF_MALFORMED, NULL },
    { "dns_query_a", SNIFF_NONE, NULL },
    { "dns_reply_cname_a", SNIFF_NONE, NULL },
};

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static uint8_t *load(const char *file, size_t *len)
{
    char path[512], err[256], *data = NULL;
    snprintf(path, sizeof(path), "%s/%s", AIRLOCK_FUZZ_CORPUS, file);
    if (fs_read_file(path, 1 << 20, &data, len, err, sizeof(err)) < 0)
        fail_msg("%s", err);
    return (uint8_t *)data;
}

/* Runs every parser on an exact-size heap copy, so ASan sees any overread. */
static void run_parsers(const uint8_t *data, size_t len)
{
    uint8_t *buf = malloc(len ? len : 1);
    assert_non_null(buf);
    memcpy(buf, data, len);
    char name[NAME_MAX_LEN + 1], again[NAME_MAX_LEN + 1];
    enum sniff_result r = sniff_name(buf, len, name);
    assert_true(r >= SNIFF_NEED_MORE && r <= SNIFF_MALFORMED);
    if (r == SNIFF_FOUND) /* a found name is always a valid, normalized one */
        assert_int_equal(name_normalize(name, strlen(name), again), 0);

    struct dns_question q;
    if (dns_parse_query(buf, len, &q) == 0) {
        assert_true(q.end <= len);
        if (q.name_valid)
            assert_true(strlen(q.name) <= NAME_MAX_LEN);
        uint8_t out[DNS_MAX_UDP];
        uint32_t addr = 0xc6336402;
        size_t n = dns_build_answer(buf, &q, DNS_RCODE_NOERROR, &addr, 1, 60, out, sizeof(out));
        assert_true(n == 0 || n == q.end + 16);
    }
    uint32_t addrs[4], ttl;
    size_t n_addrs;
    int rcode;
    if (len >= 2 && dns_parse_reply_a(buf, len, (uint16_t)(buf[0] << 8 | buf[1]), addrs, 4,
                                      &n_addrs, &ttl, &rcode) == 0)
        assert_true(n_addrs <= 4);
    free(buf);
}

static void test_corpus_means_what_it_says(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(corpus) / sizeof(*corpus); i++) {
        size_t len;
        uint8_t *data = load(corpus[i].file, &len);
        char name[NAME_MAX_LEN + 1];
        enum sniff_result r = sniff_name(data, len, name);
        if (r != corpus[i].sniff)
            fail_msg("%s: sniff %d, expected %d", corpus[i].file, r, corpus[i].sniff);
        if (corpus[i].name)
            assert_string_equal(name, corpus[i].name);
        free(data);
    }
    size_t len;
    uint8_t *query = load("dns_query_a", &len);
    struct dns_question q;
    assert_int_equal(dns_parse_query(query, len, &q), 0);
    assert_string_equal(q.name, "allowed.test");
    assert_int_equal(q.qtype, DNS_TYPE_A);
    free(query);
    uint8_t *reply = load("dns_reply_cname_a", &len);
    uint32_t addrs[4], ttl;
    size_t n;
    int rcode;
    assert_int_equal(dns_parse_reply_a(reply, len, 0x1234, addrs, 4, &n, &ttl, &rcode), 0);
    assert_int_equal(n, 1);
    assert_int_equal(addrs[0], 0xc633640a);
    assert_int_equal(ttl, 30);
    free(reply);
}

static void test_every_truncation(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(corpus) / sizeof(*corpus); i++) {
        size_t len;
        uint8_t *data = load(corpus[i].file, &len);
        for (size_t cut = 0; cut < len; cut++) {
            run_parsers(data, cut);
            /* A truncated ClientHello or request is never taken for a complete one. */
            char name[NAME_MAX_LEN + 1];
            if (corpus[i].sniff == SNIFF_FOUND)
                assert_int_not_equal(sniff_name(data, cut, name), SNIFF_FOUND);
        }
        free(data);
    }
}

static void test_random_mutations(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(corpus) / sizeof(*corpus); i++) {
        size_t len;
        uint8_t *data = load(corpus[i].file, &len);
        uint8_t *m = malloc(len);
        assert_non_null(m);
        for (int k = 0; k < MUTATIONS_PER_ENTRY; k++) {
            memcpy(m, data, len);
            int flips = 1 + (int)(rng() % 4);
            for (int f = 0; f < flips; f++) {
                size_t at = rng() % len;
                /* Length fields are where parsers break: favour extremes. */
                uint8_t v = (uint8_t)rng();
                m[at] = (rng() & 1) ? v : (uint8_t)((rng() & 1) ? 0xff : 0x00);
            }
            run_parsers(m, len);
        }
        free(m);
        free(data);
    }
}

static void test_random_garbage(void **state)
{
    (void)state;
    uint8_t buf[2048];
    for (int k = 0; k < GARBAGE_RUNS; k++) {
        size_t len = rng() % sizeof(buf);
        for (size_t i = 0; i < len; i++)
            buf[i] = (uint8_t)rng();
        /* Half the time look like a TLS handshake record, to get past byte 0. */
        if (len > 0 && (k & 1))
            buf[0] = 0x16;
        run_parsers(buf, len);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_corpus_means_what_it_says),
        cmocka_unit_test(test_every_truncation),
        cmocka_unit_test(test_random_mutations),
        cmocka_unit_test(test_random_garbage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
