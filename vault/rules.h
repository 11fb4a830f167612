/* Bindings: which hosts a secret goes to and how it is written into the
 * request. A rule is one header line with the placeholder {secret} exactly
 * once, e.g. "Authorization: Bearer {secret}". */
#ifndef AIRLOCK_VAULT_RULES_H
#define AIRLOCK_VAULT_RULES_H

#include <stdbool.h>
#include <stddef.h>

#define RULE_PLACEHOLDER "{secret}"
#define RULE_MAX_LEN 1024
#define SECRET_MAX_BYTES 8192

/* -1 with why in err (without the field name) when rule is not a valid
 * header line with one placeholder. */
int rule_check(const char *rule, char *err, size_t errlen);

/* -1 with why in err when the secret cannot go into a header (empty, too
 * long, CR, LF or NUL: it would split or end the header). */
int rule_check_secret(const unsigned char *value, size_t len, char *err, size_t errlen);

/* What an agent may send in place of a secret's value: "airlock-secret-"
 * and the secret's id. Not secret itself; egress swaps it for the value on
 * the secret's hosts only. */
#define RULE_SECRET_PLACEHOLDER_PREFIX "airlock-secret-"

/* Splits a checked rule into the header name (malloc'd) and the value with
 * the secret put in (in locked memory: secmem_free(*value, *value_len + 1)).
 * 0 or -1 (out of memory). */
int rule_render(const char *rule, const unsigned char *secret, size_t secret_len, char **name,
                char **value, size_t *value_len);

#endif
