/* airlock-hostile-agent: a guest agent that lies, for the integration test
 * test_hostile_guest.c (see README.md). As PID 1 it does what guestd's
 * main does, runs the real guestd (airlock_guestd_core) in a child on one
 * end of a socketpair, and relays whole frames between the virtio port
 * and that child. A sandbox therefore behaves as one with airlock-guestd
 * until the host asks for a misbehaviour (misbehave.h); then the agent
 * stops relaying and does that. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include "frame.h"
#include "guestd.h"
#include "log.h"
#include "misbehave.h"
#include "pid1.h"
#include "port.h"

/* How long to leave the port alone while no host is connected (it reports
 * POLLHUP until one is). */
#define HOST_AWAY_BACKOFF_MS 100

/* Reads what fd has into dec; false at its end or on an error other than
 * "nothing now". */
static bool read_into(int fd, struct frame_decoder *dec)
{
    uint8_t buf[64 * 1024];
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0)
        return errno == EAGAIN || errno == EINTR;
    return n > 0 && frame_decoder_feed(dec, buf, (size_t)n) == 0;
}

/* The host went away (or never came): what it half sent is garbage. */
static void host_away(struct frame_decoder *from_host)
{
    frame_decoder_free(from_host);
    frame_decoder_init(from_host);
    usleep(HOST_AWAY_BACKOFF_MS * 1000);
}

/* Relays until guestd's end closes. */
static void relay(int port, int guestd)
{
    struct frame_decoder from_host, from_guestd;
    frame_decoder_init(&from_host);
    frame_decoder_init(&from_guestd);
    for (;;) {
        struct pollfd p[2] = { { .fd = port, .events = POLLIN }, { .fd = guestd, .events = POLLIN } };
        if (poll(p, 2, -1) < 0)
            continue;
        if (p[0].revents & POLLIN) {
            if (!read_into(port, &from_host)) {
                host_away(&from_host);
                continue;
            }
            GuestFrame *f;
            while (frame_decoder_next(&from_host, &f) == FRAME_OK) {
                misbehave_if_asked(port, f); /* returns only if f asks for none */
                frame_write_fd(guestd, f);
                frame_free(f);
            }
        } else if (p[0].revents & (POLLHUP | POLLERR)) {
            host_away(&from_host);
        }
        if (p[1].revents & (POLLIN | POLLHUP)) {
            if (!read_into(guestd, &from_guestd))
                break;
            GuestFrame *f;
            while (frame_decoder_next(&from_guestd, &f) == FRAME_OK) {
                frame_write_fd(port, f); /* lost while no host is there, as guestd's */
                frame_free(f);
            }
        }
    }
    frame_decoder_free(&from_host);
    frame_decoder_free(&from_guestd);
}

int main(void)
{
    log_init("hostile-agent", LOG_INFO);
    bool pid1 = getpid() == 1;
    if (pid1)
        pid1_setup();
    stdio_ensure_open();
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
        perror("hostile-agent: socketpair");
        for (;;)
            pause(); /* PID 1 must not exit */
    }
    pid_t child = fork();
    if (child == 0) {
        close(sv[0]);
        struct guestd_options o = { .reconnecting = false, .configure_network = pid1 };
        _exit(guestd_run(sv[1], &o) == 0 ? 0 : 1);
    }
    close(sv[1]);
    signal(SIGPIPE, SIG_IGN);
    int port = port_open_wait("agent");
    fprintf(stderr, "hostile-agent: relaying between the host and guestd (pid %d)\n", (int)child);
    relay(port, sv[0]);
    fprintf(stderr, "hostile-agent: guestd ended\n");
    for (;;)
        pause();
}
