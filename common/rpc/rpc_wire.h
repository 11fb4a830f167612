/* Internal to airlock_rpc: what the client and the server share on the
 * wire. Not for callers outside common/rpc/. */
#ifndef AIRLOCK_RPC_WIRE_H
#define AIRLOCK_RPC_WIRE_H

#include <grpc/grpc.h>
#include <grpc/support/time.h>
#include <protobuf-c/protobuf-c.h>

/* Largest message either side accepts; a bigger one fails the call with
 * RESOURCE_EXHAUSTED. File contents travel in 64 KiB chunks, so this only
 * bounds listings. */
#define RPC_MAX_MESSAGE_BYTES (8 * 1024 * 1024)
/* Reconnect backoff of client channels (rpc_wire_channel_args). */
#define RPC_RECONNECT_BACKOFF_INITIAL_MS 100
#define RPC_RECONNECT_BACKOFF_MAX_MS 1000

/* Serialized msg in a new byte buffer (caller destroys it). */
grpc_byte_buffer *rpc_wire_pack(const ProtobufCMessage *msg);

/* Parses buf (which stays the caller's); NULL when it is not a valid desc
 * message. */
ProtobufCMessage *rpc_wire_unpack(grpc_byte_buffer *buf, const ProtobufCMessageDescriptor *desc);

/* Channel arguments both sides are created with (message size limit). */
const grpc_channel_args *rpc_wire_channel_args(void);

/* The slice's bytes as a malloc'd NUL-terminated string (NULL on OOM). */
char *rpc_wire_slice_strdup(grpc_slice slice);

/* Absolute deadline timeout_ms from now; infinite when timeout_ms <= 0. */
gpr_timespec rpc_wire_deadline(int timeout_ms);

#endif
