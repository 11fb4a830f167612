#include "rpc_wire.h"

#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/slice.h>
#include <stdlib.h>
#include <string.h>

grpc_byte_buffer *rpc_wire_pack(const ProtobufCMessage *msg)
{
    grpc_slice slice = grpc_slice_malloc(protobuf_c_message_get_packed_size(msg));
    protobuf_c_message_pack(msg, GRPC_SLICE_START_PTR(slice));
    grpc_byte_buffer *buf = grpc_raw_byte_buffer_create(&slice, 1);
    grpc_slice_unref(slice);
    return buf;
}

ProtobufCMessage *rpc_wire_unpack(grpc_byte_buffer *buf, const ProtobufCMessageDescriptor *desc)
{
    grpc_byte_buffer_reader reader;
    if (!grpc_byte_buffer_reader_init(&reader, buf))
        return NULL;
    grpc_slice slice = grpc_byte_buffer_reader_readall(&reader);
    grpc_byte_buffer_reader_destroy(&reader);
    ProtobufCMessage *msg =
        protobuf_c_message_unpack(desc, NULL, GRPC_SLICE_LENGTH(slice), GRPC_SLICE_START_PTR(slice));
    grpc_slice_unref(slice);
    return msg;
}

const grpc_channel_args *rpc_wire_channel_args(void)
{
    /* gRPC's default reconnect backoff grows to 120 s: a client whose
     * peer restarted (scheduler, vmhost) would then wait up to two minutes
     * after the peer is back. Our peers are a hop away; retry within 1 s. */
    static grpc_arg args[] = {
        {.type = GRPC_ARG_INTEGER,
         .key = GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH,
         .value.integer = RPC_MAX_MESSAGE_BYTES},
        {.type = GRPC_ARG_INTEGER,
         .key = GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS,
         .value.integer = RPC_RECONNECT_BACKOFF_INITIAL_MS},
        {.type = GRPC_ARG_INTEGER,
         .key = GRPC_ARG_MAX_RECONNECT_BACKOFF_MS,
         .value.integer = RPC_RECONNECT_BACKOFF_MAX_MS},
    };
    static const grpc_channel_args channel_args = {.num_args = sizeof(args) / sizeof(*args),
                                                   .args = args};
    return &channel_args;
}

char *rpc_wire_slice_strdup(grpc_slice slice)
{
    size_t len = GRPC_SLICE_LENGTH(slice);
    char *s = malloc(len + 1);
    if (s) {
        memcpy(s, GRPC_SLICE_START_PTR(slice), len);
        s[len] = '\0';
    }
    return s;
}

gpr_timespec rpc_wire_deadline(int timeout_ms)
{
    if (timeout_ms <= 0)
        return gpr_inf_future(GPR_CLOCK_REALTIME);
    return gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC), gpr_time_from_millis(timeout_ms, GPR_TIMESPAN));
}
