/* One attached sandbox: its listeners inside the sandbox namespace and the
 * loop thread that accepts connections and answers DNS. */
#include "egress_sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dns_wire.h"
#include "egress_dns.h"
#include "egress_tcp.h"
#include "log.h"
#include "netns.h"
#include "sandbox_netdefs.h"

#define EGRESS_PINS_PER_SANDBOX 4096
#define EGRESS_LOG_PER_SANDBOX 4096

struct listeners {
    int tcp_fd;
    int dns_fd;
    char err[256];
};

static int listen_socket(int type, uint16_t port, char *err, size_t errlen)
{
    int fd = socket(AF_INET, type | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(err, errlen, "socket: %s", strerror(errno));
        return -1;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    /* Any address: the redirect rewrites the destination to the address of
     * the interface the guest's packet came in on. */
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port),
                              .sin_addr.s_addr = htonl(INADDR_ANY) };
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        snprintf(err, errlen, "bind port %u: %s", port, strerror(errno));
        goto fail;
    }
    if (type == SOCK_STREAM && listen(fd, 128) < 0) {
        snprintf(err, errlen, "listen port %u: %s", port, strerror(errno));
        goto fail;
    }
    return fd;
fail:
    close(fd);
    return -1;
}

/* Runs inside the sandbox namespace: sockets stay in the namespace they
 * were created in, whatever thread later uses them. */
static int open_listeners(void *arg)
{
    struct listeners *l = arg;
    l->tcp_fd = listen_socket(SOCK_STREAM, SANDBOX_NET_EGRESS_TCP_PORT, l->err, sizeof(l->err));
    if (l->tcp_fd < 0)
        return -1;
    l->dns_fd = listen_socket(SOCK_DGRAM, SANDBOX_NET_EGRESS_DNS_PORT, l->err, sizeof(l->err));
    if (l->dns_fd < 0) {
        close(l->tcp_fd);
        l->tcp_fd = -1;
        return -1;
    }
    return 0;
}

static void serve_dns(struct egress_sandbox *sb)
{
    uint8_t query[DNS_MAX_UDP * 8], reply[DNS_MAX_UDP];
    struct sockaddr_in from;
    socklen_t fromlen = sizeof(from);
    ssize_t n = recvfrom(sb->dns_fd, query, sizeof(query), MSG_DONTWAIT, (struct sockaddr *)&from,
                         &fromlen);
    if (n <= 0)
        return;
    size_t len = egress_dns_answer(sb, query, (size_t)n, reply, sizeof(reply));
    if (len > 0)
        sendto(sb->dns_fd, reply, len, MSG_DONTWAIT, (struct sockaddr *)&from, fromlen);
}

static void *sandbox_loop(void *arg)
{
    struct egress_sandbox *sb = arg;
    char err[256];
    /* Upstream DNS sockets are made on this thread: they leave from the
     * uplink namespace when one is set, as the connection loop's dials do
     * (conn_loop.h). */
    if (sb->eg->cfg.uplink_netns && netns_enter(sb->eg->cfg.uplink_netns, err, sizeof(err)) < 0) {
        log_error("egress loop cannot enter uplink namespace", "sandbox=%s error=\"%s\"", sb->id,
                  err);
        return NULL;
    }
    struct pollfd pfd[3] = {
        { .fd = sb->wake[0], .events = POLLIN },
        { .fd = sb->tcp_fd, .events = POLLIN },
        { .fd = sb->dns_fd, .events = POLLIN },
    };
    for (;;) {
        if (poll(pfd, 3, -1) < 0) {
            if (errno == EINTR)
                continue;
            log_error("egress poll failed", "sandbox=%s error=\"%s\"", sb->id, strerror(errno));
            return NULL;
        }
        if (pfd[0].revents)
            return NULL;
        if (pfd[1].revents & POLLIN) {
            int fd = accept4(sb->tcp_fd, NULL, NULL, SOCK_CLOEXEC);
            if (fd >= 0)
                egress_tcp_accept(sb, fd);
        }
        if (pfd[2].revents & POLLIN)
            serve_dns(sb);
    }
}

static void sandbox_free(struct egress_sandbox *sb)
{
    if (sb->tcp_fd >= 0)
        close(sb->tcp_fd);
    if (sb->dns_fd >= 0)
        close(sb->dns_fd);
    if (sb->wake[0] >= 0)
        close(sb->wake[0]);
    if (sb->wake[1] >= 0)
        close(sb->wake[1]);
    egress_policy_put(sb->policy);
    sandbox_ca_free(sb->ca);
    pins_free(sb->pins);
    conn_log_free(sb->log);
    pthread_cond_destroy(&sb->conns_gone);
    pthread_mutex_destroy(&sb->lock);
    free(sb);
}

struct egress_sandbox *egress_sandbox_start(struct egress *eg, const char *id,
                                            const char *netns_path, struct egress_policy *policy,
                                            struct sandbox_ca *ca, const char *project_id,
                                            char *err, size_t errlen)
{
    struct egress_sandbox *sb = calloc(1, sizeof(*sb));
    if (!sb) {
        snprintf(err, errlen, "out of memory");
        egress_policy_put(policy);
        sandbox_ca_free(ca);
        return NULL;
    }
    snprintf(sb->id, sizeof(sb->id), "%s", id);
    sb->eg = eg;
    sb->policy = policy;
    sb->ca = ca;
    snprintf(sb->project_id, sizeof(sb->project_id), "%s", project_id);
    sb->tcp_fd = sb->dns_fd = sb->wake[0] = sb->wake[1] = -1;
    pthread_mutex_init(&sb->lock, NULL);
    pthread_cond_init(&sb->conns_gone, NULL);
    sb->pins = pins_new(EGRESS_PINS_PER_SANDBOX);
    sb->log = conn_log_new(EGRESS_LOG_PER_SANDBOX);
    if (!sb->pins || !sb->log || pipe2(sb->wake, O_CLOEXEC) < 0) {
        snprintf(err, errlen, "out of memory or file descriptors");
        goto fail;
    }
    struct listeners l = { .tcp_fd = -1, .dns_fd = -1 };
    if (netns_run(netns_path, open_listeners, &l, err, errlen) < 0) {
        if (l.err[0])
            snprintf(err, errlen, "listeners in %s: %s", netns_path, l.err);
        goto fail;
    }
    sb->tcp_fd = l.tcp_fd;
    sb->dns_fd = l.dns_fd;
    int rc = pthread_create(&sb->loop, NULL, sandbox_loop, sb);
    if (rc != 0) {
        snprintf(err, errlen, "loop thread: %s", strerror(rc));
        goto fail;
    }
    sb->loop_started = true;
    return sb;
fail:
    sandbox_free(sb);
    return NULL;
}

/* A connection's fds are closed only after it left the list (under the
 * lock), so every fd seen here is still open. */
unsigned egress_sandbox_recheck(struct egress_sandbox *sb, const struct egress_policy *policy)
{
    unsigned closed = 0;
    pthread_mutex_lock(&sb->lock);
    for (struct egress_conn *c = sb->conns; c; c = c->next) {
        if (!c->allowed || c->closed_by_policy || egress_conn_still_allowed(c, policy))
            continue;
        c->closed_by_policy = true;
        shutdown(c->client_fd, SHUT_RDWR);
        if (c->upstream_fd >= 0)
            shutdown(c->upstream_fd, SHUT_RDWR);
        closed++;
    }
    pthread_mutex_unlock(&sb->lock);
    return closed;
}

void egress_sandbox_stop(struct egress_sandbox *sb)
{
    if (sb->loop_started) {
        char one = 1;
        if (write(sb->wake[1], &one, 1) < 0)
            log_error("egress wake failed", "sandbox=%s error=\"%s\"", sb->id, strerror(errno));
        pthread_join(sb->loop, NULL);
    }
    /* No new connections now; end the ones in flight (their fds close only
     * after they left the list, so these are still open): each sees its
     * sockets shut down and ends. */
    pthread_mutex_lock(&sb->lock);
    sb->stopping = true;
    for (struct egress_conn *c = sb->conns; c; c = c->next) {
        shutdown(c->client_fd, SHUT_RDWR);
        if (c->upstream_fd >= 0)
            shutdown(c->upstream_fd, SHUT_RDWR);
    }
    while (sb->conns)
        pthread_cond_wait(&sb->conns_gone, &sb->lock);
    pthread_mutex_unlock(&sb->lock);
    sandbox_free(sb);
}
