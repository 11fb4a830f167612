#include "rules.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "secmem.h"

/* RFC 9110 token characters, what a header name is made of. */
static bool tchar(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c && strchr("!#$%&'*+-.^_`|~", c));
}

int rule_check(const char *rule, char *err, size_t errlen)
{
    size_t len = strlen(rule), name_len = 0;
    while (tchar(rule[name_len]))
        name_len++;
    if (len > RULE_MAX_LEN) {
        snprintf(err, errlen, "at most %d bytes", RULE_MAX_LEN);
        return -1;
    }
    if (name_len == 0 || rule[name_len] != ':') {
        snprintf(err, errlen, "must be a header line \"Name: value with %s\"", RULE_PLACEHOLDER);
        return -1;
    }
    for (const char *p = rule; *p; p++) {
        if ((unsigned char)*p < 0x20 || *p == 0x7f) {
            snprintf(err, errlen, "control characters are not allowed");
            return -1;
        }
    }
    const char *first = strstr(rule + name_len, RULE_PLACEHOLDER);
    if (!first || strstr(first + 1, RULE_PLACEHOLDER)) {
        snprintf(err, errlen, "the value must contain %s exactly once", RULE_PLACEHOLDER);
        return -1;
    }
    return 0;
}

int rule_check_secret(const unsigned char *value, size_t len, char *err, size_t errlen)
{
    if (len == 0 || len > SECRET_MAX_BYTES) {
        snprintf(err, errlen, "1 to %d bytes", SECRET_MAX_BYTES);
        return -1;
    }
    if (memchr(value, '\r', len) || memchr(value, '\n', len) || memchr(value, '\0', len)) {
        snprintf(err, errlen, "CR, LF and NUL are not allowed in a header value");
        return -1;
    }
    return 0;
}

int rule_render(const char *rule, const unsigned char *secret, size_t secret_len, char **name,
                char **value, size_t *value_len)
{
    size_t name_len = strcspn(rule, ":");
    const char *tmpl = rule + name_len + 1;
    tmpl += strspn(tmpl, " \t");
    const char *hole = strstr(tmpl, RULE_PLACEHOLDER);
    size_t before = (size_t)(hole - tmpl), after = strlen(hole + strlen(RULE_PLACEHOLDER));
    *value_len = before + secret_len + after;
    *name = strndup(rule, name_len);
    *value = secmem_alloc(*value_len + 1);
    if (!*name || !*value) {
        free(*name);
        secmem_free(*value, *value_len + 1);
        *name = *value = NULL;
        return -1;
    }
    memcpy(*value, tmpl, before);
    memcpy(*value + before, secret, secret_len);
    memcpy(*value + before + secret_len, hole + strlen(RULE_PLACEHOLDER), after);
    return 0;
}
