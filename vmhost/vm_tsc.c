#include "vm_tsc.h"

#include <ctype.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "log.h"

/* "2445.428" -> 2445428 without floating point rounding. */
static long mhz_to_khz(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    if (!isdigit((unsigned char)*s))
        return -1;
    long khz = 0;
    for (; isdigit((unsigned char)*s); s++) {
        if (khz > 100000000)
            return -1;
        khz = khz * 10 + (*s - '0');
    }
    khz *= 1000;
    if (*s == '.') {
        s++;
        for (long scale = 100; scale >= 1 && isdigit((unsigned char)*s); scale /= 10, s++)
            khz += (*s - '0') * scale;
    }
    return khz > 0 ? khz : -1;
}

static bool has_word(const char *line, size_t len, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = line; p + n <= line + len; p++) {
        bool start = p == line || p[-1] == ' ' || p[-1] == '\t';
        bool end = p + n == line + len || p[n] == ' ' || p[n] == '\t';
        if (start && end && strncmp(p, word, n) == 0)
            return true;
    }
    return false;
}

long vm_tsc_khz_from_cpuinfo(const char *cpuinfo)
{
    long khz = -1;
    bool known_freq = false;
    for (const char *line = cpuinfo; line && *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        const char *colon = memchr(line, ':', len);
        if (colon) {
            if (strncmp(line, "cpu MHz", 7) == 0 && khz < 0)
                khz = mhz_to_khz(colon + 1);
            else if (strncmp(line, "flags", 5) == 0 &&
                     has_word(colon + 1, len - (size_t)(colon + 1 - line), "tsc_known_freq"))
                known_freq = true;
        }
        line = nl ? nl + 1 : NULL;
    }
    return known_freq ? khz : -1;
}

long vm_tsc_khz_from_dmesg(const char *dmesg)
{
    static const char refined[] = "tsc: Refined TSC clocksource calibration:";
    static const char detected[] = "tsc: Detected ";
    long refined_khz = -1, detected_khz = -1;
    for (const char *p = dmesg; (p = strstr(p, "tsc: ")); p++) {
        if (strncmp(p, refined, sizeof(refined) - 1) == 0)
            refined_khz = mhz_to_khz(p + sizeof(refined) - 1);
        else if (strncmp(p, detected, sizeof(detected) - 1) == 0)
            detected_khz = mhz_to_khz(p + sizeof(detected) - 1);
    }
    return refined_khz > 0 ? refined_khz : detected_khz;
}

static long host_khz = -1;
static pthread_once_t host_once = PTHREAD_ONCE_INIT;

static void lookup_host_khz(void)
{
    char *text = NULL;
    if (fs_read_file("/proc/cpuinfo", 16u << 20, &text, NULL, NULL, 0) == 0)
        host_khz = vm_tsc_khz_from_cpuinfo(text);
    free(text);
    if (host_khz > 0)
        return;
    text = NULL;
    const char *dmesg[] = { "dmesg", NULL };
    if (run_command(dmesg, NULL, &text, NULL, 0) == 0)
        host_khz = vm_tsc_khz_from_dmesg(text);
    free(text);
    if (host_khz <= 0)
        log_warn("host TSC frequency unknown",
                 "detail=\"neither /proc/cpuinfo (tsc_known_freq) nor dmesg (tsc: Detected) "
                 "names it; guests boot without tsc_early_khz and about 1 in 10 TCG boots may "
                 "hang\"");
}

long vm_host_tsc_khz(void)
{
    pthread_once(&host_once, lookup_host_khz);
    return host_khz;
}
