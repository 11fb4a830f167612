/* The mount point rule of volumes (volume_path.h). */
#include "volume_path.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* A volume over one of these would hide what the guest's daemon and the
 * host rely on (/proc, /dev) or the whole system (/). */
static bool is_system(const char *p)
{
    static const char *const sys[] = { "/proc", "/sys", "/dev" };
    if (strcmp(p, "/") == 0)
        return true;
    for (size_t i = 0; i < sizeof(sys) / sizeof(*sys); i++) {
        size_t n = strlen(sys[i]);
        if (strncmp(p, sys[i], n) == 0 && (p[n] == '\0' || p[n] == '/'))
            return true;
    }
    return false;
}

int volume_path_check(const char *p, size_t max, char *msg, size_t len)
{
    if (p[0] != '/' || strlen(p) >= max) {
        snprintf(msg, len, "path %.200s: must be absolute and shorter than %zu bytes", p, max);
        return -1;
    }
    for (const char *c = p + 1; *c;) {
        size_t n = strcspn(c, "/");
        bool dot = n == 1 && c[0] == '.', dotdot = n == 2 && c[0] == '.' && c[1] == '.';
        if ((n == 0 && c[n]) || dot || dotdot) {
            snprintf(msg, len, "path %.200s: no empty, '.' or '..' component", p);
            return -1;
        }
        c += n + (c[n] == '/');
    }
    if (is_system(p)) {
        snprintf(msg, len, "path %.200s: a system path (/, /proc, /sys, /dev or below)", p);
        return -1;
    }
    return 0;
}
