/* MetricsRequest: what the guest uses now (guest.proto Metrics), as
 * E2B's envd reports it from inside its sandboxes: CPU busy since the
 * previous request, memory in use, the root filesystem's blocks. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "clock.h"
#include "guestd_state.h"
#include "request_handlers.h"
#include "send.h"

/* The first line of /proc/stat: busy (all but idle and iowait) and total
 * ticks of every CPU together. */
static int cpu_ticks(unsigned long long *busy, unsigned long long *total)
{
    FILE *f = fopen("/proc/stat", "re");
    unsigned long long v[8] = { 0 };
    int n = f ? fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
                       &v[3], &v[4], &v[5], &v[6], &v[7])
              : 0;
    if (f)
        fclose(f);
    if (n < 4)
        return -1;
    *total = 0;
    for (int i = 0; i < 8; i++)
        *total += v[i];
    *busy = *total - v[3] - v[4];
    return 0;
}

/* MemTotal, MemAvailable and Cached of /proc/meminfo, in bytes. */
static int memory(unsigned long long *total, unsigned long long *available,
                  unsigned long long *cached)
{
    FILE *f = fopen("/proc/meminfo", "re");
    if (!f)
        return -1;
    char line[128];
    int found = 0;
    while (found < 3 && fgets(line, sizeof(line), f)) {
        unsigned long long kb;
        if (sscanf(line, "MemTotal: %llu kB", &kb) == 1) {
            *total = kb * 1024;
            found++;
        } else if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) {
            *available = kb * 1024;
            found++;
        } else if (sscanf(line, "Cached: %llu kB", &kb) == 1) {
            *cached = kb * 1024;
            found++;
        }
    }
    fclose(f);
    return found == 3 ? 0 : -1;
}

void metrics_request(struct guestd *g, uint32_t id, const GuestFrame *frame)
{
    (void)frame;
    Airlock__Guest__V1__Metrics m = AIRLOCK__GUEST__V1__METRICS__INIT;
    unsigned long long busy, total, mem_total = 0, mem_available = 0, mem_cache = 0;
    struct statvfs fs;
    if (cpu_ticks(&busy, &total) < 0 || memory(&mem_total, &mem_available, &mem_cache) < 0 ||
        statvfs("/", &fs) < 0) {
        guestd_send_result(g, id, EIO, "metrics: /proc/stat, /proc/meminfo or / unreadable");
        return;
    }
    unsigned long long d_total = total - g->cpu_total_ticks, d_busy = busy - g->cpu_busy_ticks;
    g->cpu_busy_ticks = busy;
    g->cpu_total_ticks = total;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    m.cpu_count = cpus > 0 ? (uint32_t)cpus : 1;
    m.cpu_used_pct = d_total ? 100.0 * (double)d_busy / (double)d_total : 0;
    m.mem_total = mem_total;
    m.mem_used = mem_total > mem_available ? mem_total - mem_available : 0;
    m.mem_cache = mem_cache;
    m.disk_total = (uint64_t)fs.f_blocks * fs.f_frsize;
    m.disk_used = (uint64_t)(fs.f_blocks - fs.f_bfree) * fs.f_frsize;
    m.unix_ms = unix_now_ms();
    GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
    f.stream_id = id;
    f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_METRICS;
    f.metrics = &m;
    guestd_send(g, &f);
}
