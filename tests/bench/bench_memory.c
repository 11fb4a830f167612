/* What an idle sandbox's QEMU holds in memory, from /proc/<pid>/smaps:
 * totals, and the guest RAM mapping (the template's memory file mapped
 * privately, found by the mem-path= on QEMU's command line) split into the
 * pages the guest dirtied (private copies) and clean pages shared with
 * every sandbox of the template through the page cache; and QEMU's own
 * memory by kind: TCG's code buffer (the one anonymous mapping that is
 * writable and executable), mapped files (binary, libraries), the rest
 * (heap, arenas, stacks). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_memory.h"
#include "proc.h"

/* mem-path=<path> from the command line, into out; -1 without one. */
static int guest_ram_path(int pid, char *out, size_t outlen)
{
    char *cmd = proc_cmdline(pid);
    if (!cmd)
        return -1;
    const char *p = strstr(cmd, "mem-path=");
    int rc = -1;
    if (p) {
        p += strlen("mem-path=");
        size_t n = strcspn(p, ", ");
        if (n < outlen) {
            memcpy(out, p, n);
            out[n] = '\0';
            rc = 0;
        }
    }
    free(cmd);
    return rc;
}

int bench_qemu_memory(int pid, struct bench_qemu_memory *out)
{
    memset(out, 0, sizeof(*out));
    char ram[4096] = "";
    guest_ram_path(pid, ram, sizeof(ram)); /* none: a cold-booted VM, anonymous RAM */
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/smaps", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char line[4608];
    bool in_ram = false;
    double *own = &out->anon_mib; /* the kind of the current mapping outside guest RAM */
    while (fgets(line, sizeof(line), f)) {
        unsigned long long kib;
        char field[64];
        if (sscanf(line, "%63[A-Za-z_]: %llu kB", field, &kib) == 2) {
            double mib = (double)kib / 1024;
            if (strcmp(field, "Rss") == 0) {
                out->rss_mib += mib;
                if (in_ram)
                    out->ram_rss_mib += mib;
                else
                    *own += mib;
            } else if (strcmp(field, "Pss") == 0) {
                out->pss_mib += mib;
            } else if (strcmp(field, "Private_Dirty") == 0) {
                out->private_dirty_mib += mib;
                if (in_ram)
                    out->ram_dirty_mib += mib;
            } else if (strncmp(field, "Shared_", 7) == 0 && !in_ram) {
                out->own_shared_mib += mib;
            }
            continue;
        }
        /* A mapping's first line: "start-end perms offset dev inode path". */
        const char *name = strchr(line, '/');
        in_ram = ram[0] && name && strncmp(name, ram, strlen(ram)) == 0 &&
                 (name[strlen(ram)] == '\n' || name[strlen(ram)] == '\0');
        char perms[8] = "";
        sscanf(line, "%*s %7s", perms);
        own = name                             ? &out->file_mib
            : strncmp(perms, "rwx", 3) == 0 ? &out->code_mib
                                             : &out->anon_mib;
    }
    fclose(f);
    return 0;
}

long bench_mem_available_mib(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f)
        return -1;
    char line[256];
    long kib = -1;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "MemAvailable: %ld kB", &kib) == 1)
            break;
    fclose(f);
    return kib < 0 ? -1 : kib / 1024;
}

/* user+nice+system+irq+softirq+steal and the total, in ticks. */
static int cpu_ticks(unsigned long long *busy, unsigned long long *total)
{
    FILE *f = fopen("/proc/stat", "r");
    if (!f)
        return -1;
    unsigned long long v[8] = { 0 };
    int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
                   &v[4], &v[5], &v[6], &v[7]);
    fclose(f);
    if (n < 8)
        return -1;
    *busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
    *total = *busy + v[3] + v[4];
    return 0;
}

double bench_cpu_busy_percent(int seconds)
{
    unsigned long long b0, t0, b1, t1;
    if (cpu_ticks(&b0, &t0) < 0)
        return -1;
    sleep((unsigned)seconds);
    if (cpu_ticks(&b1, &t1) < 0 || t1 == t0)
        return -1;
    return 100.0 * (double)(b1 - b0) / (double)(t1 - t0);
}
