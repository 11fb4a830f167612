/* The body shared by exec and background processes
 * ({"cmd":[…],"env":{},"cwd":"/","stdin":"","timeout_s":60,"tty":false}) checked field
 * by field and turned into a vmhost ExecRequest for one sandbox. */
#ifndef AIRLOCK_GATEWAY_EXEC_REQUEST_H
#define AIRLOCK_GATEWAY_EXEC_REQUEST_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "airlock_error.h"
#include "scheduler.pb-c.h"
#include "strbuf.h"
#include "vmhost.pb-c.h"

enum exec_kind {
    EXEC_FOREGROUND,   /* exec: timeout_s defaults to 60 */
    EXEC_BACKGROUND,   /* processes: no timeout by default; "stdin_open" allowed */
};

/* The vmhost ExecRequest and everything its pointers point into. */
struct exec_request {
    json_t *body;
    json_t *env;             /* sandbox env overlaid with the request's */
    Airlock__Vmhost__V1__ExecRequest req;
    ProtobufCBinaryData *argv;
    Airlock__Vmhost__V1__ExecRequest__EnvEntry *entries;
    Airlock__Vmhost__V1__ExecRequest__EnvEntry **entry_ptrs;
    ProtobufCBinaryData stdin;   /* points into body, or the caller's bytes */
    uint64_t timeout_s;
    bool tty;                /* on a PTY of rows x cols (stdout and stderr merged) */
    uint64_t rows, cols;
};

/* 0, or -1 with e (invalid) naming the field at fault.
 * exec_request_free() in either case. */
int exec_request_parse(struct exec_request *in, const struct strbuf *body, enum exec_kind kind,
                       struct airlock_error *e);
/* The same for a JSON object (stolen) that a caller made from its own
 * request (the gRPC API): the same checks and messages. The caller may
 * then point in->stdin at bytes of its own. */
int exec_request_from_json(struct exec_request *in, json_t *body, enum exec_kind kind,
                           struct airlock_error *e);
/* Fills in->req for sandbox sb (its env under the request's); -1 when out
 * of memory. */
int exec_request_build(struct exec_request *in, const Airlock__Scheduler__V1__Sandbox *sb);
void exec_request_free(struct exec_request *in);

#endif
