/* Connections held open through egress while bench_egress.c measures
 * beside them: from netlab's guest namespace, each having sent a request
 * naming allowed.test, to a sink in the inet namespace that reads and
 * keeps them. Shows what a held connection costs egress (no thread of
 * its own) and what it costs the sandbox's next connection. */
#ifndef AIRLOCK_BENCH_EGRESS_HELD_H
#define AIRLOCK_BENCH_EGRESS_HELD_H

struct held_conns;

/* Opens n and waits until the sink holds every one (egress dialled and
 * spliced them). NULL after printing why. */
struct held_conns *held_conns_open(int n);
void held_conns_close(struct held_conns *h);

/* This process's threads now (egress runs in it). */
int process_threads(void);

#endif
