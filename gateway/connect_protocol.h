/* The Connect protocol (connectrpc.com/docs/protocol) as E2B's SDK speaks
 * it to envd: HTTP/1.1 with JSON. A unary call is a POST of
 * application/json answered with the response message, or an error
 * {"code":"not_found","message":"…"} under the code's HTTP status. A
 * server-streaming call (application/connect+json) has one enveloped
 * request message; its response is always 200 and a run of envelopes
 * (flags byte, big-endian 32-bit length, JSON) ending with one flagged
 * end-stream that carries {} or {"error":{…}}. Pure framing and code
 * mapping: no I/O here (envd_*.c use it). */
#ifndef AIRLOCK_GATEWAY_CONNECT_PROTOCOL_H
#define AIRLOCK_GATEWAY_CONNECT_PROTOCOL_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "airlock_error.h"
#include "strbuf.h"

#define CONNECT_ENVELOPE_HEADER 5
#define CONNECT_FLAG_COMPRESSED 0x01
#define CONNECT_FLAG_END_STREAM 0x02

#define CONNECT_UNARY_TYPE "application/json"
#define CONNECT_STREAM_TYPE "application/connect+json"

/* Connect's name of an error class ("invalid_argument", "not_found", …). */
const char *connect_code_name(enum airlock_err class);
/* The HTTP status Connect gives that code on a unary call. */
unsigned connect_http_status(enum airlock_err class);
/* {"code":…,"message":…} */
json_t *connect_error_json(const char *code, const char *message);

/* Appends one envelope of flags around payload. */
void connect_envelope_append(struct strbuf *out, uint8_t flags, const void *payload, size_t len);
/* Appends msg (stolen) as a message envelope; -1 when out of memory. */
int connect_envelope_json(struct strbuf *out, json_t *msg);
/* Appends the end-stream envelope: {} when code is NULL, else
 * {"error":{"code":code,"message":message}}. */
void connect_end_stream(struct strbuf *out, const char *code, const char *message);

/* The single message envelope that makes up a server-streaming call's
 * request body: 0 with *msg (a JSON object, caller's), or -1 with e
 * (invalid) saying what is wrong (short, compressed, not one envelope, not
 * a JSON object). */
int connect_stream_request(const void *body, size_t len, json_t **msg, struct airlock_error *e);
/* A unary call's body as a JSON object ("" is {}): 0, or -1 with e. */
int connect_unary_request(const void *body, size_t len, json_t **msg, struct airlock_error *e);

#endif
