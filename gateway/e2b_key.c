#include "e2b_key.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* The secret of both forms: 32 random bytes in lowercase hex
 * (scheduler/tenancy.c). */
#define KEY_HEX_LEN 64

static bool hex_secret(const char *s)
{
    if (strlen(s) != KEY_HEX_LEN)
        return false;
    for (const char *p = s; *p; p++)
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
            return false;
    return true;
}

static int swap_prefix(const char *key, const char *from, const char *to_fmt, char *out,
                       size_t outlen)
{
    size_t n = strlen(from);
    if (!key || strncmp(key, from, n) != 0 || !hex_secret(key + n))
        return -1;
    int w = snprintf(out, outlen, to_fmt, key + n);
    return w < 0 || (size_t)w >= outlen ? -1 : 0;
}

int e2b_key_bearer(const char *key, char *out, size_t outlen)
{
    return swap_prefix(key, E2B_KEY_PREFIX, "Bearer " AIRLOCK_KEY_PREFIX "%s", out, outlen);
}

int e2b_key_from_airlock(const char *key, char *out, size_t outlen)
{
    return swap_prefix(key, AIRLOCK_KEY_PREFIX, E2B_KEY_PREFIX "%s", out, outlen);
}
