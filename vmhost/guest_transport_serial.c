#include "guest_transport.h"

#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "clock.h"
#include "vm_socket.h"

/* QEMU serves the virtserialport's chardev as a unix socket; it accepts one
 * client at a time, so a failed connect is retried until the deadline. */
static int virtio_serial_connect(const char *path, int timeout_ms, char *err, size_t errlen)
{
    int64_t deadline = clock_monotonic_ms() + timeout_ms;
    char why[512];
    do {
        int fd = vm_socket_connect(path, why, sizeof(why));
        if (fd >= 0)
            return fd;
        if (errno == ELOOP || errno == ENOTSOCK)
            break; /* not QEMU's socket: waiting will not make it one */
        usleep(5000);
    } while (clock_monotonic_ms() < deadline);
    snprintf(err, errlen, "cannot connect to the guest channel: %s", why);
    return -1;
}

const struct guest_transport guest_transport_virtio_serial = {
    .name = "virtio-serial",
    .connect = virtio_serial_connect,
};
