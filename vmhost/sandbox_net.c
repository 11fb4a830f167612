#include "sandbox_net.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <nftables/libnftables.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "clock.h"
#include "netns.h"
#include "sandbox_netdefs.h"

#define NFT_TABLE "airlock"

/* Everything the guest sends arrives on a non-loopback interface (the TAP;
 * in tests a veth standing in for it). The guard chain runs before
 * conntrack and routing (priority raw), so it sees the guest's original
 * ports and counts packets to non-local addresses too, which routing would
 * otherwise drop silently (no forwarding here): only TCP and UDP/53 pass.
 * Those are redirected to egress's listeners; the input chain accepts only
 * what was redirected (ct status dnat), so a guest dialling the listener
 * ports directly is dropped as well, and the answers to connections the
 * host side opened to the guest (vmhost's PortForward: ct direction
 * reply), which the guest cannot start by itself. The TAP carries the guest's own
 * address only: a packet from any other source (spoofed) is dropped first.
 * (Tests' veth stand-ins are not the TAP and keep their own addresses.) */
static const char nft_ruleset_fmt[] =
    "table inet " NFT_TABLE " {\n"
    "  counter dropped_udp { }\n"
    "  counter dropped_icmp { }\n"
    "  counter dropped_ipv6 { }\n"
    "  counter dropped_other { }\n"
    "  counter dropped_spoofed { }\n"
    "  chain guard {\n"
    "    type filter hook prerouting priority raw; policy accept;\n"
    "    iifname \"lo\" accept\n"
    "    iifname \"" SANDBOX_NET_TAP_NAME "\" meta nfproto ipv4 ip saddr != " SANDBOX_NET_GUEST_ADDR
    " counter name \"dropped_spoofed\" drop\n"
    "    meta nfproto ipv6 counter name \"dropped_ipv6\" drop\n"
    "    meta l4proto tcp accept\n"
    "    udp dport 53 accept\n"
    "    meta l4proto udp counter name \"dropped_udp\" drop\n"
    "    meta l4proto icmp counter name \"dropped_icmp\" drop\n"
    "    counter name \"dropped_other\" drop\n"
    "  }\n"
    "  chain prerouting {\n"
    "    type nat hook prerouting priority dstnat; policy accept;\n"
    "    iifname \"lo\" accept\n"
    "    meta nfproto ipv4 meta l4proto tcp redirect to :%d\n"
    "    meta nfproto ipv4 udp dport 53 redirect to :%d\n"
    "  }\n"
    "  chain input {\n"
    "    type filter hook input priority filter; policy drop;\n"
    "    iifname \"lo\" accept\n"
    "    meta l4proto tcp tcp dport %d ct status dnat accept\n"
    "    meta l4proto udp udp dport %d ct status dnat accept\n"
    "    ct direction reply ct state established accept\n"
    "    counter name \"dropped_other\" drop\n"
    "  }\n"
    "  chain forward {\n"
    "    type filter hook forward priority filter; policy drop;\n"
    "    counter name \"dropped_other\" drop\n"
    "  }\n"
    "}\n";

/* Set once at start (sandbox_net_set_prefix), before any thread reads it. */
static char ns_prefix[SANDBOX_NET_PREFIX_MAX + 1] = SANDBOX_NET_NS_PREFIX;

int sandbox_net_set_prefix(const char *prefix, char *err, size_t errlen)
{
    size_t n = strlen(prefix);
    if (n == 0 || n > SANDBOX_NET_PREFIX_MAX ||
        strspn(prefix, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") != n) {
        snprintf(err, errlen,
                 "network namespace prefix \"%s\": 1 to %d letters, digits, '_', '.' or '-'",
                 prefix, SANDBOX_NET_PREFIX_MAX);
        return -1;
    }
    memcpy(ns_prefix, prefix, n + 1);
    return 0;
}

static int sandbox_net_ns_name(const char *sandbox_id, char *buf, size_t buflen)
{
    int n = snprintf(buf, buflen, "%s%s", ns_prefix, sandbox_id);
    return n < 0 || (size_t)n >= buflen ? -1 : 0;
}

int sandbox_net_netns_path(const char *sandbox_id, char *buf, size_t buflen)
{
    char name[128];
    if (sandbox_net_ns_name(sandbox_id, name, sizeof(name)) < 0)
        return -1;
    return netns_path(name, buf, buflen);
}

/* State of one piece of work done inside the namespace. */
struct net_job {
    char err[512];
    int tap_fd;
    struct sandbox_net_counters counters;
};

static int tap_open(bool persist, char *err, size_t errlen)
{
    int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "open /dev/net/tun: %s", strerror(errno));
        return -1;
    }
    struct ifreq ifr = { 0 };
    ifr.ifr_flags = IFF_TAP | IFF_NO_PI | IFF_VNET_HDR;
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", SANDBOX_NET_TAP_NAME);
    if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
        snprintf(err, errlen, "TUNSETIFF %s: %s", SANDBOX_NET_TAP_NAME, strerror(errno));
        goto fail;
    }
    if (persist && ioctl(fd, TUNSETPERSIST, 1) < 0) {
        snprintf(err, errlen, "TUNSETPERSIST %s: %s", SANDBOX_NET_TAP_NAME, strerror(errno));
        goto fail;
    }
    return fd;
fail:;
    int saved = errno;
    close(fd);
    errno = saved;
    return -1;
}

/* Sets a link up, with a MAC when mac is not NULL. */
static int link_up(struct nl_sock *sk, const char *ifname, const char *mac, char *err,
                   size_t errlen)
{
    struct rtnl_link *link = NULL, *change = NULL;
    struct nl_addr *addr = NULL;
    int rc = rtnl_link_get_kernel(sk, 0, ifname, &link);
    if (rc < 0)
        goto nl_fail;
    change = rtnl_link_alloc();
    if (!change) {
        rc = -NLE_NOMEM;
        goto nl_fail;
    }
    if (mac) {
        rc = nl_addr_parse(mac, AF_LLC, &addr);
        if (rc < 0)
            goto nl_fail;
        rtnl_link_set_addr(change, addr);
    }
    rtnl_link_set_flags(change, IFF_UP);
    rc = rtnl_link_change(sk, link, change, 0);
    if (rc < 0)
        goto nl_fail;
    rc = 0;
    goto out;
nl_fail:
    snprintf(err, errlen, "link %s up: %s", ifname, nl_geterror(rc));
    rc = -1;
out:
    nl_addr_put(addr);
    rtnl_link_put(change);
    rtnl_link_put(link);
    return rc;
}

static int link_add_address(struct nl_sock *sk, const char *ifname, const char *cidr, char *err,
                            size_t errlen)
{
    struct rtnl_addr *a = NULL;
    struct nl_addr *local = NULL;
    struct rtnl_link *link = NULL;
    int rc = rtnl_link_get_kernel(sk, 0, ifname, &link);
    if (rc < 0)
        goto nl_fail;
    rc = nl_addr_parse(cidr, AF_INET, &local);
    if (rc < 0)
        goto nl_fail;
    a = rtnl_addr_alloc();
    if (!a) {
        rc = -NLE_NOMEM;
        goto nl_fail;
    }
    rtnl_addr_set_ifindex(a, rtnl_link_get_ifindex(link));
    rc = rtnl_addr_set_local(a, local);
    if (rc < 0)
        goto nl_fail;
    rc = rtnl_addr_add(sk, a, 0);
    if (rc < 0)
        goto nl_fail;
    rc = 0;
    goto out;
nl_fail:
    snprintf(err, errlen, "address %s on %s: %s", cidr, ifname, nl_geterror(rc));
    rc = -1;
out:
    rtnl_addr_put(a);
    nl_addr_put(local);
    rtnl_link_put(link);
    return rc;
}

/* Runs an nft command in the calling thread's namespace; with out != NULL
 * the (JSON) output is returned malloc'd. */
static int nft_run(const char *cmd, bool json, char **out, char *err, size_t errlen)
{
    struct nft_ctx *nft = nft_ctx_new(NFT_CTX_DEFAULT);
    if (!nft) {
        snprintf(err, errlen, "nft_ctx_new failed");
        return -1;
    }
    int rc = -1;
    if (json)
        nft_ctx_output_set_flags(nft, NFT_CTX_OUTPUT_JSON);
    nft_ctx_buffer_output(nft);
    nft_ctx_buffer_error(nft);
    if (nft_run_cmd_from_buffer(nft, cmd) != 0) {
        snprintf(err, errlen, "nft: %s", nft_ctx_get_error_buffer(nft));
        goto out;
    }
    if (out) {
        *out = strdup(nft_ctx_get_output_buffer(nft));
        if (!*out) {
            snprintf(err, errlen, "out of memory");
            goto out;
        }
    }
    rc = 0;
out:
    nft_ctx_free(nft);
    return rc;
}

static int net_build(void *arg)
{
    struct net_job *job = arg;
    int rc = -1, tap = -1;
    char cidr[32], ruleset[sizeof(nft_ruleset_fmt) + 64];
    struct nl_sock *sk = nl_socket_alloc();
    if (!sk) {
        snprintf(job->err, sizeof(job->err), "nl_socket_alloc failed");
        return -1;
    }
    /* The socket belongs to the namespace this thread is in. */
    int nrc = nl_connect(sk, NETLINK_ROUTE);
    if (nrc < 0) {
        snprintf(job->err, sizeof(job->err), "nl_connect: %s", nl_geterror(nrc));
        goto out;
    }
    if (link_up(sk, "lo", NULL, job->err, sizeof(job->err)) < 0)
        goto out;
    tap = tap_open(true, job->err, sizeof(job->err));
    if (tap < 0)
        goto out;
    if (link_up(sk, SANDBOX_NET_TAP_NAME, SANDBOX_NET_GATEWAY_MAC, job->err, sizeof(job->err)) < 0)
        goto out;
    snprintf(cidr, sizeof(cidr), "%s/%d", SANDBOX_NET_GATEWAY_ADDR, SANDBOX_NET_PREFIX_LEN);
    if (link_add_address(sk, SANDBOX_NET_TAP_NAME, cidr, job->err, sizeof(job->err)) < 0)
        goto out;
    snprintf(ruleset, sizeof(ruleset), nft_ruleset_fmt, SANDBOX_NET_EGRESS_TCP_PORT,
             SANDBOX_NET_EGRESS_DNS_PORT, SANDBOX_NET_EGRESS_TCP_PORT,
             SANDBOX_NET_EGRESS_DNS_PORT);
    if (nft_run(ruleset, false, NULL, job->err, sizeof(job->err)) < 0)
        goto out;
    rc = 0;
out:
    if (tap >= 0)
        close(tap);
    nl_socket_free(sk);
    return rc;
}

int sandbox_net_create(const char *sandbox_id, char *err, size_t errlen)
{
    char name[128], path[256];
    if (sandbox_net_ns_name(sandbox_id, name, sizeof(name)) < 0 ||
        netns_path(name, path, sizeof(path)) < 0) {
        snprintf(err, errlen, "sandbox id too long for a namespace name: %s", sandbox_id);
        return -1;
    }
    if (netns_create(name, err, errlen) < 0)
        return -1;
    struct net_job job = { 0 };
    if (netns_run(path, net_build, &job, err, errlen) < 0) {
        if (job.err[0])
            snprintf(err, errlen, "%s", job.err);
        /* The TAP dies with the namespace: nothing holds either. */
        netns_delete(name, NULL, 0);
        return -1;
    }
    return 0;
}

int sandbox_net_rename(const char *old_id, const char *new_id, char *err, size_t errlen)
{
    char from[128], to[128];
    if (sandbox_net_ns_name(old_id, from, sizeof(from)) < 0 ||
        sandbox_net_ns_name(new_id, to, sizeof(to)) < 0) {
        snprintf(err, errlen, "sandbox id too long for a namespace name: %s", new_id);
        return -1;
    }
    return netns_rename(from, to, err, errlen);
}

/* A single-queue TAP takes one open file at a time (else EBUSY). The file
 * sandbox_net_create() opened to make it can still be open for a moment
 * after it closed its copy: a QEMU forked meanwhile by another create
 * holds it until its exec. So EBUSY is retried briefly. */
#define TAP_BUSY_RETRY_MS 2000

static int net_open_tap(void *arg)
{
    struct net_job *job = arg;
    int64_t deadline = clock_monotonic_ms() + TAP_BUSY_RETRY_MS;
    while ((job->tap_fd = tap_open(false, job->err, sizeof(job->err))) < 0 && errno == EBUSY &&
           clock_monotonic_ms() < deadline)
        usleep(1000);
    return job->tap_fd < 0 ? -1 : 0;
}

int sandbox_net_open_tap(const char *sandbox_id, int *fd, char *err, size_t errlen)
{
    char path[256];
    if (sandbox_net_netns_path(sandbox_id, path, sizeof(path)) < 0) {
        snprintf(err, errlen, "sandbox id too long: %s", sandbox_id);
        return -1;
    }
    struct net_job job = { .tap_fd = -1 };
    if (netns_run(path, net_open_tap, &job, err, errlen) < 0) {
        if (job.err[0])
            snprintf(err, errlen, "%s", job.err);
        return -1;
    }
    *fd = job.tap_fd;
    return 0;
}

static int counters_parse(const char *json_text, struct sandbox_net_counters *out, char *err,
                          size_t errlen)
{
    json_error_t jerr;
    json_t *root = json_loads(json_text, 0, &jerr);
    if (!root) {
        snprintf(err, errlen, "nft counters: bad JSON: %s", jerr.text);
        return -1;
    }
    json_t *items = json_object_get(root, "nftables"), *item;
    size_t i;
    json_array_foreach(items, i, item) {
        json_t *counter = json_object_get(item, "counter");
        const char *name = json_string_value(json_object_get(counter, "name"));
        uint64_t packets = (uint64_t)json_integer_value(json_object_get(counter, "packets"));
        if (!name)
            continue;
        if (strcmp(name, "dropped_udp") == 0)
            out->dropped_udp = packets;
        else if (strcmp(name, "dropped_icmp") == 0)
            out->dropped_icmp = packets;
        else if (strcmp(name, "dropped_ipv6") == 0)
            out->dropped_ipv6 = packets;
        else if (strcmp(name, "dropped_other") == 0)
            out->dropped_other = packets;
        else if (strcmp(name, "dropped_spoofed") == 0)
            out->dropped_spoofed = packets;
    }
    json_decref(root);
    return 0;
}

static int net_read_counters(void *arg)
{
    struct net_job *job = arg;
    char *json_text = NULL;
    if (nft_run("list counters table inet " NFT_TABLE, true, &json_text, job->err,
                sizeof(job->err)) < 0)
        return -1;
    int rc = counters_parse(json_text, &job->counters, job->err, sizeof(job->err));
    free(json_text);
    return rc;
}

int sandbox_net_counters(const char *sandbox_id, struct sandbox_net_counters *out, char *err,
                         size_t errlen)
{
    char path[256];
    if (sandbox_net_netns_path(sandbox_id, path, sizeof(path)) < 0) {
        snprintf(err, errlen, "sandbox id too long: %s", sandbox_id);
        return -1;
    }
    struct net_job job = { 0 };
    if (netns_run(path, net_read_counters, &job, err, errlen) < 0) {
        if (job.err[0])
            snprintf(err, errlen, "%s", job.err);
        return -1;
    }
    *out = job.counters;
    return 0;
}

/* A persistent TAP would survive as long as the namespace does, and the
 * namespace may outlive its name (a late egress socket): delete it now. */
static int net_delete_tap(void *arg)
{
    struct net_job *job = arg;
    struct rtnl_link *link = NULL;
    int rc = -1;
    struct nl_sock *sk = nl_socket_alloc();
    if (!sk) {
        snprintf(job->err, sizeof(job->err), "nl_socket_alloc failed");
        return -1;
    }
    int nrc = nl_connect(sk, NETLINK_ROUTE);
    if (nrc < 0)
        goto nl_fail;
    nrc = rtnl_link_get_kernel(sk, 0, SANDBOX_NET_TAP_NAME, &link);
    if (nrc == -NLE_OBJ_NOTFOUND || nrc == -NLE_NODEV) {
        rc = 0;
        goto out;
    }
    if (nrc < 0)
        goto nl_fail;
    nrc = rtnl_link_delete(sk, link);
    if (nrc < 0)
        goto nl_fail;
    rc = 0;
    goto out;
nl_fail:
    snprintf(job->err, sizeof(job->err), "delete %s: %s", SANDBOX_NET_TAP_NAME, nl_geterror(nrc));
out:
    rtnl_link_put(link);
    nl_socket_free(sk);
    return rc;
}

int sandbox_net_delete(const char *sandbox_id, char *err, size_t errlen)
{
    char name[128], path[256];
    if (sandbox_net_ns_name(sandbox_id, name, sizeof(name)) < 0 ||
        netns_path(name, path, sizeof(path)) < 0) {
        snprintf(err, errlen, "sandbox id too long: %s", sandbox_id);
        return -1;
    }
    if (access(path, F_OK) < 0 && errno == ENOENT)
        return 0;
    struct net_job job = { 0 };
    if (netns_run(path, net_delete_tap, &job, err, errlen) < 0) {
        if (job.err[0])
            snprintf(err, errlen, "%s", job.err);
        return -1;
    }
    return netns_delete(name, err, errlen);
}
