/* egress's part of airlock-bench: what going through egress costs, each
 * figure beside the same operation without egress and their ratio. Runs
 * on netlab's namespaces (tests/network/support/netlab.h): a client in the
 * guest namespace behind the real sandbox namespace and an in-process
 * egress, against the same servers reached directly from the uplink
 * namespace. Nothing leaves those namespaces.
 *
 *   connect + GET    TCP connect, a request naming allowed.test, the whole
 *                    answer (egress: redirect, sniff, policy, dial, splice);
 *                    again beside 250 connections of the same sandbox held
 *                    open through egress, and the threads those add
 *   DNS              an A query for an allowed name (egress asks upstream)
 *                    and for a denied one (egress answers alone)
 *   throughput       256 MiB from a server to the client, MB/s
 *   HTTPS throughput 256 MiB over HTTPS from a host with a credential
 *                    binding: egress terminates TLS with the sandbox CA,
 *                    asks vault (a real one, bench_egress_tls.c) for the
 *                    injection and speaks TLS upstream; direct: the same
 *                    server, one TLS session
 *   inspected HTTPS  the same 256 MiB for a project without secrets under
 *                    inspect_tls (terminated both ways, nothing injected)
 *                    beside the same policy without it (the guest's TLS
 *                    spliced) */
#ifndef AIRLOCK_BENCH_EGRESS_H
#define AIRLOCK_BENCH_EGRESS_H

#include <stddef.h>

#include "bench_stats.h"

#define BENCH_EGRESS_MAX_SERIES 20

/* Measures; out gets up to BENCH_EGRESS_MAX_SERIES series (static
 * storage), ratios included. -1 after printing why when a measured
 * operation failed. Needs root (namespaces). */
int bench_egress(struct bench_series **out, size_t *n);

#endif
