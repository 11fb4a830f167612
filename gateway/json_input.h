/* Request bodies: parse, refuse unknown fields and wrong types, and read
 * typed values; each failure is -1 with e, invalid, naming the field. */
#ifndef AIRLOCK_GATEWAY_JSON_INPUT_H
#define AIRLOCK_GATEWAY_JSON_INPUT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "airlock_error.h"

enum json_field_kind {
    JF_STRING,
    JF_UINT,          /* a non-negative integer */
    JF_STRING_ARRAY,  /* array of strings */
    JF_STRING_MAP,    /* object whose values are strings */
    JF_BOOL,
    JF_OBJECT,        /* any object; its fields are the caller's to check */
    JF_ARRAY,         /* any array; its elements are the caller's to check */
};

struct json_field {
    const char *name;
    enum json_field_kind kind;
};

/* Parses body (an empty body is {}) into a JSON object, its fields
 * unchecked. 0 with *out, or -1 with e. */
int json_input_object(const char *body, size_t len, json_t **out, struct airlock_error *e);

/* Parses body (an empty body is {}) into a JSON object whose fields are all
 * listed and of their kind. 0 with *out, or -1 with e naming the
 * problem. */
int json_input_parse(const char *body, size_t len, const struct json_field *fields, size_t n_fields,
                     json_t **out, struct airlock_error *e);

/* Whether the fields of obj are all listed and of their kind; -1 with e
 * naming the first that is not. */
int json_input_check(json_t *obj, const struct json_field *fields, size_t n_fields,
                     struct airlock_error *e);

/* Decodes base64 text (with padding) into a malloc'd buffer; -1 with e
 * when it is not base64. */
int json_input_base64(const char *text, uint8_t **out, size_t *len, struct airlock_error *e);

/* A validated field's value, or the fallback when absent. */
const char *json_input_string(json_t *obj, const char *name, const char *fallback);
/* uint field; -1 with e when above max. */
int json_input_uint(json_t *obj, const char *name, uint64_t max, uint64_t fallback, uint64_t *out,
                    struct airlock_error *e);

#endif
