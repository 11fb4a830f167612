/* Storage for the gRPC API's answers while they are built and sent: every
 * string, array and sub-message of an answer comes from one arena, freed
 * at once after the send. (protobuf-c's free_unpacked only frees what it
 * unpacked itself.) */
#ifndef AIRLOCK_GATEWAY_GRPC_ARENA_H
#define AIRLOCK_GATEWAY_GRPC_ARENA_H

#include <stdbool.h>
#include <stddef.h>

struct grpc_arena_block;

struct grpc_arena {
    struct grpc_arena_block *blocks;
    bool failed;             /* some allocation failed: answer RESOURCE_EXHAUSTED */
};

/* size zeroed bytes, or NULL (and failed set) when out of memory. */
void *grpc_arena_alloc(struct grpc_arena *a, size_t size);
/* A copy of n bytes of s, NUL-terminated; "" when out of memory. */
char *grpc_arena_strndup(struct grpc_arena *a, const char *s, size_t n);
char *grpc_arena_strdup(struct grpc_arena *a, const char *s);
void grpc_arena_free(struct grpc_arena *a);

#endif
