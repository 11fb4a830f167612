/* A minimal streaming JSON writer for --json output: compact, one document
 * per line. Keys are NULL for array elements and the top-level value. */
#ifndef AIRLOCK_VMHOSTCTL_JSON_H
#define AIRLOCK_VMHOSTCTL_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 16

struct json {
    FILE *out;
    int depth;
    bool has_items[JSON_MAX_DEPTH]; /* a comma goes before the next item */
};

void json_begin(struct json *j, FILE *out);
void json_object_begin(struct json *j, const char *key);
void json_object_end(struct json *j);
void json_array_begin(struct json *j, const char *key);
void json_array_end(struct json *j);
void json_string(struct json *j, const char *key, const char *s);
/* Bytes such as Linux paths: valid UTF-8 is kept, other bytes become
 * U+FFFD (the output must be UTF-8). */
void json_bytes(struct json *j, const char *key, const uint8_t *data, size_t len);
void json_int(struct json *j, const char *key, int64_t v);
void json_bool(struct json *j, const char *key, bool v);
/* Ends the document with a newline. */
void json_end(struct json *j);

#endif
