#include "grpc_arena.h"

#include <stdlib.h>
#include <string.h>

struct grpc_arena_block {
    struct grpc_arena_block *next;
    max_align_t data[];
};

void *grpc_arena_alloc(struct grpc_arena *a, size_t size)
{
    struct grpc_arena_block *b = calloc(1, sizeof(*b) + size);
    if (!b) {
        a->failed = true;
        return NULL;
    }
    b->next = a->blocks;
    a->blocks = b;
    return b->data;
}

char *grpc_arena_strndup(struct grpc_arena *a, const char *s, size_t n)
{
    char *copy = grpc_arena_alloc(a, n + 1);
    if (!copy)
        return "";
    memcpy(copy, s, n);
    return copy;
}

char *grpc_arena_strdup(struct grpc_arena *a, const char *s)
{
    return grpc_arena_strndup(a, s, strlen(s));
}

void grpc_arena_free(struct grpc_arena *a)
{
    while (a->blocks) {
        struct grpc_arena_block *next = a->blocks->next;
        free(a->blocks);
        a->blocks = next;
    }
    a->failed = false;
}
