/* One handler per request body of protos/guest.proto. Each answers on
 * stream_id: at once (Result, FileInfo, Health, ...) or by opening a
 * stream that answers later. The frame stays owned by the caller. */
#ifndef GUESTD_HANDLERS_H
#define GUESTD_HANDLERS_H

#include <stdint.h>

#include "frame.h"

struct guestd;

/* exec.c */
void exec_request(struct guestd *g, uint32_t id, const Airlock__Guest__V1__ExecRequest *r);
/* process_table.c */
void process_list_request(struct guestd *g, uint32_t id);
void process_stdin_request(struct guestd *g, uint32_t id, const Airlock__Guest__V1__ProcessStdin *r);
void process_signal_request(struct guestd *g, uint32_t id, const Airlock__Guest__V1__SignalRequest *r);
void process_resize_request(struct guestd *g, uint32_t id, const Airlock__Guest__V1__Resize *r);
/* attach.c */
void attach_request(struct guestd *g, uint32_t id, const Airlock__Guest__V1__AttachRequest *r);
/* file_read.c, file_write.c, dir_list.c */
void file_read_request(struct guestd *g, uint32_t id, const Airlock__Guest__V1__FileReadRequest *r);
void file_write_request(struct guestd *g, uint32_t id, const Airlock__Guest__V1__FileWriteRequest *r);
void dir_list_request(struct guestd *g, uint32_t id, const Airlock__Guest__V1__ListRequest *r);
/* file_ops.c */
void stat_request(struct guestd *g, uint32_t id, const Airlock__Guest__V1__StatRequest *r);
void mkdir_request(struct guestd *g, uint32_t id, const Airlock__Guest__V1__MkdirRequest *r);
void remove_request(struct guestd *g, uint32_t id, const Airlock__Guest__V1__RemoveRequest *r);
void rename_request(struct guestd *g, uint32_t id, const Airlock__Guest__V1__RenameRequest *r);
void chmod_request(struct guestd *g, uint32_t id, const Airlock__Guest__V1__ChmodRequest *r);
/* system.c */
void health_request(struct guestd *g, uint32_t id);
void set_clock_request(struct guestd *g, uint32_t id, const Airlock__Guest__V1__SetClock *r);
void add_entropy_request(struct guestd *g, uint32_t id, const Airlock__Guest__V1__AddEntropy *r);
void set_hostname_request(struct guestd *g, uint32_t id, const Airlock__Guest__V1__SetHostname *r);
/* /dev/urandom for RNDADDENTROPY, opened once (at guestd's start, so a
 * template snapshot already holds it: under TCG the path walk of an open
 * after every restore is hundreds of cold translations); -1 with errno. */
int entropy_device_open(void);
void session_init_request(struct guestd *g, uint32_t id, const Airlock__Guest__V1__SessionInit *r);

#endif
