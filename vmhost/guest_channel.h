/* The host end of a guest's private channel: many concurrent streams (execs,
 * file transfers, health checks) multiplexed over one byte stream with the
 * framing and flow control of protos/guest.proto.
 *
 * A reader thread decodes frames and queues each on its stream; callers use
 * blocking send/recv on their own stream from any thread. The guest may
 * only send AIRLOCK_STREAM_WINDOW payload bytes before this side returns
 * credit, which guest_stream_recv() does as the caller consumes frames;
 * the reader enforces that, and a byte bound on each stream's queue. A
 * guest that sends garbage, goes past a window or a queue's bound, or
 * sends on a stream it was not given, is cut off: the channel dies (every
 * stream then fails with the reason) and the owner hears of it
 * (guest_channel_on_violation). It cannot crash vmhost or grow its memory
 * without bound. */
#ifndef AIRLOCK_GUEST_CHANNEL_H
#define AIRLOCK_GUEST_CHANNEL_H

#include <stdbool.h>
#include <stddef.h>

#include "frame.h"
#include "guest_transport.h"

struct guest_channel;
struct guest_stream;

/* Connects through transport to address and completes the Hello handshake
 * within timeout_ms (the guest may still be booting). */
int guest_channel_connect(const struct guest_transport *transport, const char *address,
                          int timeout_ms, struct guest_channel **out, char *err, size_t errlen);

/* Closes the connection (the owner calls this once): streams in use fail
 * with "channel closed"; the memory goes with the last reference. */
void guest_channel_close(struct guest_channel *ch);

/* Extra references for users that may outlive the owner's close. */
void guest_channel_ref(struct guest_channel *ch);
void guest_channel_release(struct guest_channel *ch);

/* Called once, from the channel's reader thread, when the guest breaks the
 * protocol (docs/guest-protocol.md, "What the host enforces"): the channel
 * is dead by then and reason says what the guest did. */
typedef void (*guest_violation_fn)(void *arg, const char *reason);

/* Sets who hears of a violation; called at once if one already happened.
 * The callback must not close the channel (guest_channel_close joins the
 * thread it runs on). */
void guest_channel_on_violation(struct guest_channel *ch, guest_violation_fn fn, void *arg);

/* False once the guest side went away or misbehaved; reason says why. */
bool guest_channel_alive(struct guest_channel *ch, char *reason, size_t reasonlen);

const char *guest_channel_guestd_version(const struct guest_channel *ch);

struct guest_stream *guest_stream_open(struct guest_channel *ch);

/* Sends f on the stream (its stream_id is set here). Data frames wait for
 * flow-control credit up to timeout_ms. Returns 0, or -1 with errno:
 * EPIPE (channel closed), ETIMEDOUT (no credit), EMSGSIZE. */
int guest_stream_send(struct guest_stream *s, GuestFrame *f, int timeout_ms);

enum guest_recv_status {
    GUEST_RECV_OK = 0,
    GUEST_RECV_TIMEOUT = 1,
    GUEST_RECV_CLOSED = 2, /* channel gone, or the stream already ended */
};

/* Next frame for this stream (caller frees with frame_free). Returns credit
 * to the guest for consumed payload. timeout_ms < 0 waits forever. */
enum guest_recv_status guest_stream_recv(struct guest_stream *s, int timeout_ms, GuestFrame **out);

/* True once the guest sent the stream's terminal frame. */
bool guest_stream_finished(struct guest_stream *s);

/* Ends the stream; if the guest has not finished it, sends Cancel. */
void guest_stream_close(struct guest_stream *s);

/* Sends len bytes as Data frames of at most AIRLOCK_CHUNK_MAX, the last with
 * eof when eof is set (len 0 + eof sends just the end marker). */
int guest_stream_send_bytes(struct guest_stream *s, const uint8_t *data, size_t len, bool eof,
                            int timeout_ms);

/* One request, one terminal answer: open, send, receive, close. */
enum guest_recv_status guest_call(struct guest_channel *ch, GuestFrame *request, int timeout_ms,
                                  GuestFrame **answer);

#endif
