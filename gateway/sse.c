#include "sse.h"

#include <stdlib.h>
#include <string.h>

#include "reply.h"

#define SSE_BLOCK_SIZE (16 * 1024)

void sse_append(struct sse_buffer *b, const char *event, json_t *data)
{
    char *text = data ? json_dumps(data, JSON_COMPACT) : NULL;
    json_decref(data);
    strbuf_appendf(&b->text, "event: %s\ndata: %s\n\n", event, text ? text : "{}");
    free(text);
}

void sse_append_comment(struct sse_buffer *b, const char *text)
{
    strbuf_appendf(&b->text, ": %s\n\n", text);
}

bool sse_drained(struct sse_buffer *b)
{
    if (b->off < b->text.len)
        return false;
    b->text.len = 0;
    b->off = 0;
    return true;
}

ssize_t sse_take(struct sse_buffer *b, char *buf, size_t max)
{
    size_t n = b->text.len - b->off;
    if (n > max)
        n = max;
    memcpy(buf, b->text.data + b->off, n);
    b->off += n;
    return (ssize_t)n;
}

void sse_buffer_free(struct sse_buffer *b)
{
    strbuf_free(&b->text);
}

enum MHD_Result sse_reply(struct gw_request *r, MHD_ContentReaderCallback reader, void *cls,
                          MHD_ContentReaderFreeCallback free_cls)
{
    struct MHD_Response *resp =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, SSE_BLOCK_SIZE, reader, cls, free_cls);
    if (!resp) {
        free_cls(cls);
        return MHD_NO;
    }
    MHD_add_response_header(resp, "Content-Type", "text/event-stream");
    MHD_add_response_header(resp, "Cache-Control", "no-store");
    return reply_queue(r, 200, resp);
}
