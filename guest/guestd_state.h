/* The daemon's state, shared by every part of it: the loop, the reaper,
 * the channel, the background processes and the open streams. Only data:
 * guestd.c, which creates it, stands above every file that reads it. */
#ifndef GUESTD_STATE_H
#define GUESTD_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "list.h"

struct channel;
struct loop;
struct process_table;
struct reaper;

struct guestd {
    struct loop *loop;
    struct reaper *reaper;
    struct channel *channel;
    struct process_table *processes;
    struct list_node streams; /* open streams (stream.h) */
    size_t nstreams;
    unsigned nwatches; /* directory watches open (watch.c), within its cap */
    int64_t started_ms; /* monotonic */
    int64_t last_activity_unix_ms;
    /* /proc/stat's CPU totals at the last MetricsRequest (metrics.c). */
    unsigned long long cpu_busy_ticks, cpu_total_ticks;
    bool configure_network; /* guestd_options */
    bool network_configured; /* at boot; else retried at every Hello */
};

#endif
