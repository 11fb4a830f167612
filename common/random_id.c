#include "random_id.h"

#include <stdio.h>
#include <string.h>
#include <sys/random.h>

int random_id(const char *prefix, size_t n_bytes, char *out, size_t outlen)
{
    unsigned char bytes[64];
    size_t plen = strlen(prefix);
    if (n_bytes > sizeof(bytes) || plen + 2 * n_bytes + 1 > outlen)
        return -1;
    if (getrandom(bytes, n_bytes, 0) != (ssize_t)n_bytes)
        return -1;
    memcpy(out, prefix, plen);
    for (size_t i = 0; i < n_bytes; i++)
        snprintf(out + plen + 2 * i, 3, "%02x", bytes[i]);
    return 0;
}
