/* Memory of a sandbox's QEMU and of the host (bench_memory.c). */
#ifndef AIRLOCK_BENCH_MEMORY_H
#define AIRLOCK_BENCH_MEMORY_H

#include <stdbool.h>
#include <unistd.h>

struct bench_qemu_memory {
    double rss_mib;       /* everything resident */
    double pss_mib;       /* shared pages divided among their users */
    double private_dirty_mib; /* pages written that no other process maps: its own for sure */
    double ram_rss_mib;   /* of that, guest RAM (the template's memory file) */
    double ram_dirty_mib; /* guest RAM pages the guest wrote: private copies */
    /* QEMU's own (rss - ram_rss), by kind of mapping: */
    double code_mib; /* TCG's translated code (the anonymous rwx buffer) */
    double file_mib; /* QEMU's binary, libraries and other files it maps */
    double anon_mib; /* heap, thread arenas and stacks: everything else */
    double own_shared_mib; /* of QEMU's own, pages other processes map too */
};

int bench_qemu_memory(int pid, struct bench_qemu_memory *out);

/* MemAvailable of /proc/meminfo in MiB, or -1. */
long bench_mem_available_mib(void);

/* How busy all CPUs were over the next seconds (0..100), or -1. */
double bench_cpu_busy_percent(int seconds);

#endif
