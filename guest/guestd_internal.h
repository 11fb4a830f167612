/* The daemon state shared by the request handlers. */
#ifndef GUESTD_INTERNAL_H
#define GUESTD_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "channel.h"
#include "frame.h"
#include "list.h"
#include "loop.h"
#include "reaper.h"
#include "stream.h"

struct process_table;

struct guestd {
    struct loop *loop;
    struct reaper *reaper;
    struct channel *channel;
    struct process_table *processes;
    struct list_node streams;
    size_t nstreams;
    int64_t started_ms; /* monotonic */
    int64_t last_activity_unix_ms;
    bool configure_network; /* guestd_options */
    bool network_configured; /* at boot; else retried at every Hello */
};

int64_t unix_now_ms(void);

/* Frames to the host (dropped while no host is connected). */
void guestd_send(struct guestd *g, const GuestFrame *f);
void guestd_send_result(struct guestd *g, uint32_t stream_id, int err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void guestd_send_window(struct guestd *g, uint32_t stream_id, size_t bytes);
/* Sends payload: Output{fd,data} when fd > 0, else Data{data,eof}. */
void guestd_send_output(struct guestd *g, uint32_t stream_id, int fd, const void *data,
                        size_t len);
void guestd_send_data(struct guestd *g, uint32_t stream_id, const void *data, size_t len,
                      bool eof);

/* Exec, process and file activity, for the host's idle detection. */
void guestd_touch(struct guestd *g);

void guestd_stream_add(struct guestd *g, struct stream *s, uint32_t id,
                       const struct stream_ops *ops);
/* Unlinks and destroys s; call after its terminal frame. */
void guestd_stream_end(struct stream *s);

#endif
