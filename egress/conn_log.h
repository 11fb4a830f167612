/* A sandbox's connection log: the newest entries in a ring, each with a
 * sequence number so readers can page with "after seq". Thread-safe. */
#ifndef AIRLOCK_EGRESS_CONN_LOG_H
#define AIRLOCK_EGRESS_CONN_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "names.h"

struct conn_entry {
    uint64_t seq;
    int64_t time_unix_ms;
    const char *protocol;        /* "tcp", "dns"; static */
    uint32_t addr;               /* 0 when none */
    uint16_t port;
    char name[NAME_MAX_LEN + 1]; /* "" when none */
    bool allowed;
    const char *reason;          /* static */
    uint64_t bytes_sent;
    uint64_t bytes_received;
};

struct conn_log;

struct conn_log *conn_log_new(size_t capacity);
void conn_log_free(struct conn_log *log);

/* Appends e (seq and time are assigned) and returns its seq. */
uint64_t conn_log_add(struct conn_log *log, const struct conn_entry *e);

/* Final byte counts of a connection, and a reason that replaces the
 * decision's one when the connection failed afterwards (NULL keeps it).
 * An entry that has left the ring is not updated. */
void conn_log_finish(struct conn_log *log, uint64_t seq, uint64_t sent, uint64_t received,
                     const char *reason);

/* Copies of the entries with seq > after_seq, oldest first (malloc'd
 * array; NULL with *n = 0 when none). -1 when out of memory. */
int conn_log_read(struct conn_log *log, uint64_t after_seq, struct conn_entry **out, size_t *n);

#endif
