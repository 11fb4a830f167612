/* libFuzzer target: HTTP/1.x as egress reads it on intercepted and
 * followed connections (egress/http_msg.h, http_follow.h). A complete
 * head's spans must lie inside it; chunked scanning must account for
 * every byte; the follower must never let more bytes go than it was fed.
 * A checksum of the input picks where the stream is cut in two, so every
 * input byte stays part of the message (the seeds are plain messages). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http_follow.h"
#include "http_msg.h"

static void assert_span_inside(struct http_span s, size_t len)
{
    if ((size_t)s.off + s.len > len)
        abort();
}

static void check_head(const uint8_t *buf, size_t size, bool request)
{
    static struct http_head h; /* large: not on the stack */
    enum http_result r = request ? http_parse_request(buf, size, &h)
                                 : http_parse_response(buf, size, &h);
    if (r != HTTP_COMPLETE)
        return;
    if (h.len > size || h.len > HTTP_HEAD_MAX || h.n_headers > HTTP_HEADERS_MAX)
        abort();
    if (request) {
        assert_span_inside(h.method, h.len);
        assert_span_inside(h.target, h.len);
    } else if (h.status < 100 || h.status > 599) {
        abort();
    }
    for (size_t i = 0; i < h.n_headers; i++) {
        assert_span_inside(h.headers[i].name, h.len);
        assert_span_inside(h.headers[i].value, h.len);
    }
    struct http_body b;
    int framed = request ? http_request_body(buf, &h, &b) : http_response_body(buf, &h, false, &b);
    (void)http_keep_alive(buf, &h);
    if (framed < 0 || b.kind != HTTP_BODY_CHUNKED)
        return;
    struct http_chunked c = { 0 };
    bool done = false;
    ssize_t used = http_chunked_scan(&c, buf + h.len, size - h.len, &done);
    if (used > (ssize_t)(size - h.len) || (used >= 0 && !done && used != (ssize_t)(size - h.len)))
        abort();
}

static bool allow_all_but_one(void *ctx, const char *name)
{
    (void)ctx;
    return !name || strcmp(name, "denied.test") != 0;
}

/* Fed in two pieces, the follower releases at most what it was given. */
static void check_follow(const uint8_t *buf, size_t size, size_t cut)
{
    struct http_follow *f = http_follow_new(allow_all_but_one, NULL);
    if (!f)
        return;
    size_t ready = 0, released = 0;
    const size_t pieces[2][2] = { { 0, cut }, { cut, size - cut } };
    for (int i = 0; i < 2; i++) {
        if (http_follow_feed(f, buf + pieces[i][0], pieces[i][1], &ready) != HTTP_FOLLOW_OK)
            break;
        released += ready;
        /* Every byte fed so far is either released or held back. */
        if (released + http_follow_held(f) != pieces[i][0] + pieces[i][1])
            abort();
    }
    http_follow_response(f, buf, size);
    http_follow_free(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t sum = 0;
    for (size_t i = 0; i < size; i++)
        sum += data[i];
    check_head(data, size, true);
    check_head(data, size, false);
    check_follow(data, size, size ? sum % (size + 1) : 0);
    return 0;
}
