#include "vault.h"

#include <protobuf-c/protobuf-c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crypto.h"
#include "master_key.h"
#include "reseal.h"
#include "secmem.h"
#include "vault_schema.h"

int vault_init(struct vault *v, const char *database_url, const char *master_key_file, char *err,
               size_t errlen)
{
    memset(v, 0, sizeof(*v));
    ratelimit_init(&v->ratelimit);
    unlocked_keys_init(&v->unlocked);
    v->master_key = secmem_alloc(VAULT_KEY_BYTES);
    if (!v->master_key) {
        snprintf(err, errlen, "cannot lock memory for the master key (RLIMIT_MEMLOCK?)");
        goto fail;
    }
    if (master_key_load(master_key_file, v->master_key, err, errlen) < 0)
        goto fail;
    if (db_open(&v->db, database_url, err, errlen) < 0)
        goto fail;
    if (db_migrate(&v->db, &vault_schema, NULL, NULL, err, errlen) < 0)
        goto fail_db;
    /* Before serving: old rows whose key vault holds get the full AAD. */
    struct airlock_error e;
    if (reseal_at_start(v, &e) < 0) {
        snprintf(err, errlen, "re-sealing old secrets: %s", e.message);
        goto fail_db;
    }
    return 0;
fail_db:
    db_close(&v->db);
fail:
    secmem_free(v->master_key, VAULT_KEY_BYTES);
    ratelimit_destroy(&v->ratelimit);
    unlocked_keys_destroy(&v->unlocked);
    return -1;
}

void vault_shutdown(struct vault *v)
{
    db_close(&v->db);
    secmem_free(v->master_key, VAULT_KEY_BYTES);
    v->master_key = NULL;
    ratelimit_destroy(&v->ratelimit);
    unlocked_keys_destroy(&v->unlocked);
}

int vault_check_id(const char *field, const char *value, bool required, struct airlock_error *e)
{
    size_t len = strlen(value);
    if (len == 0 && !required)
        return 0;
    bool ok = len > 0 && len <= 128;
    for (const char *p = value; ok && *p; p++)
        ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
             *p == '_' || *p == '.' || *p == '-';
    if (ok)
        return 0;
    return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                             "%s: %s1 to 128 characters of A-Z a-z 0-9 _ . -", field,
                             required ? "required, " : "");
}

int vault_check_owner(const char *project_id, const char *org_id, bool *by_org,
                      struct airlock_error *e)
{
    *by_org = *org_id && !*project_id;
    if (*org_id && *project_id)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                 "org_id: give project_id or org_id, not both");
    return *by_org ? vault_check_id("org_id", org_id, true, e)
                   : vault_check_id("project_id", project_id, true, e);
}

void vault_free_string(char *s)
{
    if (s != protobuf_c_empty_string)
        free(s);
}
