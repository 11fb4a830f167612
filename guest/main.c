/* airlock-guestd: as PID 1 in the VM, sets the system up and serves the
 * host on the "agent" virtio-serial port forever. With --channel-fd N it
 * serves an inherited stream socket instead (tests, development). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "guestd.h"
#include "log.h"
#include "pid1.h"
#include "port.h"

static void usage(FILE *out)
{
    fprintf(out, "usage: airlock-guestd [--channel-fd N] [--port NAME] [--debug]\n"
                 "  --channel-fd N  serve the stream socket N, exit at its end of file\n"
                 "  --port NAME     virtio-serial port name (default: agent)\n"
                 "  --debug         log debug events\n");
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        { "channel-fd", required_argument, NULL, 'c' },
        { "port", required_argument, NULL, 'p' },
        { "debug", no_argument, NULL, 'd' },
        { "help", no_argument, NULL, 'h' },
        { 0 },
    };
    int channel_fd = -1;
    const char *port = "agent";
    enum log_level level = LOG_INFO;
    int c;
    while ((c = getopt_long(argc, argv, "c:p:dh", opts, NULL)) != -1) {
        switch (c) {
        case 'c':
            channel_fd = atoi(optarg);
            break;
        case 'p':
            port = optarg;
            break;
        case 'd':
            level = LOG_DEBUG;
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    log_init("guestd", level);

    if (channel_fd >= 0) {
        stdio_ensure_open();
        struct guestd_options o = { .reconnecting = false };
        return guestd_run(channel_fd, &o) == 0 ? 0 : 1;
    }
    bool pid1 = getpid() == 1;
    if (pid1)
        pid1_setup();
    else
        log_warn("not running as pid 1: no system setup", "pid=%d", (int)getpid());
    stdio_ensure_open();
    /* PID 1 must never exit: the kernel would panic. */
    for (;;) {
        struct guestd_options o = { .reconnecting = true, .configure_network = pid1 };
        int fd = port_open_wait(port);
        guestd_run(fd, &o);
        log_error("guestd stopped unexpectedly; restarting", "errno=%d", errno);
        sleep(1);
    }
}
