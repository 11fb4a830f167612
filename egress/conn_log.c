#include "conn_log.h"

#include <pthread.h>
#include <stdlib.h>

#include "clock.h"

struct conn_log {
    pthread_mutex_t lock;
    struct conn_entry *ring;
    size_t capacity;
    uint64_t next_seq; /* entry seq lives at ring[(seq - 1) % capacity] */
};

struct conn_log *conn_log_new(size_t capacity)
{
    struct conn_log *log = calloc(1, sizeof(*log));
    if (!log)
        return NULL;
    log->ring = calloc(capacity, sizeof(*log->ring));
    if (!log->ring) {
        free(log);
        return NULL;
    }
    log->capacity = capacity;
    log->next_seq = 1;
    pthread_mutex_init(&log->lock, NULL);
    return log;
}

void conn_log_free(struct conn_log *log)
{
    if (!log)
        return;
    pthread_mutex_destroy(&log->lock);
    free(log->ring);
    free(log);
}

uint64_t conn_log_add(struct conn_log *log, const struct conn_entry *e)
{
    pthread_mutex_lock(&log->lock);
    uint64_t seq = log->next_seq++;
    struct conn_entry *slot = &log->ring[(seq - 1) % log->capacity];
    *slot = *e;
    slot->seq = seq;
    slot->time_unix_ms = clock_realtime_ms();
    pthread_mutex_unlock(&log->lock);
    return seq;
}

void conn_log_finish(struct conn_log *log, uint64_t seq, uint64_t sent, uint64_t received,
                     const char *reason)
{
    pthread_mutex_lock(&log->lock);
    struct conn_entry *slot = &log->ring[(seq - 1) % log->capacity];
    if (slot->seq == seq) {
        slot->bytes_sent = sent;
        slot->bytes_received = received;
        if (reason)
            slot->reason = reason;
    }
    pthread_mutex_unlock(&log->lock);
}

int conn_log_read(struct conn_log *log, uint64_t after_seq, struct conn_entry **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    pthread_mutex_lock(&log->lock);
    uint64_t oldest = log->next_seq > log->capacity ? log->next_seq - log->capacity : 1;
    uint64_t first = after_seq + 1 > oldest ? after_seq + 1 : oldest;
    int rc = 0;
    if (first < log->next_seq) {
        size_t count = (size_t)(log->next_seq - first);
        *out = calloc(count, sizeof(**out));
        if (!*out) {
            rc = -1;
        } else {
            for (uint64_t s = first; s < log->next_seq; s++)
                (*out)[(*n)++] = log->ring[(s - 1) % log->capacity];
        }
    }
    pthread_mutex_unlock(&log->lock);
    return rc;
}
