/* The parsers egress runs on guest bytes (sniff: SNI and Host; dns_wire:
 * queries and replies; http_msg: request and response heads, body framing
 * and chunked bodies of intercepted connections) against the corpus in
 * tests/fuzz/corpus, every
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
#include "fuzz_rng.h"
#include "http_msg.h"
#include "names.h"
#include "netlab.h"
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
    { "http_keepalive_two_requests", SNIFF_FOUND, "api.test" },
    { "http_chunked_request", SNIFF_FOUND, "api.test" },
    { "http_response_chunked", SNIFF_NONE, NULL },
};

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
    return fuzz_rng(&rng_state);
}

static uint8_t *load(const char *file, size_t *len)
{
    char path[512], err[256], *data = NULL;
    snprintf(path, sizeof(path), "%s/%s", AIRLOCK_FUZZ_CORPUS, file);
    if (fs_read_file(path, 1 << 20, &data, len, err, sizeof(err)) < 0)
        fail_msg("%s", err);
    return (uint8_t *)data;
}

/* Every span of a complete head lies inside it. */
static void assert_head_sane(const struct http_head *h, size_t len)
{
    assert_true(h->len <= len && h->len <= HTTP_HEAD_MAX);
    assert_true(h->n_headers <= HTTP_HEADERS_MAX);
    assert_true((size_t)h->method.off + h->method.len <= h->len);
    assert_true((size_t)h->target.off + h->target.len <= h->len);
    for (size_t i = 0; i < h->n_headers; i++) {
        assert_true(h->headers[i].name.len > 0);
        assert_true((size_t)h->headers[i].name.off + h->headers[i].name.len <= h->len);
        assert_true((size_t)h->headers[i].value.off + h->headers[i].value.len <= h->len);
    }
}

/* A chunked body scanned from buf: never more consumed than given, also
 * when fed in two pieces. */
static void scan_chunked(const uint8_t *buf, size_t len)
{
    struct http_chunked whole = { 0 }, split = { 0 };
    bool done = false, done2 = false;
    ssize_t n = http_chunked_scan(&whole, buf, len, &done);
    assert_true(n >= -1 && n <= (ssize_t)len);
    size_t cut = len / 2;
    ssize_t a = http_chunked_scan(&split, buf, cut, &done2);
    if (n >= 0 && a >= 0 && !done2) {
        ssize_t b = http_chunked_scan(&split, buf + cut, len - cut, &done2);
        assert_true(b >= 0);
        assert_int_equal((size_t)a + (size_t)b, (size_t)n);
        assert_int_equal(done, done2);
    }
}

/* The HTTP parsers of intercepted connections. */
static void run_http_parsers(const uint8_t *buf, size_t len)
{
    struct http_head h;
    struct http_body b;
    enum http_result r = http_parse_request(buf, len, &h);
    assert_true(r >= HTTP_NEED_MORE && r <= HTTP_TOO_LARGE);
    if (r == HTTP_COMPLETE) {
        assert_head_sane(&h, len);
        http_keep_alive(buf, &h);
        if (http_request_body(buf, &h, &b) == 0 && b.kind == HTTP_BODY_CHUNKED)
            scan_chunked(buf + h.len, len - h.len);
    }
    r = http_parse_response(buf, len, &h);
    if (r == HTTP_COMPLETE) {
        assert_head_sane(&h, len);
        assert_true(h.status >= 100 && h.status <= 599);
        if (http_response_body(buf, &h, false, &b) == 0 && b.kind == HTTP_BODY_CHUNKED)
            scan_chunked(buf + h.len, len - h.len);
    }
    scan_chunked(buf, len);
}

/* Runs every parser on an exact-size heap copy, so ASan sees any overread. */
static void run_parsers(const uint8_t *data, size_t len)
{
    uint8_t *buf = malloc(len ? len : 1);
    assert_non_null(buf);
    memcpy(buf, data, len);
    char name[NAME_MAX_LEN + 1], again[NAME_MAX_LEN + 1];
    enum sniff_result r = sniff_name(buf, len, name);
    assert_true(r >= SNIFF_NEED_MORE && r <= SNIFF_NAME_HIDDEN);
    /* a found name is always a valid, normalized one */
    if (r == SNIFF_FOUND || (r == SNIFF_NAME_HIDDEN && name[0]))
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
    run_http_parsers(buf, len);
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

static enum http_result parse_text(const char *text, struct http_head *h)
{
    return http_parse_request((const uint8_t *)text, strlen(text), h);
}

/* Request framing of a head given as text: 0 with *b, or -1 refused. */
static int framing_of(const char *text, struct http_body *b)
{
    struct http_head h;
    assert_int_equal(parse_text(text, &h), HTTP_COMPLETE);
    return http_request_body((const uint8_t *)text, &h, b);
}

static void test_http_messages_mean_what_they_say(void **state)
{
    (void)state;
    size_t len;
    struct http_head h;
    struct http_body b;
    bool done;
    /* Two kept-alive requests: the first head, then the second after it. */
    uint8_t *two = load("http_keepalive_two_requests", &len);
    assert_int_equal(http_parse_request(two, len, &h), HTTP_COMPLETE);
    assert_true(http_span_equals(two, h.method, "GET"));
    assert_true(http_span_equals(two, h.target, "/v1/models"));
    assert_int_equal(h.n_headers, 3);
    assert_true(http_span_equals(two, h.headers[1].value, "Bearer airlock-secret-sec_0123"));
    assert_int_equal(http_request_body(two, &h, &b), 0);
    assert_int_equal(b.kind, HTTP_BODY_NONE);
    assert_true(http_keep_alive(two, &h));
    size_t first = h.len;
    assert_int_equal(http_parse_request(two + first, len - first, &h), HTTP_COMPLETE);
    assert_true(http_span_equals(two + first, h.method, "POST"));
    assert_int_equal(http_request_body(two + first, &h, &b), 0);
    assert_int_equal(b.kind, HTTP_BODY_LENGTH);
    assert_int_equal(b.length, 3);
    assert_int_equal(first + h.len + 3, len);
    free(two);
    /* A chunked body with an extension and a trailer ends exactly at the
     * end of the entry. */
    uint8_t *chunked = load("http_chunked_request", &len);
    assert_int_equal(http_parse_request(chunked, len, &h), HTTP_COMPLETE);
    assert_int_equal(http_request_body(chunked, &h, &b), 0);
    assert_int_equal(b.kind, HTTP_BODY_CHUNKED);
    assert_true(http_has_token(chunked, &h, "expect", "100-continue"));
    struct http_chunked c = { 0 };
    assert_int_equal(http_chunked_scan(&c, chunked + h.len, len - h.len, &done),
                     (ssize_t)(len - h.len));
    assert_true(done);
    free(chunked);
    uint8_t *resp = load("http_response_chunked", &len);
    assert_int_equal(http_parse_response(resp, len, &h), HTTP_COMPLETE);
    assert_int_equal(h.status, 200);
    assert_int_equal(http_response_body(resp, &h, false, &b), 0);
    assert_int_equal(b.kind, HTTP_BODY_CHUNKED);
    assert_int_equal(http_response_body(resp, &h, true, &b), 0);
    assert_int_equal(b.kind, HTTP_BODY_NONE); /* the answer to HEAD */
    free(resp);

    /* What egress refuses: anything a server might read differently. */
    const char *malformed[] = {
        "GET / HTTP/1.1\r\nHost: a.test\r\n folded: x\r\n\r\n",
        "GET / HTTP/1.1\r\nHost : a.test\r\n\r\n",
        "GET / HTTP/1.1\r\nHost: a.test\nX: y\r\n\r\n",
        "GET / HTTP/1.1\r\nHo\x01st: a.test\r\n\r\n",
        "GET / HTTP/2.0\r\nHost: a.test\r\n\r\n",
        "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
        "GET  / HTTP/1.1\r\n\r\n",
        "GET / HTTP/1.1\r\nX: a\rb\r\n\r\n",
    };
    for (size_t i = 0; i < sizeof(malformed) / sizeof(*malformed); i++)
        if (parse_text(malformed[i], &h) != HTTP_MALFORMED)
            fail_msg("accepted: %s", malformed[i]);
    assert_int_equal(parse_text("GET / HTTP/1.1\r\nHost: a.test\r\n", &h), HTTP_NEED_MORE);
    const char *ambiguous[] = {
        "POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
        "POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n",
        "POST / HTTP/1.1\r\nContent-Length: -3\r\n\r\n",
        "POST / HTTP/1.1\r\nContent-Length: 3 3\r\n\r\n",
        "POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
        "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
        "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n",
        /* a body where the method gives it no meaning: an upstream that
         * ignores it reads the next request from where it starts */
        "GET / HTTP/1.1\r\nContent-Length: 44\r\n\r\n",
        "HEAD / HTTP/1.1\r\nContent-Length: 1\r\n\r\n",
        "DELETE / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
        "OPTIONS * HTTP/1.1\r\nContent-Length: 5\r\n\r\n",
        "TRACE / HTTP/1.1\r\nContent-Length: 5\r\n\r\n",
    };
    for (size_t i = 0; i < sizeof(ambiguous) / sizeof(*ambiguous); i++)
        if (framing_of(ambiguous[i], &b) != -1)
            fail_msg("framing accepted: %s", ambiguous[i]);
    assert_int_equal(framing_of("POST / HTTP/1.1\r\nContent-Length: 0\r\n\r\n", &b), 0);
    assert_int_equal(b.kind, HTTP_BODY_LENGTH);
    /* "Content-Length: 0" frames nothing, whatever the method. */
    assert_int_equal(framing_of("GET / HTTP/1.1\r\nContent-Length: 0\r\n\r\n", &b), 0);
    assert_int_equal(framing_of("DELETE /x HTTP/1.1\r\nContent-Length: 0\r\n\r\n", &b), 0);
    /* Broken chunk framing: no size, size too large, data not ended by CRLF. */
    const char *bad_chunks[] = { "\r\n", "x\r\n", "1234567890123456\r\n", "3\r\nabcX",
                                 "3 \r\nabc\r\n" };
    for (size_t i = 0; i < sizeof(bad_chunks) / sizeof(*bad_chunks); i++) {
        struct http_chunked bc = { 0 };
        if (http_chunked_scan(&bc, (const uint8_t *)bad_chunks[i], strlen(bad_chunks[i]), &done) !=
            -1)
            fail_msg("chunk framing accepted: %s", bad_chunks[i]);
    }
    /* HTTP/1.0 keeps the connection only when asked to. */
    assert_int_equal(parse_text("GET / HTTP/1.0\r\nHost: a\r\n\r\n", &h), HTTP_COMPLETE);
    assert_false(http_keep_alive((const uint8_t *)"GET / HTTP/1.0\r\nHost: a\r\n\r\n", &h));
    const char *close = "GET / HTTP/1.1\r\nConnection: keep-alive, Close\r\n\r\n";
    assert_int_equal(parse_text(close, &h), HTTP_COMPLETE);
    assert_false(http_keep_alive((const uint8_t *)close, &h));
}

/* sniff_http_host on a whole head given as text. */
static enum sniff_result sniff_text(const char *text, char *name)
{
    return sniff_http_host((const uint8_t *)text, strlen(text), name);
}

static void test_request_targets(void **state)
{
    (void)state;
    const char *auth;
    size_t alen;
    struct {
        const char *target;
        int form;
        const char *authority;
    } cases[] = {
        { "/x?y", 0, NULL },
        { "*", 0, NULL },
        { "http://a.test/x", 1, "a.test" },
        { "HTTPS://a.test:443/x", 1, "a.test:443" },
        { "ws://a.test", 1, "a.test" },
        { "WsS://a.test?q", 1, "a.test" },
        { "git+ssh://a.test#f", 1, "a.test" },
        { "a.test:80", -1, NULL },   /* authority form: CONNECT's */
        { "http:a.test/", -1, NULL },
        { "http:///x", -1, NULL },
        { "1http://a.test/", -1, NULL },
        { "/\xc3\xa9", -1, NULL },  /* not ASCII */
        { "/a\x7f", -1, NULL },
        { "", -1, NULL },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        int form = sniff_target_authority(cases[i].target, strlen(cases[i].target), &auth, &alen);
        if (form != cases[i].form)
            fail_msg("%s: form %d, expected %d", cases[i].target, form, cases[i].form);
        if (cases[i].authority) {
            assert_int_equal(alen, strlen(cases[i].authority));
            assert_memory_equal(auth, cases[i].authority, alen);
        }
    }
    /* An absolute target of any scheme must name the Host. */
    char name[NAME_MAX_LEN + 1];
    const char *refused[] = {
        "GET https://denied.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n",
        "GET WS://denied.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n",
        "GET hTTp://denied.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n",
        "GET denied.test:80 HTTP/1.1\r\nHost: allowed.test\r\n\r\n",
        "GET /\xc3\xa9 HTTP/1.1\r\nHost: allowed.test\r\n\r\n",
    };
    for (size_t i = 0; i < sizeof(refused) / sizeof(*refused); i++)
        if (sniff_text(refused[i], name) != SNIFF_MALFORMED)
            fail_msg("sniff accepted: %s", refused[i]);
    assert_int_equal(
        sniff_text("GET https://allowed.test/x HTTP/1.1\r\nHost: allowed.test\r\n\r\n", name),
        SNIFF_FOUND);
    assert_string_equal(name, "allowed.test");
}

/* Encrypted Client Hello (and the older ESNI) hide the name the server
 * sees: said so, with the outer SNI, whatever the record shape. */
static void test_encrypted_client_hello_is_said(void **state)
{
    (void)state;
    uint8_t hello[2048];
    char name[NAME_MAX_LEN + 1];
    const uint16_t hiding[] = { 0xfe0d, 0xffce };
    for (size_t i = 0; i < sizeof(hiding) / sizeof(*hiding); i++)
        for (int records = 1; records <= 3; records++) {
            size_t len = tls_client_hello_ext("public.test", records, hiding[i], hello,
                                              sizeof(hello));
            assert_true(len > 0);
            assert_int_equal(sniff_name(hello, len, name), SNIFF_NAME_HIDDEN);
            assert_string_equal(name, "public.test");
            len = tls_client_hello_ext(NULL, records, hiding[i], hello, sizeof(hello));
            assert_int_equal(sniff_name(hello, len, name), SNIFF_NAME_HIDDEN);
            assert_string_equal(name, "");
        }
    /* Another unknown extension changes nothing. */
    size_t len = tls_client_hello_ext("public.test", 1, 0x4a4a, hello, sizeof(hello));
    assert_int_equal(sniff_name(hello, len, name), SNIFF_FOUND);
}

static void test_every_truncation(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(corpus) / sizeof(*corpus); i++) {
        size_t len;
        uint8_t *data = load(corpus[i].file, &len);
        /* The end of an HTTP entry's first head (a body or a second
         * request may follow it), else of the whole entry. */
        struct http_head whole, cut_head;
        bool http = http_parse_request(data, len, &whole) == HTTP_COMPLETE;
        size_t end = http ? whole.len : len;
        for (size_t cut = 0; cut < len; cut++) {
            run_parsers(data, cut);
            if (cut >= end)
                continue;
            /* A truncated ClientHello or request is never taken for a complete one. */
            char name[NAME_MAX_LEN + 1];
            if (corpus[i].sniff == SNIFF_FOUND)
                assert_int_not_equal(sniff_name(data, cut, name), SNIFF_FOUND);
            if (http)
                assert_int_equal(http_parse_request(data, cut, &cut_head), HTTP_NEED_MORE);
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
        cmocka_unit_test(test_http_messages_mean_what_they_say),
        cmocka_unit_test(test_request_targets),
        cmocka_unit_test(test_encrypted_client_hello_is_said),
        cmocka_unit_test(test_every_truncation),
        cmocka_unit_test(test_random_mutations),
        cmocka_unit_test(test_random_garbage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
