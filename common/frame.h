/* Length-prefixed GuestFrame codec for the host <-> guest channel.
 *
 * Wire format (protos/guest.proto): a 4-byte big-endian length, then that
 * many bytes of an encoded airlock.guest.v1.GuestFrame. Both ends use the
 * incremental decoder below, so a reader can feed whatever read() returned
 * and pull out complete frames; garbage or oversized lengths are reported
 * as errors instead of allocating or crashing. */
#ifndef AIRLOCK_FRAME_H
#define AIRLOCK_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "guest.pb-c.h"

typedef Airlock__Guest__V1__GuestFrame GuestFrame;

#define AIRLOCK_GUEST_PROTOCOL_VERSION 1u
/* Largest encoded frame either side accepts (header excluded). */
#define AIRLOCK_FRAME_MAX (1u << 20)
/* Largest payload (Output.data, Data.data) a sender puts in one frame. */
#define AIRLOCK_CHUNK_MAX (64u << 10)
/* Per-stream, per-direction flow-control window in payload bytes. */
#define AIRLOCK_STREAM_WINDOW (256u << 10)
#define AIRLOCK_FRAME_HEADER 4u
/* Most entries one DirEntries frame may carry, and most processes in a
 * ProcessList: a 1 MiB frame of empty entries would otherwise unpack into
 * tens of MiB of structures on the receiving side. */
#define AIRLOCK_DIR_BATCH_ENTRIES 1024u
#define AIRLOCK_PROCESS_LIST_MAX 16384u
/* Most ports one ListeningPorts frame carries (guest/listening_ports.c). */
#define AIRLOCK_LISTENING_PORTS_MAX 256u
/* Most events one WatchEvents frame may carry (the same reason). */
#define AIRLOCK_WATCH_BATCH_EVENTS 256u

enum frame_status {
    FRAME_OK = 0,        /* a frame was decoded */
    FRAME_NEED_MORE = 1, /* not enough bytes buffered yet */
    FRAME_TOO_LARGE = -1, /* length prefix above AIRLOCK_FRAME_MAX */
    FRAME_MALFORMED = -2, /* payload is not a valid GuestFrame */
    FRAME_NO_MEMORY = -3,
};

/* buf[off, len) holds the bytes not yet decoded. Decoding advances off
 * instead of moving the rest down after every frame, so a read full of tiny
 * frames costs time linear in its size; feed compacts only once the
 * consumed prefix is at least as long as what is left. */
struct frame_decoder {
    uint8_t *buf;
    size_t off;
    size_t len;
    size_t cap;
};

/* Encodes f with its length prefix into a malloc'd buffer. Returns 0, or -1
 * when the frame would exceed AIRLOCK_FRAME_MAX (errno = EMSGSIZE) or on
 * allocation failure. */
int frame_encode(const GuestFrame *f, uint8_t **out, size_t *out_len);

void frame_decoder_init(struct frame_decoder *d);
void frame_decoder_free(struct frame_decoder *d);
/* Appends bytes. A caller that takes every complete frame after each feed
 * never has more than two maximal frames plus len buffered. */
int frame_decoder_feed(struct frame_decoder *d, const void *data, size_t len);
/* Takes the next complete frame off the buffer. On FRAME_OK *out is owned by
 * the caller (free with frame_free). After FRAME_TOO_LARGE or
 * FRAME_MALFORMED the stream is out of sync: the caller must drop it. */
enum frame_status frame_decoder_next(struct frame_decoder *d, GuestFrame **out);
const char *frame_status_str(enum frame_status s);

void frame_free(GuestFrame *f);

/* Writes one frame to a (possibly non-blocking) fd, waiting with poll()
 * while the fd is full. Returns 0 or -1 with errno set. */
int frame_write_fd(int fd, const GuestFrame *f);

/* Payload bytes a frame carries for flow-control accounting (a
 * WatchEvents frame: its events' encoded size). */
size_t frame_payload_bytes(const GuestFrame *f);

/* True for the kinds of frame the guest may send (answers, output, credit,
 * Hello); false for requests, which only the host sends, and for a frame
 * without a body. */
bool frame_is_from_guest(const GuestFrame *f);

/* True for the guest-sent frames that end a stream (protos/guest.proto). */
bool frame_is_terminal(const GuestFrame *f);

#endif
