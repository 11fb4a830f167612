/* airlock-bench: performance figures of real services on this machine,
 * each beside a reference measured in the same run, printed as a table
 * and written as JSON (bench/results/). Never a pass/fail test; the exit
 * status only says whether every measured operation worked.
 *
 * Sections (all by default; choose with --only a,b or
 * AIRLOCK_BENCH_SECTIONS=a,b):
 *   floor         the host without VMs: spawn, namespaces, QEMU's own start
 *   create        restore without pool at concurrency 1 and 8, with
 *                 vmhost's stage breakdown, and cold boot (reference)
 *   pool          creates from a warm pool (id by node and by caller),
 *                 concurrency 1 and 8
 *   pool_memory   an idle warm pool of 4: each pooled QEMU's RSS, PSS and
 *                 private dirty, beside vmhost's pool figures
 *   lifecycle     pause, resume, suspend, resume from suspended, checkpoint
 *                 disk/full, fork; concurrency 1 and 8
 *   exec          exec round trip (idle, and beside a sandbox burning 2
 *                 vCPUs), 64 MiB file write/read
 *   idle          100 idle sandboxes: all answer, memory per sandbox
 *   controlplane  the whole stack: POST /v1/sandboxes at concurrency 1, 8,
 *                 32, exec and events through the gateway, vmhost beside it
 *   egress        egress against direct (bench_egress.h)
 *   jail          the QEMU jail's cost: a jailed vmhost beside one with
 *                 --no-jail, interleaved: create from the pool and from
 *                 the snapshot, fork, idle memory
 *   store         the shared snapshot store: suspend to it on one node,
 *                 resume on another, bytes stored; a node without a store
 *                 beside it
 *   volumes       creates without a volume, with a new one and with an
 *                 existing one (docs/volumes.md), and clones of a 1 GiB
 *                 and a 16 GiB volume's snapshot
 * Counts can be changed through the environment (AIRLOCK_BENCH_CREATES,
 * _ROUNDS, _BOOTS, _IDLE, _CP_CREATES, _JAIL_ROUNDS, ...; see each section). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bench_egress.h"
#include "fsutil.h"

static int section_egress(struct bench_ctx *ctx)
{
    ctx->report->section = "egress against direct (test namespaces)";
    struct bench_series *rows[BENCH_EGRESS_MAX_SERIES];
    size_t n = 0;
    int rc = bench_egress(rows, &n);
    for (size_t i = 0; i < n; i++)
        bench_report_copy(ctx->report, rows[i]);
    return rc;
}

static const struct {
    const char *name;
    int (*run)(struct bench_ctx *ctx);
} sections[] = {
    { "floor", bench_section_floor },
    { "create", bench_section_create },
    { "pool", bench_section_pool },
    { "pool_memory", bench_section_pool_memory },
    { "lifecycle", bench_section_lifecycle },
    { "exec", bench_section_exec },
    { "idle", bench_section_idle },
    { "controlplane", bench_section_controlplane },
    { "egress", section_egress },
    { "jail", bench_section_jail },
    { "store", bench_section_store },
    { "ports", bench_section_ports },
    { "e2b", bench_section_e2b },
    { "volumes", bench_section_volumes },
    { "demand", bench_section_demand },
};
#define N_SECTIONS (sizeof(sections) / sizeof(*sections))

/* Marks the sections named in the comma-separated list; -1 on an unknown
 * name. */
static int choose(const char *list, bool chosen[N_SECTIONS])
{
    char buf[512];
    snprintf(buf, sizeof(buf), "%s", list);
    for (char *save = NULL, *name = strtok_r(buf, ",", &save); name;
         name = strtok_r(NULL, ",", &save)) {
        size_t i = 0;
        while (i < N_SECTIONS && strcmp(sections[i].name, name) != 0)
            i++;
        if (i == N_SECTIONS) {
            fprintf(stderr, "airlock-bench: unknown section \"%s\" (sections:", name);
            for (size_t k = 0; k < N_SECTIONS; k++)
                fprintf(stderr, " %s", sections[k].name);
            fprintf(stderr, ")\n");
            return -1;
        }
        chosen[i] = true;
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *out_dir = "bench/results";
    const char *only = getenv("AIRLOCK_BENCH_SECTIONS");
    static const struct option opts[] = { { "out", required_argument, NULL, 'o' },
                                          { "only", required_argument, NULL, 's' },
                                          { NULL, 0, NULL, 0 } };
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == 'o')
            out_dir = optarg;
        else if (c == 's')
            only = optarg;
        else
            return 2;
    }
    bool chosen[N_SECTIONS] = { 0 };
    if (only && *only) {
        if (choose(only, chosen) < 0)
            return 2;
    } else {
        for (size_t i = 0; i < N_SECTIONS; i++)
            chosen[i] = true;
    }

    struct bench_report report = { 0 };
    struct bench_ctx ctx = { .report = &report };
    int rc = 0;
    for (size_t i = 0; i < N_SECTIONS; i++) {
        if (!chosen[i])
            continue;
        double t0 = bench_now_ms();
        fprintf(stderr, "bench: section %s\n", sections[i].name);
        if (sections[i].run(&ctx) < 0) {
            fprintf(stderr, "bench: a measured operation of section %s failed\n",
                    sections[i].name);
            rc = 1;
        }
        fprintf(stderr, "bench: section %s took %.0f s\n", sections[i].name,
                (bench_now_ms() - t0) / 1e3);
    }
    if (!report.accel[0])
        snprintf(report.accel, sizeof(report.accel), "none measured");
    bench_report_print(&report, stdout);
    char err[256];
    if (fs_mkdir_p(out_dir, 0755, err, sizeof(err)) < 0 ||
        bench_report_write_json(&report, out_dir, err, sizeof(err)) < 0) {
        fprintf(stderr, "bench: %s\n", err);
        rc = 1;
    }
    bench_report_free(&report);
    return rc;
}
