/* Dialling upstream and resets (dial.h). */
#include "dial.h"

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

int egress_dial_begin(struct egress_conn *c, uint32_t addr, uint16_t port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -1;
    struct egress_sandbox *sb = c->sb;
    pthread_mutex_lock(&sb->lock);
    c->upstream_fd = fd;
    bool stopping = sb->stopping;
    pthread_mutex_unlock(&sb->lock);
    if (stopping)
        return -1;
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port),
                              .sin_addr.s_addr = htonl(addr) };
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
        return 0;
    return errno == EINPROGRESS ? 1 : -1;
}

int egress_dial_result(int fd)
{
    int soerr = 0;
    socklen_t l = sizeof(soerr);
    return getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &l) < 0 || soerr != 0 ? -1 : 0;
}

int egress_dial(struct egress_conn *c, uint32_t addr, uint16_t port, int timeout_ms)
{
    int rc = egress_dial_begin(c, addr, port);
    if (rc <= 0)
        return rc;
    struct pollfd pfd = { .fd = c->upstream_fd, .events = POLLOUT };
    if (poll(&pfd, 1, timeout_ms) != 1)
        return -1;
    return egress_dial_result(c->upstream_fd);
}

/* Closing with a zero linger sends RST: the guest sees "connection reset"
 * at once instead of a hang. */
void egress_reset(int fd)
{
    struct linger lg = { .l_onoff = 1, .l_linger = 0 };
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
}
