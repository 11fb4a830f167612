/* Server-sent events: formatting ("event: NAME\ndata: JSON\n\n") into a
 * pending buffer that a libmicrohttpd content reader hands out piece by
 * piece, and the streaming response itself. Shared by exec output,
 * process re-attach, directory watches (sse_relay.c) and /v1/events. */
#ifndef AIRLOCK_GATEWAY_SSE_H
#define AIRLOCK_GATEWAY_SSE_H

#include <jansson.h>
#include <sys/types.h>

#include "gateway.h"

/* Formatted events not yet handed to MHD. */
struct sse_buffer {
    struct strbuf text;
    size_t off;
};

/* Appends one event; data is stolen (NULL sends "{}"). */
void sse_append(struct sse_buffer *b, const char *event, json_t *data);
/* An SSE comment line: ignored by clients, keeps idle streams alive. */
void sse_append_comment(struct sse_buffer *b, const char *text);
/* Whether everything appended has been handed out (the buffer is then
 * emptied for the next events). */
bool sse_drained(struct sse_buffer *b);
/* Copies up to max pending bytes into buf; the count. */
ssize_t sse_take(struct sse_buffer *b, char *buf, size_t max);
void sse_buffer_free(struct sse_buffer *b);

/* Queues a 200 text/event-stream response read by reader(cls); free_cls
 * runs when the response is done (also when the client goes away, and
 * right here if the response cannot be made). */
enum MHD_Result sse_reply(struct gw_request *r, MHD_ContentReaderCallback reader, void *cls,
                          MHD_ContentReaderFreeCallback free_cls);

#endif
