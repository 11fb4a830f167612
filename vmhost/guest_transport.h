/* How vmhost reaches a guest's private channel. Today the channel is a
 * virtio-serial port whose host side is a unix socket served by QEMU; vsock
 * (where the host has /dev/vhost-vsock) slots in as another transport. A
 * transport only has to produce a connected, blocking byte-stream fd; the
 * framing and multiplexing above it (guest_channel) are shared. */
#ifndef AIRLOCK_GUEST_TRANSPORT_H
#define AIRLOCK_GUEST_TRANSPORT_H

#include <stddef.h>

struct guest_transport {
    const char *name;
    /* Connects to the guest endpoint named by address, retrying until
     * timeout_ms. Returns an fd or -1 with a message in err. */
    int (*connect)(const char *address, int timeout_ms, char *err, size_t errlen);
};

extern const struct guest_transport guest_transport_virtio_serial;

#endif
