/* The gateway's REST API for the control-plane section with
 * common/http_client: requests on a kept connection (as a long-lived API
 * client sends them) or one per connection (as the CLI does), JSON
 * bodies, and the /v1/events SSE stream. */
#ifndef AIRLOCK_BENCH_REST_H
#define AIRLOCK_BENCH_REST_H

#include <jansson.h>

#include "http_client.h"

struct bench_rest {
    struct http_target target;
    char auth[192]; /* "Authorization: Bearer <key>" */
};

int bench_rest_init(struct bench_rest *r, const char *url, const char *key);

/* The HTTP status (answer parsed into *out when it is JSON, else NULL), or
 * -1 when the gateway could not be reached or the answer broke off. body:
 * JSON text or NULL. conn: the caller's kept connection (one request at a
 * time on it), or NULL for a connection of its own. */
int bench_rest_call(const struct bench_rest *r, struct http_conn *conn, const char *method,
                    const char *path, const char *body, json_t **out);

/* One request to t (on conn's kept connection, or one of its own when
 * NULL) with the headers given (NULL-terminated, may be NULL) and body,
 * its answer read to the end: the HTTP status with *got the body's
 * bytes, or -1 after printing why. */
int bench_http_do(const struct http_target *t, struct http_conn *conn, const char *method,
                  const char *path, const char *const *headers, const void *body, size_t len,
                  long *got);

/* A new project (named "bench") and a key of it, made with the admin
 * key: r speaks with that key, project gets the id. 0 or -1. */
int bench_rest_project(const char *url, const char *admin_key, struct bench_rest *r, char *project,
                       size_t projectlen);

/* GET path as text/event-stream; 0 with resp open on a 200, else -1. */
int bench_rest_open_sse(const struct bench_rest *r, const char *path, struct http_response *resp);

#endif
