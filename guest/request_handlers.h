/* One handler per request body of protos/guest.proto (requests.c's table
 * of them). Each reads its body from frame and answers on stream id: at
 * once (Result, FileInfo, Health, ...) or by opening a stream that answers
 * later. The frame stays owned by the caller. */
#ifndef GUESTD_REQUEST_HANDLERS_H
#define GUESTD_REQUEST_HANDLERS_H

#include <stdint.h>

#include "frame.h"

struct guestd;

typedef void (*guestd_request_fn)(struct guestd *g, uint32_t id, const GuestFrame *frame);

/* exec.c */
void exec_request(struct guestd *g, uint32_t id, const GuestFrame *frame);
/* process_table.c */
void process_list_request(struct guestd *g, uint32_t id, const GuestFrame *frame);
void process_stdin_request(struct guestd *g, uint32_t id, const GuestFrame *frame);
void process_signal_request(struct guestd *g, uint32_t id, const GuestFrame *frame);
void process_resize_request(struct guestd *g, uint32_t id, const GuestFrame *frame);
/* attach.c */
void attach_request(struct guestd *g, uint32_t id, const GuestFrame *frame);
/* file_read.c, file_write.c, dir_list.c */
void file_read_request(struct guestd *g, uint32_t id, const GuestFrame *frame);
void file_write_request(struct guestd *g, uint32_t id, const GuestFrame *frame);
void dir_list_request(struct guestd *g, uint32_t id, const GuestFrame *frame);
/* file_ops.c */
void stat_request(struct guestd *g, uint32_t id, const GuestFrame *frame);
void mkdir_request(struct guestd *g, uint32_t id, const GuestFrame *frame);
void remove_request(struct guestd *g, uint32_t id, const GuestFrame *frame);
void rename_request(struct guestd *g, uint32_t id, const GuestFrame *frame);
void chmod_request(struct guestd *g, uint32_t id, const GuestFrame *frame);
/* metrics.c */
void metrics_request(struct guestd *g, uint32_t id, const GuestFrame *frame);
/* listening_ports.c */
void list_ports_request(struct guestd *g, uint32_t id, const GuestFrame *frame);
/* watch.c */
void watch_request(struct guestd *g, uint32_t id, const GuestFrame *frame);
/* system.c */
void health_request(struct guestd *g, uint32_t id, const GuestFrame *frame);
void set_clock_request(struct guestd *g, uint32_t id, const GuestFrame *frame);
void add_entropy_request(struct guestd *g, uint32_t id, const GuestFrame *frame);
void set_hostname_request(struct guestd *g, uint32_t id, const GuestFrame *frame);
/* /dev/urandom for RNDADDENTROPY, opened once (at guestd's start, so a
 * template snapshot already holds it: under TCG the path walk of an open
 * after every restore is hundreds of cold translations); -1 with errno. */
int entropy_device_open(void);
void session_init_request(struct guestd *g, uint32_t id, const GuestFrame *frame);
/* volume.c */
void volume_request(struct guestd *g, uint32_t id, const GuestFrame *frame);

#endif
