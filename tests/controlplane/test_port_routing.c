/* The ingress's pure parts: a request head read ahead (gateway/http_head.c),
 * which port it names (port_target.c), and who may pass (port_access.c):
 * host names and header forms, malformed ones, tokens, signed URLs and
 * their cookie, expiry, and the redirect target without the signature. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "http_head.h"
#include "port_access.h"
#include "port_target.h"

static enum port_target_kind target_of(const char *head, struct port_target *t, char *why)
{
    struct http_head h;
    assert_int_equal(http_head_parse(head, strlen(head), &h), HTTP_HEAD_COMPLETE);
    return port_target_find(&h, "airlock.test", t, why, 256);
}

static void heads(void **state)
{
    (void)state;
    struct http_head h;
    const char *req = "GET /a?x=1&airlock_expires=5 HTTP/1.1\r\nHost: h\r\n"
                      "Cookie: a=b; airlock_port_access=5.ab\r\n\r\nBODY";
    assert_int_equal(http_head_parse(req, strlen(req), &h), HTTP_HEAD_COMPLETE);
    char v[64];
    assert_true(http_head_get(&h, "host", v, sizeof(v)));
    assert_string_equal(v, "h");
    assert_true(http_head_query(&h, "airlock_expires", v, sizeof(v)));
    assert_string_equal(v, "5");
    assert_false(http_head_query(&h, "y", v, sizeof(v)));
    assert_true(http_head_cookie(&h, PORT_ACCESS_COOKIE, v, sizeof(v)));
    assert_string_equal(v, "5.ab");
    assert_int_equal(http_head_parse(req, 20, &h), HTTP_HEAD_INCOMPLETE);
    const char *junk = "\x16\x03\x01 not http\r\n\r\n";
    assert_int_equal(http_head_parse(junk, strlen(junk), &h), HTTP_HEAD_INVALID);
}

static void targets(void **state)
{
    (void)state;
    struct port_target t;
    char why[256];
    assert_int_equal(target_of("GET / HTTP/1.1\r\nHost: 8000-sb_abc.airlock.test:7070\r\n\r\n", &t,
                               why), PORT_TARGET_FOUND);
    assert_string_equal(t.sandbox_id, "sb_abc");
    assert_int_equal(t.port, 8000);
    assert_int_equal(target_of("GET / HTTP/1.1\r\nHost: 3000-SB_ABC.AIRLOCK.TEST\r\n\r\n", &t, why),
                     PORT_TARGET_FOUND);
    assert_string_equal(t.sandbox_id, "sb_abc");
    assert_int_equal(target_of("GET / HTTP/1.1\r\nHost: 127.0.0.1:7070\r\n\r\n", &t, why),
                     PORT_TARGET_NONE);
    assert_int_equal(target_of("GET / HTTP/1.1\r\nHost: api.airlock.test\r\n\r\n", &t, why),
                     PORT_TARGET_NONE);
    assert_int_equal(target_of("GET / HTTP/1.1\r\nHost: a.8000-sb.airlock.test\r\n\r\n", &t, why),
                     PORT_TARGET_NONE);
    assert_int_equal(target_of("GET / HTTP/1.1\r\nHost: 8000-sb.otherairlock.test\r\n\r\n", &t,
                               why), PORT_TARGET_NONE);
    assert_int_equal(target_of("GET / HTTP/1.1\r\nHost: 0-sb.airlock.test\r\n\r\n", &t, why),
                     PORT_TARGET_INVALID);
    assert_int_equal(target_of("GET / HTTP/1.1\r\nHost: 65536-sb.airlock.test\r\n\r\n", &t, why),
                     PORT_TARGET_INVALID);
    assert_int_equal(target_of("GET / HTTP/1.1\r\nHost: 80-sb!x.airlock.test\r\n\r\n", &t, why),
                     PORT_TARGET_INVALID);
    assert_int_equal(target_of("GET / HTTP/1.1\r\nHost: x\r\nAirlock-Sandbox-Id: sb_a\r\n"
                               "Airlock-Sandbox-Port: 9000\r\n\r\n", &t, why), PORT_TARGET_FOUND);
    assert_int_equal(t.port, 9000);
    assert_int_equal(target_of("GET / HTTP/1.1\r\nE2b-Sandbox-Id: sb_e\r\n"
                               "E2b-Sandbox-Port: 49983\r\n\r\n", &t, why), PORT_TARGET_FOUND);
    assert_int_equal(t.port, PORT_TARGET_ENVD);
    assert_int_equal(target_of("GET / HTTP/1.1\r\nAirlock-Sandbox-Id: sb_a\r\n\r\n", &t, why),
                     PORT_TARGET_INVALID);
    assert_non_null(strstr(why, "Airlock-Sandbox-Port"));
    char host[128];
    assert_int_equal(port_target_host("airlock.test", "sb_a", 80, host, sizeof(host)), 0);
    assert_string_equal(host, "80-sb_a.airlock.test");
}

static enum port_access_verdict verdict(const struct port_grant *g, const char *head, int64_t now,
                                        char *cookie, char *location)
{
    struct http_head h;
    assert_int_equal(http_head_parse(head, strlen(head), &h), HTTP_HEAD_COMPLETE);
    char why[512];
    return port_access_check(g, &h, now, why, sizeof(why), cookie, 256, location, 256);
}

static void access(void **state)
{
    (void)state;
    struct port_grant g = { "sb_a", 8000, false, "tt_secret" };
    char cookie[256], location[256], head[1024], sig[PORT_ACCESS_SIGNATURE_HEX + 1];
    assert_int_equal(verdict(&g, "GET / HTTP/1.1\r\n\r\n", 100, cookie, location),
                     PORT_ACCESS_MISSING);
    assert_int_equal(verdict(&g, "GET / HTTP/1.1\r\nAirlock-Traffic-Token: tt_secret\r\n\r\n", 100,
                             cookie, location), PORT_ACCESS_OPEN);
    assert_int_equal(verdict(&g, "GET / HTTP/1.1\r\nAirlock-Traffic-Token: tt_secreT\r\n\r\n", 100,
                             cookie, location), PORT_ACCESS_DENIED);
    port_access_sign(&g, 200, sig);
    snprintf(head, sizeof(head), "GET /p?a=1&airlock_expires=200&airlock_signature=%s&b=2 "
             "HTTP/1.1\r\n\r\n", sig);
    assert_int_equal(verdict(&g, head, 100, cookie, location), PORT_ACCESS_SIGNED_URL);
    assert_string_equal(location, "/p?a=1&b=2");
    assert_non_null(strstr(cookie, PORT_ACCESS_COOKIE "=200."));
    assert_int_equal(verdict(&g, head, 201, cookie, location), PORT_ACCESS_DENIED); /* expired */
    snprintf(head, sizeof(head), "GET / HTTP/1.1\r\nCookie: " PORT_ACCESS_COOKIE "=200.%s\r\n\r\n",
             sig);
    assert_int_equal(verdict(&g, head, 100, cookie, location), PORT_ACCESS_OPEN);
    struct port_grant other_port = { "sb_a", 8001, false, "tt_secret" };
    assert_int_equal(verdict(&other_port, head, 100, cookie, location), PORT_ACCESS_DENIED);
    snprintf(head, sizeof(head), "GET /?airlock_expires=300&airlock_signature=%s HTTP/1.1\r\n\r\n",
             sig);
    assert_int_equal(verdict(&g, head, 100, cookie, location), PORT_ACCESS_DENIED); /* other time */
    struct port_grant open = { "sb_a", 8000, true, "tt_secret" };
    assert_int_equal(verdict(&open, "GET / HTTP/1.1\r\n\r\n", 100, cookie, location),
                     PORT_ACCESS_OPEN);
    char url[512];
    assert_int_equal(port_access_url(&g, "http", "airlock.test", ":7070", 0, url, sizeof(url)), 0);
    assert_string_equal(url, "http://8000-sb_a.airlock.test:7070/");
    assert_int_equal(port_access_url(&g, "https", "airlock.test", "", 200, url, sizeof(url)), 0);
    snprintf(head, sizeof(head), "https://8000-sb_a.airlock.test/?airlock_expires=200&"
             "airlock_signature=%s", sig);
    assert_string_equal(url, head);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(heads),
        cmocka_unit_test(targets),
        cmocka_unit_test(access),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
