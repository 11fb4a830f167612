#include "names.h"

#include <string.h>

static bool name_char_ok(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

int name_normalize(const char *in, size_t len, char *out)
{
    if (len > 0 && in[len - 1] == '.')
        len--;
    if (len == 0 || len > NAME_MAX_LEN)
        return -1;
    size_t label = 0;
    for (size_t i = 0; i < len; i++) {
        char c = in[i];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if (c == '.') {
            if (label == 0)
                return -1;
            label = 0;
        } else if (name_char_ok(c)) {
            if (++label > 63)
                return -1;
        } else {
            return -1;
        }
        out[i] = c;
    }
    if (label == 0)
        return -1;
    out[len] = '\0';
    return 0;
}

bool name_matches(const char *pattern, const char *name)
{
    if (strncmp(pattern, "*.", 2) != 0)
        return strcmp(pattern, name) == 0;
    const char *suffix = pattern + 1; /* ".example.com" */
    size_t sl = strlen(suffix), nl = strlen(name);
    return nl > sl && strcmp(name + nl - sl, suffix) == 0;
}

int name_pattern_normalize(const char *in, char *out)
{
    size_t skip = strncmp(in, "*.", 2) == 0 ? 2 : 0;
    if (skip)
        memcpy(out, "*.", 2);
    if (strlen(in + skip) > NAME_MAX_LEN - skip)
        return -1;
    return name_normalize(in + skip, strlen(in + skip), out + skip);
}
