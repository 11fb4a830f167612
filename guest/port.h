/* Finds the virtio-serial port the host talks on. There is no udev in the
 * guest, so no /dev/virtio-ports/NAME: scan sysfs for the port's name. */
#ifndef GUESTD_PORT_H
#define GUESTD_PORT_H

#include <stddef.h>

/* Writes "/dev/<vportNpM>" of the port called name into out. Returns 0, or
 * -1 when no such port exists (yet). sysfs_dir is normally
 * "/sys/class/virtio-ports". */
int port_find(const char *sysfs_dir, const char *name, char *out, size_t outlen);

/* Waits (polling sysfs, logging now and then) until the port exists, then
 * opens it read-write, non-blocking, close-on-exec. Never gives up. */
int port_open_wait(const char *name);

#endif
