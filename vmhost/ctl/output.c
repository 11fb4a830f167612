#include "output.h"

#include <ctype.h>
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void ctl_format_time(int64_t unix_ms, char *buf, size_t len)
{
    time_t secs = (time_t)(unix_ms / 1000);
    struct tm tm;
    if (unix_ms == 0 || !gmtime_r(&secs, &tm) || strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
        snprintf(buf, len, "-");
}

void ctl_format_enum(const ProtobufCEnumDescriptor *desc, int value, const char *prefix, char *buf,
                     size_t len)
{
    const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(desc, value);
    if (!v) {
        snprintf(buf, len, "%d", value);
        return;
    }
    const char *name = v->name;
    if (strncmp(name, prefix, strlen(prefix)) == 0)
        name += strlen(prefix);
    size_t i = 0;
    for (; name[i] && i + 1 < len; i++)
        buf[i] = (char)tolower((unsigned char)name[i]);
    buf[i] = '\0';
}

void ctl_print_argv(FILE *out, const ProtobufCBinaryData *argv, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (i)
            fputc(' ', out);
        fwrite(argv[i].data, 1, argv[i].len, out);
    }
}
