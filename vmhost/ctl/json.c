#include "json.h"

#include <inttypes.h>
#include <string.h>

void json_begin(struct json *j, FILE *out)
{
    memset(j, 0, sizeof(*j));
    j->out = out;
}

static void json_write_escaped(FILE *out, const uint8_t *s, size_t len);

/* Comma and key in front of a value. */
static void json_item(struct json *j, const char *key)
{
    if (j->has_items[j->depth])
        fputc(',', j->out);
    j->has_items[j->depth] = true;
    if (key) {
        json_write_escaped(j->out, (const uint8_t *)key, strlen(key));
        fputc(':', j->out);
    }
}

static void json_open(struct json *j, const char *key, char bracket)
{
    json_item(j, key);
    fputc(bracket, j->out);
    if (j->depth + 1 < JSON_MAX_DEPTH)
        j->depth++;
    j->has_items[j->depth] = false;
}

static void json_close(struct json *j, char bracket)
{
    fputc(bracket, j->out);
    if (j->depth > 0)
        j->depth--;
}

void json_object_begin(struct json *j, const char *key) { json_open(j, key, '{'); }
void json_object_end(struct json *j) { json_close(j, '}'); }
void json_array_begin(struct json *j, const char *key) { json_open(j, key, '['); }
void json_array_end(struct json *j) { json_close(j, ']'); }

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when it is not. */
static size_t utf8_sequence_len(const uint8_t *s, size_t avail)
{
    size_t len;
    uint32_t min;
    if (s[0] < 0x80)
        return 1;
    if ((s[0] & 0xe0) == 0xc0)
        len = 2, min = 0x80;
    else if ((s[0] & 0xf0) == 0xe0)
        len = 3, min = 0x800;
    else if ((s[0] & 0xf8) == 0xf0)
        len = 4, min = 0x10000;
    else
        return 0;
    if (len > avail)
        return 0;
    uint32_t cp = s[0] & (0x7f >> len);
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return len;
}

static void json_write_escaped(FILE *out, const uint8_t *s, size_t len)
{
    fputc('"', out);
    for (size_t i = 0; i < len;) {
        uint8_t c = s[i];
        size_t n = utf8_sequence_len(s + i, len - i);
        if (n == 0) {
            fputs("\\ufffd", out);
            i++;
        } else if (n > 1) {
            fwrite(s + i, 1, n, out);
            i += n;
        } else {
            if (c == '"' || c == '\\')
                fprintf(out, "\\%c", c);
            else if (c == '\n')
                fputs("\\n", out);
            else if (c == '\t')
                fputs("\\t", out);
            else if (c < 0x20 || c == 0x7f)
                fprintf(out, "\\u%04x", c);
            else
                fputc(c, out);
            i++;
        }
    }
    fputc('"', out);
}

void json_string(struct json *j, const char *key, const char *s)
{
    json_bytes(j, key, (const uint8_t *)s, strlen(s));
}

void json_bytes(struct json *j, const char *key, const uint8_t *data, size_t len)
{
    json_item(j, key);
    json_write_escaped(j->out, data, len);
}

void json_int(struct json *j, const char *key, int64_t v)
{
    json_item(j, key);
    fprintf(j->out, "%" PRId64, v);
}

void json_bool(struct json *j, const char *key, bool v)
{
    json_item(j, key);
    fputs(v ? "true" : "false", j->out);
}

void json_end(struct json *j)
{
    fputc('\n', j->out);
}
