/* The jail's own steps without QEMU, for section "jail" (bench_jail_setup.c). */
#ifndef AIRLOCK_BENCH_JAIL_SETUP_H
#define AIRLOCK_BENCH_JAIL_SETUP_H

#include "bench.h"

/* runs x (jail_open, spawn → exit, jail_close of /usr/bin/true, and the
 * same program unjailed with and without the preload) as rows of r; -1
 * when one did not run. */
int bench_jail_setup(struct bench_report *r, int runs);

#endif
