/* airlock-guestd's core: serves the host <-> guest protocol
 * (protos/guest.proto) on one channel fd with a single-threaded event loop.
 * main.c adds the PID 1 duties; tests drive this over a socketpair. */
#ifndef GUESTD_H
#define GUESTD_H

#include <stdbool.h>

#include "guestd_version.h"

struct guestd_options {
    /* The channel is a virtio-serial port: read() returning 0 / POLLHUP
     * means "no host connected right now", not end of file. guestd_run
     * then never returns. Otherwise (a stream socket) end of file ends
     * guestd_run. */
    bool reconnecting;
    /* PID 1 of a sandbox VM: configure the NIC (guest_net.h) at start (and
     * at a new host session if that failed). Never in tests, which run
     * guestd on the host. */
    bool configure_network;
};

/* Serves the protocol on channel_fd (taken over and closed) until the
 * channel reaches end of file. guestd_run owns every child of the calling
 * process: it reaps them all (waitpid(-1)), becomes a child subreaper so
 * orphans come back to it, blocks SIGCHLD and ignores SIGPIPE. So run it in
 * a process of its own (a forked child in tests). On return every process
 * it started has been SIGKILLed. Returns 0, or -1 if it could not start. */
int guestd_run(int channel_fd, const struct guestd_options *opts);

#endif
