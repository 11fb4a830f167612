#include "inject.h"

#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "crypto.h"
#include "audit.h"
#include "log.h"
#include "names.h"
#include "orgs.h"
#include "peer_identity.h"
#include "placement.h"
#include "project_keys.h"
#include "reseal.h"
#include "rules.h"
#include "sealed.h"
#include "secmem.h"

/* Columns of the candidate query after the sealed ones. */
enum { C_RATE = SEALED_N_COLUMNS, C_BURST };

/* The best candidate row for host, or -1: sandbox scope over project
 * scope over org scope, then an exact pattern over a wildcard. */
static int best_binding(const PGresult *res, const char *host)
{
    int best = -1, best_rank = -1;
    for (int i = 0; i < PQntuples(res); i++) {
        const char *pattern = PQgetvalue(res, i, SEALED_PATTERN);
        if (!name_matches(pattern, host))
            continue;
        int scope = *PQgetvalue(res, i, SEALED_SANDBOX) ? 2 : *PQgetvalue(res, i, SEALED_ORG) ? 0 : 1;
        int rank = 2 * scope + (pattern[0] != '*');
        if (rank > best_rank) {
            best = i;
            best_rank = rank;
        }
    }
    return best;
}

/* Decrypts the chosen row's secret — its AAD covers the row's owner,
 * scope and every binding, this one's rule included — and renders the
 * rule into out. */
static int render(const PGresult *res, int row, const unsigned char *data_key,
                  struct sealed_row *s, Airlock__Vault__V1__Injection *out,
                  struct airlock_error *e)
{
    int rc = -1;
    unsigned char *pt = NULL;
    char *name = NULL, *value = NULL;
    size_t len = 0, value_len = 0;
    if (sealed_row_open(s, data_key, &pt, &len, e) < 0)
        goto out;
    if (rule_render(PQgetvalue(res, row, SEALED_RULE), pt, len, &name, &value, &value_len) < 0) {
        airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "out of memory");
        goto out;
    }
    /* protobuf-c needs heap copies; injection_clear zeroes them. */
    out->header_value = strndup(value, value_len);
    out->header_name = name;
    out->secret_id = strdup(s->f.id);
    name = NULL;
    out->secret_value.data = malloc(len ? len : 1);
    if (out->secret_value.data) {
        memcpy(out->secret_value.data, pt, len);
        out->secret_value.len = len;
    }
    if (out->secret_id && asprintf(&out->placeholder, RULE_SECRET_PLACEHOLDER_PREFIX "%s",
                                   out->secret_id) < 0)
        out->placeholder = NULL;
    if (out->header_value && out->secret_id && out->secret_value.data && out->placeholder) {
        rc = 0;
    } else {
        airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "out of memory");
        injection_clear(out);
    }
out:
    secmem_free(value, value_len + 1);
    if (pt)
        secmem_free(pt, len ? len : 1);
    free(name);
    return rc;
}

void injection_clear(Airlock__Vault__V1__Injection *out)
{
    if (out->header_value && out->header_value != protobuf_c_empty_string)
        OPENSSL_cleanse(out->header_value, strlen(out->header_value));
    vault_free_string(out->header_value);
    vault_free_string(out->header_name);
    vault_free_string(out->secret_id);
    vault_free_string(out->placeholder);
    if (out->secret_value.data) {
        OPENSSL_cleanse(out->secret_value.data, out->secret_value.len);
        free(out->secret_value.data);
    }
    airlock__vault__v1__injection__init(out);
}

static int check_request(const Airlock__Vault__V1__ResolveInjectionRequest *req, char *host,
                         struct airlock_error *e)
{
    if (vault_check_id("project_id", req->project_id, true, e) < 0 ||
        vault_check_id("sandbox_id", req->sandbox_id, false, e) < 0)
        return -1;
    if (name_normalize(req->host, strlen(req->host), host) < 0)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID, "host: \"%s\" is not a host name",
                                 req->host);
    if (strlen(req->method) > 32 || strlen(req->path) > 8192)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID, "%s: too long",
                                 strlen(req->method) > 32 ? "method" : "path");
    return 0;
}

/* Decides for a matched secret: key, rate limit, decryption. */
static int resolve_matched(struct vault *v, const Airlock__Vault__V1__ResolveInjectionRequest *req,
                           const PGresult *res, int row, const char *actor,
                           Airlock__Vault__V1__Injection *out, struct airlock_error *e)
{
    unsigned char *data_key = secmem_alloc(VAULT_KEY_BYTES);
    if (!data_key)
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "cannot lock memory for a key");
    /* Before anything is decrypted or counted: a secret bound for TLS
     * never goes into a request that crosses the network in clear. */
    if (req->plaintext && strcmp(PQgetvalue(res, row, SEALED_PLAINTEXT), "t") != 0) {
        secmem_free(data_key, VAULT_KEY_BYTES);
        return airlock_error_set(
            e, AIRLOCK_ERR_PERMISSION,
            "secret %s is injected into TLS connections only; this request is plain "
            "HTTP (use https://, or create the secret with plaintext allowed)",
            PQgetvalue(res, row, SEALED_ID));
    }
    struct customer_key ck = { req->customer_key.data, req->customer_key.len };
    const char *org_id = PQgetvalue(res, row, SEALED_ORG);
    /* The key is checked before a token is taken: a refused BYOK request
     * does not use up the secret's budget. An org secret is under the
     * org's key, whatever the project's. */
    int rc = *org_id ? org_data_key(v, org_id, data_key, e)
                     : project_data_key(v, req->project_id, ck, false, actor, data_key, e);
    if (rc == 0 &&
        !ratelimit_take(&v->ratelimit, PQgetvalue(res, row, SEALED_ID),
                        (uint32_t)strtoul(PQgetvalue(res, row, C_RATE), NULL, 10),
                        (uint32_t)strtoul(PQgetvalue(res, row, C_BURST), NULL, 10),
                        clock_monotonic_ms()))
        rc = airlock_error_set(e, AIRLOCK_ERR_CAPACITY,
                               "secret %s: rate limit of %s per minute reached",
                               PQgetvalue(res, row, SEALED_ID), PQgetvalue(res, row, C_RATE));
    struct sealed_row s;
    if (rc == 0)
        rc = sealed_row_load(res, row, &s, e);
    if (rc == 0) {
        rc = render(res, row, data_key, &s, out, e);
        /* It opened with the old AAD: its owner's old rows get the full
         * one now that vault holds their key (a BYOK project's maybe only
         * for this request). */
        if (rc == 0 && s.aad_version < SECRET_AAD_VERSION)
            reseal_owner(v, s.f.project_id, s.f.org_id, data_key);
        sealed_row_clear(&s);
    }
    secmem_free(data_key, VAULT_KEY_BYTES);
    return rc;
}

int inject_resolve(struct vault *v, Airlock__Vault__V1__ResolveInjectionRequest *req,
                   const char *caller_node, Airlock__Vault__V1__Injection *out,
                   struct airlock_error *e)
{
    char host[NAME_MAX_LEN + 1], verified_actor[PEER_NODE_MAX + 8];
    int rc = -1;
    PGresult *res = NULL;
    if (check_request(req, host, e) < 0)
        goto out;
    const char *actor = *req->actor ? req->actor : "unknown";
    if (caller_node) {
        snprintf(verified_actor, sizeof(verified_actor), "egress/%s", caller_node);
        actor = verified_actor;
        if (placement_check(v, caller_node, req->project_id, req->sandbox_id, e) < 0) {
            /* A node asking for what is not its own is worth a record. */
            struct audit_event ev = { .actor = actor, .action = "inject",
                                      .project_id = req->project_id,
                                      .sandbox_id = req->sandbox_id, .secret_id = "",
                                      .host = host, .method = req->method, .path = req->path,
                                      .outcome = e };
            vault_audit(v, &ev, e);
            goto out;
        }
    }
    const char *params[] = { req->project_id, req->sandbox_id };
    res = db_query(&v->db,
                   /* Every binding of each candidate (sealed_row_load). */
                   "SELECT " SEALED_COLUMNS ", s.rate_limit_per_minute, s.rate_limit_burst"
                   " FROM vault_secrets s JOIN vault_bindings b ON b.secret_id = s.id"
                   " WHERE (s.project_id = $1 AND (s.sandbox_id = '' OR s.sandbox_id = $2))"
                   "  OR s.org_id = (SELECT org_id FROM vault_project_orgs WHERE project_id = $1)"
                   " ORDER BY s.created_at DESC, s.id",
                   2, params, AIRLOCK_ERROR_MSG(e));
    if (!res) {
        airlock_error_classify(e, AIRLOCK_ERR_INTERNAL);
        goto out;
    }
    int row = best_binding(res, host);
    if (row < 0) {
        airlock_error_set(e, AIRLOCK_ERR_NOT_FOUND, "no secret of project %s is bound to host %s",
                          req->project_id, host);
        goto out;
    }
    rc = resolve_matched(v, req, res, row, actor, out, e);
    struct audit_event ev = { .actor = actor, .action = "inject", .project_id = req->project_id,
                              .sandbox_id = req->sandbox_id,
                              .secret_id = PQgetvalue(res, row, SEALED_ID), .host = host,
                              .method = req->method, .path = req->path,
                              .org_id = PQgetvalue(res, row, SEALED_ORG),
                              .outcome = rc == 0 ? NULL : e };
    /* An injection that is not on record does not happen. */
    if (vault_audit(v, &ev, e) < 0) {
        if (rc == 0)
            injection_clear(out);
        rc = -1;
    }
out:
    PQclear(res);
    if (req->customer_key.data)
        OPENSSL_cleanse(req->customer_key.data, req->customer_key.len);
    return rc;
}
