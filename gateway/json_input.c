#include "json_input.h"

#include <limits.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *kind_name(enum json_field_kind k)
{
    switch (k) {
    case JF_STRING: return "a string";
    case JF_UINT: return "a non-negative integer";
    case JF_STRING_ARRAY: return "an array of strings";
    case JF_STRING_MAP: return "an object of strings";
    case JF_BOOL: return "true or false";
    case JF_OBJECT: return "an object";
    case JF_ARRAY: return "an array";
    }
    return "?";
}

static bool value_fits(json_t *v, enum json_field_kind k)
{
    switch (k) {
    case JF_STRING: return json_is_string(v);
    case JF_UINT: return json_is_integer(v) && json_integer_value(v) >= 0;
    case JF_BOOL: return json_is_boolean(v);
    case JF_OBJECT: return json_is_object(v);
    case JF_ARRAY: return json_is_array(v);
    case JF_STRING_ARRAY: {
        if (!json_is_array(v))
            return false;
        size_t i;
        json_t *e;
        json_array_foreach(v, i, e) if (!json_is_string(e)) return false;
        return true;
    }
    case JF_STRING_MAP: {
        if (!json_is_object(v))
            return false;
        const char *key;
        json_t *e;
        json_object_foreach(v, key, e) if (!json_is_string(e)) return false;
        return true;
    }
    }
    return false;
}

int json_input_object(const char *body, size_t len, json_t **out, struct airlock_error *e)
{
    *out = NULL;
    json_t *obj;
    if (len == 0) {
        obj = json_object();
    } else {
        json_error_t jerr;
        obj = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);
        if (!obj)
            return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                     "malformed JSON at line %d column %d: %s", jerr.line,
                                     jerr.column, jerr.text);
    }
    if (!json_is_object(obj)) {
        json_decref(obj);
        return airlock_error_set(e, AIRLOCK_ERR_INVALID, "the request body must be a JSON object");
    }
    *out = obj;
    return 0;
}

int json_input_check(json_t *obj, const struct json_field *fields, size_t n_fields,
                     struct airlock_error *e)
{
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v)
    {
        const struct json_field *f = NULL;
        for (size_t i = 0; i < n_fields && !f; i++)
            if (strcmp(fields[i].name, key) == 0)
                f = &fields[i];
        if (!f)
            return airlock_error_set(e, AIRLOCK_ERR_INVALID, "unknown field \"%s\"", key);
        if (!value_fits(v, f->kind))
            return airlock_error_set(e, AIRLOCK_ERR_INVALID, "%s: must be %s", f->name,
                                     kind_name(f->kind));
    }
    return 0;
}

int json_input_parse(const char *body, size_t len, const struct json_field *fields, size_t n_fields,
                     json_t **out, struct airlock_error *e)
{
    json_t *obj;
    *out = NULL;
    if (json_input_object(body, len, &obj, e) < 0)
        return -1;
    if (json_input_check(obj, fields, n_fields, e) < 0) {
        json_decref(obj);
        return -1;
    }
    *out = obj;
    return 0;
}

const char *json_input_string(json_t *obj, const char *name, const char *fallback)
{
    json_t *v = json_object_get(obj, name);
    return v ? json_string_value(v) : fallback;
}

int json_input_uint(json_t *obj, const char *name, uint64_t max, uint64_t fallback, uint64_t *out,
                    struct airlock_error *e)
{
    json_t *v = json_object_get(obj, name);
    if (!v) {
        *out = fallback;
        return 0;
    }
    json_int_t n = json_integer_value(v);
    if ((uint64_t)n > max)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID, "%s: %lld is more than %llu", name,
                                 (long long)n, (unsigned long long)max);
    *out = (uint64_t)n;
    return 0;
}

int json_input_base64(const char *text, uint8_t **out, size_t *len, struct airlock_error *e)
{
    size_t n = strlen(text);
    *out = NULL;
    *len = 0;
    if (n % 4 != 0 || n > INT_MAX)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                 "not base64 (its length is not a multiple of 4)");
    uint8_t *buf = malloc(n / 4 * 3 + 1);
    int got = buf ? EVP_DecodeBlock(buf, (const unsigned char *)text, (int)n) : -1;
    if (got < 0) {
        /* Invalid either way, as the REST API has always answered it. */
        airlock_error_set(e, AIRLOCK_ERR_INVALID, "%s", buf ? "not base64" : "out of memory");
        free(buf);
        return -1;
    }
    /* EVP_DecodeBlock counts the padding as data bytes. */
    got -= (n >= 1 && text[n - 1] == '=') + (n >= 2 && text[n - 2] == '=');
    *out = buf;
    *len = (size_t)got;
    return 0;
}
