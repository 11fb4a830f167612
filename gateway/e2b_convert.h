/* airlock's sandboxes as E2B's API shows them (docs/e2b.md), and the
 * inputs of its listings: pure functions of their arguments, so
 * unit-tested alone (tests/e2b/test_e2b_convert.c). */
#ifndef AIRLOCK_GATEWAY_E2B_CONVERT_H
#define AIRLOCK_GATEWAY_E2B_CONVERT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "airlock_error.h"
#include "scheduler.pb-c.h"

/* What the SDKs are told envd is: at least every version they compare
 * against for a feature (0.6.4 is the newest they check). */
#define E2B_ENVD_VERSION "0.6.4"
/* E2B's name of the default template. */
#define E2B_DEFAULT_TEMPLATE "base"
/* endAt of a sandbox without a deadline: it does not expire. */
#define E2B_NEVER "9999-12-31T23:59:59.000Z"

typedef Airlock__Scheduler__V1__Sandbox Sandbox;

/* E2B's state of an airlock state: "paused" for paused, suspending,
 * suspended, and for error and lost (stopped; connect says why); else
 * "running". */
const char *e2b_state(const char *airlock_state);
/* E2B's templateID of airlock's template name, and back ("default" is
 * "base"; E2B's "base" and airlock's "default" both name it). */
const char *e2b_template_id(const char *airlock_template);
const char *e2b_airlock_template(const char *template_id);

/* The Sandbox of a create, connect or resume: domain is the gateway's
 * public domain, access_token what envd is to be called with. */
json_t *e2b_sandbox_json(const Sandbox *sb, const char *domain, const char *access_token);
/* A ListedSandbox (the listings). */
json_t *e2b_listed_json(const Sandbox *sb);
/* A SandboxDetail (GET /sandboxes/{id}). */
json_t *e2b_detail_json(const Sandbox *sb, const char *domain, const char *access_token);

/* A listing's metadata filter: "k=v&k2=v2", the whole and then each key
 * and value URL-encoded (as E2B's server reads it). */
#define E2B_METADATA_FILTER_MAX 32
struct e2b_metadata_filter {
    size_t n;
    char *keys[E2B_METADATA_FILTER_MAX], *values[E2B_METADATA_FILTER_MAX];
};
/* 0 with *f (e2b_metadata_filter_free it), or -1 with e naming
 * `metadata`; NULL or "" is no filter. */
int e2b_metadata_filter_parse(const char *query, struct e2b_metadata_filter *f,
                              struct airlock_error *e);
void e2b_metadata_filter_free(struct e2b_metadata_filter *f);
/* Whether sb's metadata has every pair of f. */
bool e2b_metadata_matches(const struct e2b_metadata_filter *f, const Sandbox *sb);

/* The v2 listing's cursor after sb ("<created ms>.<id>"), and its parse:
 * -1 with e naming nextToken when malformed. */
void e2b_next_token(const Sandbox *sb, char *out, size_t outlen);
int e2b_next_token_parse(const char *token, int64_t *created_ms, char *id, size_t idlen,
                         struct airlock_error *e);
/* "2026-12-05T18:00:00.000Z" (also without the fraction, or +00:00) as
 * unix ms; -1 with e naming field otherwise. */
int e2b_time_parse(const char *text, const char *field, int64_t *unix_ms, struct airlock_error *e);

#endif
