#include "file_request.h"

#include <errno.h>
#include <string.h>

#include "bytes.h"
#include "send.h"

char *request_path(struct guestd *g, uint32_t id, const char *op, const ProtobufCBinaryData *b)
{
    char *path = bytes_to_path(b);
    if (!path) {
        if (errno == ENOMEM)
            guestd_send_result(g, id, ENOMEM, "%s: out of memory", op);
        else
            guestd_send_result(g, id, EINVAL, "%s: path is empty or contains a NUL byte", op);
    }
    return path;
}

void send_path_error(struct guestd *g, uint32_t id, const char *op, const char *path, int err)
{
    guestd_send_result(g, id, err, "%s %s: %s", op, quoted(path).s, strerror(err));
}
