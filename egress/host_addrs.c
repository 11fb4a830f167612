#include "host_addrs.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/rtnl.h>
#include <netlink/socket.h>

#include "log.h"
#include "netns.h"

struct host_addrs {
    pthread_mutex_t lock;
    uint32_t addrs[HOST_ADDRS_MAX];
    size_t n;
    struct nl_sock *sk;
    int wake[2];
    pthread_t thread;
    bool thread_started;
    char err[256]; /* from the namespace's thread */
};

static void add_locked(struct host_addrs *h, uint32_t addr)
{
    for (size_t i = 0; i < h->n; i++)
        if (h->addrs[i] == addr)
            return;
    if (h->n < HOST_ADDRS_MAX)
        h->addrs[h->n++] = addr;
}

/* An RTM_NEWADDR's address (rtnl_addr parsed by libnl-route). */
static void on_addr(struct nl_object *obj, void *arg)
{
    struct host_addrs *h = arg;
    struct rtnl_addr *a = (struct rtnl_addr *)obj;
    struct nl_addr *local = rtnl_addr_get_local(a);
    if (rtnl_addr_get_family(a) != AF_INET || !local || nl_addr_get_len(local) != 4)
        return;
    uint32_t be;
    memcpy(&be, nl_addr_get_binary_addr(local), 4);
    char text[16];
    inet_ntop(AF_INET, &be, text, sizeof(text));
    pthread_mutex_lock(&h->lock);
    size_t before = h->n;
    add_locked(h, ntohl(be));
    bool added = h->n > before;
    pthread_mutex_unlock(&h->lock);
    if (added)
        log_info("node address protected", "addr=%s", text);
}

static int on_msg(struct nl_msg *msg, void *arg)
{
    if (nlmsg_hdr(msg)->nlmsg_type == RTM_NEWADDR)
        nl_msg_parse(msg, on_addr, arg);
    return NL_OK;
}

/* Inside the namespace: the socket is the namespace's for good. It joins
 * the address group before the scan, so nothing added in between is
 * missed. */
static int open_in_namespace(void *arg)
{
    struct host_addrs *h = arg;
    int rc;
    if (!(h->sk = nl_socket_alloc())) {
        snprintf(h->err, sizeof(h->err), "nl_socket_alloc failed");
        return -1;
    }
    nl_socket_disable_seq_check(h->sk);
    nl_socket_modify_cb(h->sk, NL_CB_VALID, NL_CB_CUSTOM, on_msg, h);
    if ((rc = nl_connect(h->sk, NETLINK_ROUTE)) < 0 ||
        (rc = nl_socket_add_membership(h->sk, RTNLGRP_IPV4_IFADDR)) < 0 ||
        (rc = nl_socket_set_buffer_size(h->sk, 1 << 20, 0)) < 0 ||
        (rc = nl_socket_set_nonblocking(h->sk)) < 0) {
        snprintf(h->err, sizeof(h->err), "rtnetlink: %s", nl_geterror(rc));
        return -1;
    }
    struct ifaddrs *ifs;
    if (getifaddrs(&ifs) < 0) {
        snprintf(h->err, sizeof(h->err), "getifaddrs: %s", strerror(errno));
        return -1;
    }
    for (struct ifaddrs *i = ifs; i; i = i->ifa_next)
        if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET)
            add_locked(h, ntohl(((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr));
    freeifaddrs(ifs);
    return 0;
}

static void *follow_main(void *arg)
{
    struct host_addrs *h = arg;
    for (;;) {
        struct pollfd pfd[2] = { { .fd = nl_socket_get_fd(h->sk), .events = POLLIN },
                                 { .fd = h->wake[0], .events = POLLIN } };
        if (poll(pfd, 2, -1) < 0 && errno != EINTR)
            break;
        if (pfd[1].revents)
            break;
        if (pfd[0].revents & POLLIN) {
            int rc = nl_recvmsgs_default(h->sk);
            /* A full socket buffer dropped events: ask for every address
             * again (the dump's answers come here like any event) rather
             * than miss one. */
            if (rc == -NLE_NOMEM || rc == -NLE_MSG_OVERFLOW) {
                log_warn("node address events lost: listing them again", "error=\"%s\"",
                         nl_geterror(rc));
                nl_rtgen_request(h->sk, RTM_GETADDR, AF_INET, NLM_F_DUMP);
            }
        }
    }
    return NULL;
}

struct host_addrs *host_addrs_start(const char *netns_path, char *err, size_t errlen)
{
    struct host_addrs *h = calloc(1, sizeof(*h));
    if (!h) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&h->lock, NULL);
    h->wake[0] = h->wake[1] = -1;
    if (netns_run(netns_path, open_in_namespace, h, err, errlen) < 0) {
        if (h->err[0])
            snprintf(err, errlen, "node addresses: %s", h->err);
        goto fail;
    }
    if (pipe2(h->wake, O_CLOEXEC) < 0 ||
        pthread_create(&h->thread, NULL, follow_main, h) != 0) {
        snprintf(err, errlen, "node addresses: cannot start the follower: %s", strerror(errno));
        goto fail;
    }
    h->thread_started = true;
    return h;
fail:
    host_addrs_stop(h);
    return NULL;
}

void host_addrs_stop(struct host_addrs *h)
{
    if (!h)
        return;
    if (h->thread_started) {
        if (write(h->wake[1], "x", 1) < 0)
            log_error("node address follower: wake failed", "error=\"%s\"", strerror(errno));
        pthread_join(h->thread, NULL);
    }
    for (int i = 0; i < 2; i++)
        if (h->wake[i] >= 0)
            close(h->wake[i]);
    nl_socket_free(h->sk);
    pthread_mutex_destroy(&h->lock);
    free(h);
}

bool host_addrs_contains(struct host_addrs *h, uint32_t addr)
{
    pthread_mutex_lock(&h->lock);
    bool found = false;
    for (size_t i = 0; i < h->n && !found; i++)
        found = h->addrs[i] == addr;
    pthread_mutex_unlock(&h->lock);
    return found;
}
