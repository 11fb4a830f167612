#include "guest_net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_addr.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fsutil.h"
#include "log.h"
#include "sandbox_netdefs.h"

#define GUEST_NET_IFNAME "eth0"
#define GUEST_NET_RESOLV_CONF "/etc/resolv.conf"
#define GUEST_NET_RESOLV_TEXT "nameserver " SANDBOX_NET_GATEWAY_ADDR "\n"

/* One request: header, its fixed part and attributes, built in place. */
struct nl_request {
    struct nlmsghdr *h;
    char buf[256];
};

static void *nl_init(struct nl_request *r, uint16_t type, uint16_t flags, size_t fixed_len)
{
    memset(r->buf, 0, sizeof(r->buf));
    r->h = (struct nlmsghdr *)r->buf;
    r->h->nlmsg_len = (uint32_t)NLMSG_LENGTH(fixed_len);
    r->h->nlmsg_type = type;
    r->h->nlmsg_flags = (uint16_t)(NLM_F_REQUEST | NLM_F_ACK | flags);
    return NLMSG_DATA(r->h);
}

/* Every attribute here is small and fixed: the buffer is sized for them. */
static void nl_attr(struct nl_request *r, uint16_t type, const void *data, size_t len)
{
    struct rtattr *a = (struct rtattr *)(r->buf + NLMSG_ALIGN(r->h->nlmsg_len));
    a->rta_type = type;
    a->rta_len = (unsigned short)RTA_LENGTH(len);
    memcpy(RTA_DATA(a), data, len);
    r->h->nlmsg_len = (uint32_t)(NLMSG_ALIGN(r->h->nlmsg_len) + RTA_ALIGN(a->rta_len));
}

/* Sends the request and returns the kernel's answer as -errno (0 = done). */
static int nl_transact(int fd, struct nl_request *r)
{
    static uint32_t seq;
    r->h->nlmsg_seq = ++seq;
    if (send(fd, r->buf, r->h->nlmsg_len, 0) < 0)
        return -errno;
    char ans[1024];
    for (;;) {
        int n = (int)recv(fd, ans, sizeof(ans), 0);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        for (struct nlmsghdr *h = (struct nlmsghdr *)ans; NLMSG_OK(h, n); h = NLMSG_NEXT(h, n)) {
            if (h->nlmsg_seq != r->h->nlmsg_seq || h->nlmsg_type != NLMSG_ERROR)
                continue;
            return ((struct nlmsgerr *)NLMSG_DATA(h))->error;
        }
    }
}

static int link_up(int fd, int ifindex)
{
    struct nl_request r;
    struct ifinfomsg *ifi = nl_init(&r, RTM_NEWLINK, 0, sizeof(*ifi));
    ifi->ifi_family = AF_UNSPEC;
    ifi->ifi_index = ifindex;
    ifi->ifi_flags = IFF_UP;
    ifi->ifi_change = IFF_UP;
    return nl_transact(fd, &r);
}

/* NLM_F_REPLACE: setting the same address again is not an error. */
static int address_set(int fd, int ifindex, uint32_t addr)
{
    struct nl_request r;
    struct ifaddrmsg *ifa = nl_init(&r, RTM_NEWADDR, NLM_F_CREATE | NLM_F_REPLACE, sizeof(*ifa));
    ifa->ifa_family = AF_INET;
    ifa->ifa_prefixlen = SANDBOX_NET_PREFIX_LEN;
    ifa->ifa_scope = RT_SCOPE_UNIVERSE;
    ifa->ifa_index = (uint32_t)ifindex;
    nl_attr(&r, IFA_LOCAL, &addr, sizeof(addr));
    nl_attr(&r, IFA_ADDRESS, &addr, sizeof(addr));
    return nl_transact(fd, &r);
}

static int default_route_set(int fd, int ifindex, uint32_t gateway)
{
    struct nl_request r;
    struct rtmsg *rt = nl_init(&r, RTM_NEWROUTE, NLM_F_CREATE | NLM_F_REPLACE, sizeof(*rt));
    rt->rtm_family = AF_INET;
    rt->rtm_dst_len = 0;
    rt->rtm_table = RT_TABLE_MAIN;
    rt->rtm_protocol = RTPROT_STATIC;
    rt->rtm_scope = RT_SCOPE_UNIVERSE;
    rt->rtm_type = RTN_UNICAST;
    uint32_t oif = (uint32_t)ifindex;
    nl_attr(&r, RTA_GATEWAY, &gateway, sizeof(gateway));
    nl_attr(&r, RTA_OIF, &oif, sizeof(oif));
    return nl_transact(fd, &r);
}

/* IPv6 never leaves a sandbox (egress drops it), but the guest keeps its
 * stack (programs open AF_INET6 sockets). Without duplicate address
 * detection and router solicitations eth0 sends nothing on its own after
 * boot, so a snapshot taken a moment later holds no pending IPv6 timers
 * that every restored sandbox would first have to run. */
static void ipv6_quiet(void)
{
    static const char *const knobs[] = { "dad_transmits", "router_solicitations" };
    for (size_t i = 0; i < sizeof(knobs) / sizeof(*knobs); i++) {
        char path[128];
        snprintf(path, sizeof(path), "/proc/sys/net/ipv6/conf/" GUEST_NET_IFNAME "/%s", knobs[i]);
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0 || fs_write_all(fd, "0\n", 2) < 0)
            log_warn("cannot quieten IPv6", "path=%s errno=%d", path, errno);
        if (fd >= 0)
            close(fd);
    }
}

static int resolv_conf_set(void)
{
    char *text = NULL;
    size_t len = 0;
    bool same = fs_read_file(GUEST_NET_RESOLV_CONF, 4096, &text, &len, NULL, 0) == 0 &&
                len == strlen(GUEST_NET_RESOLV_TEXT) && memcmp(text, GUEST_NET_RESOLV_TEXT, len) == 0;
    free(text);
    if (same)
        return 0;
    char err[256];
    if (fs_write_file_atomic(GUEST_NET_RESOLV_CONF, GUEST_NET_RESOLV_TEXT,
                             strlen(GUEST_NET_RESOLV_TEXT), 0644, err, sizeof(err)) < 0) {
        log_error("cannot write resolv.conf", "error=\"%s\"", err);
        return -1;
    }
    return 0;
}

int guest_net_configure(void)
{
    uint32_t guest, gateway;
    inet_pton(AF_INET, SANDBOX_NET_GUEST_ADDR, &guest);
    inet_pton(AF_INET, SANDBOX_NET_GATEWAY_ADDR, &gateway);
    int lo = (int)if_nametoindex("lo"), eth = (int)if_nametoindex(GUEST_NET_IFNAME);
    if (!lo || !eth) {
        log_warn("no network interface to configure", "ifname=%s", lo ? GUEST_NET_IFNAME : "lo");
        return -1;
    }
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (fd < 0) {
        log_error("netlink socket failed", "errno=%d", errno);
        return -1;
    }
    const char *step = NULL;
    int rc;
    ipv6_quiet();
    if ((rc = link_up(fd, lo)) < 0)
        step = "lo up";
    else if ((rc = link_up(fd, eth)) < 0)
        step = GUEST_NET_IFNAME " up";
    else if ((rc = address_set(fd, eth, guest)) < 0)
        step = "address";
    else if ((rc = default_route_set(fd, eth, gateway)) < 0)
        step = "default route";
    close(fd);
    if (rc < 0) {
        log_error("network configuration failed", "step=\"%s\" error=\"%s\"", step, strerror(-rc));
        return -1;
    }
    return resolv_conf_set();
}
