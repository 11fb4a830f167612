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

int json_input_object(const char *body, size_t len, json_t **out, char *err, size_t errlen)
{
    *out = NULL;
    json_t *obj;
    if (len == 0) {
        obj = json_object();
    } else {
        json_error_t jerr;
        obj = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);
        if (!obj) {
            snprintf(err, errlen, "malformed JSON at line %d column %d: %s", jerr.line,
                     jerr.column, jerr.text);
            return -1;
        }
    }
    if (!json_is_object(obj)) {
        snprintf(err, errlen, "the request body must be a JSON object");
        json_decref(obj);
        return -1;
    }
    *out = obj;
    return 0;
}

int json_input_check(json_t *obj, const struct json_field *fields, size_t n_fields, char *err,
                     size_t errlen)
{
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v)
    {
        const struct json_field *f = NULL;
        for (size_t i = 0; i < n_fields && !f; i++)
            if (strcmp(fields[i].name, key) == 0)
                f = &fields[i];
        if (!f) {
            snprintf(err, errlen, "unknown field \"%.100s\"", key);
            return -1;
        }
        if (!value_fits(v, f->kind)) {
            snprintf(err, errlen, "%s: must be %s", f->name, kind_name(f->kind));
            return -1;
        }
    }
    return 0;
}

int json_input_parse(const char *body, size_t len, const struct json_field *fields,
                     size_t n_fields, json_t **out, char *err, size_t errlen)
{
    json_t *obj;
    *out = NULL;
    if (json_input_object(body, len, &obj, err, errlen) < 0)
        return -1;
    if (json_input_check(obj, fields, n_fields, err, errlen) < 0) {
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
                    char *err, size_t errlen)
{
    json_t *v = json_object_get(obj, name);
    if (!v) {
        *out = fallback;
        return 0;
    }
    json_int_t n = json_integer_value(v);
    if ((uint64_t)n > max) {
        snprintf(err, errlen, "%s: %lld is more than %llu", name, (long long)n,
                 (unsigned long long)max);
        return -1;
    }
    *out = (uint64_t)n;
    return 0;
}

int json_input_base64(const char *text, uint8_t **out, size_t *len, char *err, size_t errlen)
{
    size_t n = strlen(text);
    *out = NULL;
    *len = 0;
    if (n % 4 != 0 || n > INT_MAX) {
        snprintf(err, errlen, "not base64 (its length is not a multiple of 4)");
        return -1;
    }
    uint8_t *buf = malloc(n / 4 * 3 + 1);
    int got = buf ? EVP_DecodeBlock(buf, (const unsigned char *)text, (int)n) : -1;
    if (got < 0) {
        snprintf(err, errlen, "%s", buf ? "not base64" : "out of memory");
        free(buf);
        return -1;
    }
    /* EVP_DecodeBlock counts the padding as data bytes. */
    got -= (n >= 1 && text[n - 1] == '=') + (n >= 2 && text[n - 2] == '=');
    *out = buf;
    *len = (size_t)got;
    return 0;
}
