/* The Connect protocol's framing and codes (gateway/connect_protocol.c):
 * envelopes byte for byte, the end-stream with and without an error, the
 * unary status table, and every malformed request envelope refused with a
 * message saying why. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "connect_protocol.h"

static void envelopes_are_framed(void **state)
{
    (void)state;
    struct strbuf out = { 0 };
    assert_int_equal(connect_envelope_json(&out, json_pack("{s:i}", "pid", 7)), 0);
    assert_int_equal(out.len, 5 + 9);
    assert_memory_equal(out.data, "\x00\x00\x00\x00\x09{\"pid\":7}", 14);
    connect_end_stream(&out, NULL, NULL);
    assert_int_equal(out.len, 14 + 5 + 2);
    assert_memory_equal(out.data + 14, "\x02\x00\x00\x00\x02{}", 7);
    strbuf_free(&out);
}

static void end_stream_carries_the_error(void **state)
{
    (void)state;
    struct strbuf out = { 0 };
    connect_end_stream(&out, connect_code_name(AIRLOCK_ERR_NOT_FOUND), "no process 42");
    assert_int_equal((uint8_t)out.data[0], CONNECT_FLAG_END_STREAM);
    size_t n = (size_t)(uint8_t)out.data[3] << 8 | (uint8_t)out.data[4];
    assert_int_equal(n, out.len - 5);
    json_t *end = json_loadb(out.data + 5, n, 0, NULL);
    assert_non_null(end);
    assert_string_equal(json_string_value(json_object_get(json_object_get(end, "error"), "code")),
                        "not_found");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(end, "error"), "message")),
        "no process 42");
    json_decref(end);
    strbuf_free(&out);
}

static void codes_and_statuses(void **state)
{
    (void)state;
    assert_string_equal(connect_code_name(AIRLOCK_ERR_UNAUTHENTICATED), "unauthenticated");
    assert_int_equal(connect_http_status(AIRLOCK_ERR_UNAUTHENTICATED), 401);
    assert_string_equal(connect_code_name(AIRLOCK_ERR_NOT_FOUND), "not_found");
    assert_int_equal(connect_http_status(AIRLOCK_ERR_NOT_FOUND), 404);
    assert_string_equal(connect_code_name(AIRLOCK_ERR_UNIMPLEMENTED), "unimplemented");
    assert_int_equal(connect_http_status(AIRLOCK_ERR_UNIMPLEMENTED), 501);
    assert_string_equal(connect_code_name(AIRLOCK_ERR_STATE), "failed_precondition");
    assert_int_equal(connect_http_status(AIRLOCK_ERR_STATE), 400);
    assert_string_equal(connect_code_name(AIRLOCK_ERR_EXISTS), "already_exists");
    assert_int_equal(connect_http_status(AIRLOCK_ERR_EXISTS), 409);
    assert_int_equal(connect_http_status(AIRLOCK_ERR_UNAVAILABLE), 503);
    assert_int_equal(connect_http_status(AIRLOCK_ERR_TIMEOUT), 504);
    assert_string_equal(connect_code_name(AIRLOCK_ERR_INTERNAL), "internal");
    assert_int_equal(connect_http_status(AIRLOCK_ERR_INTERNAL), 500);
}

static void stream_request_parses(void **state)
{
    (void)state;
    json_t *msg;
    struct airlock_error e;
    assert_int_equal(connect_stream_request("\x00\x00\x00\x00\x0b{\"path\":1}", 15, &msg, &e),
                     -1); /* the envelope says 11, the body has 10 */
    assert_non_null(strstr(e.message, "says 11"));
    assert_int_equal(connect_stream_request("\x00\x00\x00\x00\x0a{\"path\":1}", 15, &msg, &e), 0);
    assert_int_equal(json_integer_value(json_object_get(msg, "path")), 1);
    json_decref(msg);
}

static void stream_request_refusals(void **state)
{
    (void)state;
    json_t *msg;
    struct airlock_error e;
    assert_int_equal(connect_stream_request("\x00\x00", 2, &msg, &e), -1);
    assert_int_equal(e.class, AIRLOCK_ERR_INVALID);
    assert_int_equal(connect_stream_request("\x01\x00\x00\x00\x02{}", 7, &msg, &e), -1);
    assert_int_equal(e.class, AIRLOCK_ERR_UNIMPLEMENTED);
    assert_int_equal(connect_stream_request("\x02\x00\x00\x00\x02{}", 7, &msg, &e), -1);
    assert_non_null(strstr(e.message, "flags"));
    assert_int_equal(connect_stream_request("\x00\x00\x00\x00\x02[]", 7, &msg, &e), -1);
    assert_non_null(strstr(e.message, "object"));
    assert_int_equal(connect_stream_request("\x00\x00\x00\x00\x02{x", 7, &msg, &e), -1);
    assert_non_null(strstr(e.message, "not JSON"));
    assert_null(msg);
}

static void unary_request_parses(void **state)
{
    (void)state;
    json_t *msg;
    struct airlock_error e;
    assert_int_equal(connect_unary_request("", 0, &msg, &e), 0);
    assert_true(json_is_object(msg));
    json_decref(msg);
    assert_int_equal(connect_unary_request("{\"a\":1,\"a\":2}", 13, &msg, &e), -1);
    assert_int_equal(e.class, AIRLOCK_ERR_INVALID);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(envelopes_are_framed),     cmocka_unit_test(end_stream_carries_the_error),
        cmocka_unit_test(codes_and_statuses),       cmocka_unit_test(stream_request_parses),
        cmocka_unit_test(stream_request_refusals),  cmocka_unit_test(unary_request_parses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
