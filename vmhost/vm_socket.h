/* Connecting to a socket QEMU serves in its directory (RUN/vm: QMP, the
 * guest channel, the console). The jail's uid owns that directory, so a
 * QEMU taken over could leave a symbolic link there in place of a socket,
 * naming another sandbox's: vmhost resolves paths as root in the host's
 * mount namespace and would follow it. So the last component is opened
 * without following links, must be a socket, and the connect goes through
 * that descriptor (/proc/self/fd/N), never through the path again. */
#ifndef AIRLOCK_VM_SOCKET_H
#define AIRLOCK_VM_SOCKET_H

#include <stddef.h>

/* A connected stream socket, or -1 with errno (ENOENT, ECONNREFUSED while
 * QEMU is starting; ELOOP for a link, ENOTSOCK for any other file) and a
 * message naming path. */
int vm_socket_connect(const char *path, char *err, size_t errlen);

#endif
