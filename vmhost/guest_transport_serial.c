#include "guest_transport.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "clock.h"

/* QEMU serves the virtserialport's chardev as a unix socket; it accepts one
 * client at a time, so a failed connect is retried until the deadline. */
static int virtio_serial_connect(const char *path, int timeout_ms, char *err, size_t errlen)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    if (strlen(path) >= sizeof(sa.sun_path)) {
        snprintf(err, errlen, "guest channel socket path too long: %s", path);
        return -1;
    }
    strcpy(sa.sun_path, path);
    int64_t deadline = clock_monotonic_ms() + timeout_ms;
    int last_errno = 0;
    do {
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            snprintf(err, errlen, "socket: %s", strerror(errno));
            return -1;
        }
        if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
            return fd;
        last_errno = errno;
        close(fd);
        usleep(5000);
    } while (clock_monotonic_ms() < deadline);
    snprintf(err, errlen, "cannot connect to guest channel %s: %s", path, strerror(last_errno));
    return -1;
}

const struct guest_transport guest_transport_virtio_serial = {
    .name = "virtio-serial",
    .connect = virtio_serial_connect,
};
