/* ListPorts and PortForward: a sandbox's ports from the host side
 * (docs/ports.md). PortForward dials the guest from inside the sandbox's
 * own network namespace, as the host would reach a machine on its LAN:
 * inbound traffic never passes egress, and the namespace's rules let in
 * only the answers to connections started there (sandbox_net.c). */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "fsutil.h"
#include "guest_channel.h"
#include "log.h"
#include "netns.h"
#include "sandbox_net.h"
#include "sandbox_netdefs.h"
#include "vmhost_service.h"

#define PORT_CONNECT_TIMEOUT_MS 5000
#define PORT_CHUNK (64u << 10)
/* How often a relay looks whether its sandbox is still there. */
#define PORT_ALIVE_CHECK_MS 1000
/* Connections relayed at once by this vmhost: each holds two threads. */
#define PORT_FORWARDS_MAX 1024

static atomic_uint forwards_open;

void service_list_ports(struct rpc_call *call, void *ctx)
{
    Airlock__Vmhost__V1__ListPortsRequest *req =
        (void *)rpc_call_recv_request(call, &airlock__vmhost__v1__list_ports_request__descriptor);
    if (!req)
        return;
    Airlock__Guest__V1__ListPortsRequest lp = AIRLOCK__GUEST__V1__LIST_PORTS_REQUEST__INIT;
    GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
    f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_LIST_PORTS;
    f.list_ports = &lp;
    GuestFrame *ans = service_guest_ask(call, ctx, req->sandbox_id, false, &f,
                                        AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_LISTENING_PORTS);
    if (ans) {
        Airlock__Vmhost__V1__ListPortsResponse resp =
            AIRLOCK__VMHOST__V1__LIST_PORTS_RESPONSE__INIT;
        resp.n_ports = ans->listening_ports->n_ports;
        resp.ports = ans->listening_ports->ports;
        rpc_call_reply(call, &resp.base);
    }
    frame_free(ans);
    protobuf_c_message_free_unpacked(&req->base, NULL);
}

struct guest_dial {
    uint16_t port;
    int fd;
    int err;
};

/* Runs inside the sandbox's namespace (netns_run): the socket stays
 * there. A connect that neither succeeds nor fails in time (a guest that
 * drops the SYN) is a timeout. */
static int dial_guest(void *arg)
{
    struct guest_dial *d = arg;
    d->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (d->fd < 0) {
        d->err = errno;
        return -1;
    }
    struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(d->port) };
    inet_pton(AF_INET, SANDBOX_NET_GUEST_ADDR, &to.sin_addr);
    if (connect(d->fd, (struct sockaddr *)&to, sizeof(to)) < 0 && errno != EINPROGRESS) {
        d->err = errno;
    } else {
        struct pollfd p = { .fd = d->fd, .events = POLLOUT };
        int n = poll(&p, 1, PORT_CONNECT_TIMEOUT_MS);
        socklen_t len = sizeof(d->err);
        if (n == 0)
            d->err = ETIMEDOUT;
        else if (n < 0 || getsockopt(d->fd, SOL_SOCKET, SO_ERROR, &d->err, &len) < 0)
            d->err = errno;
    }
    if (d->err) {
        close(d->fd);
        d->fd = -1;
        return -1;
    }
    int flags = fcntl(d->fd, F_GETFL);
    fcntl(d->fd, F_SETFL, flags & ~O_NONBLOCK);
    int one = 1;
    setsockopt(d->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return 0;
}

struct relay {
    struct rpc_call *call;
    struct sandbox *sb;
    struct guest_channel *ch;
    int fd;
    atomic_bool stop;
};

/* Guest → caller: until the guest closes, the call goes or the sandbox
 * does; the guest's close ends the call with OK. */
static void *guest_to_caller(void *arg)
{
    struct relay *r = arg;
    uint8_t *buf = malloc(PORT_CHUNK);
    const char *why = NULL;
    while (buf && !atomic_load(&r->stop)) {
        struct pollfd p = { .fd = r->fd, .events = POLLIN };
        int n = poll(&p, 1, PORT_ALIVE_CHECK_MS);
        if (n == 0) {
            char reason[128];
            if (rpc_call_cancelled(r->call))
                break;
            if (!guest_channel_alive(r->ch, reason, sizeof(reason))) {
                why = "the sandbox stopped";
                break;
            }
            continue;
        }
        ssize_t got = n < 0 ? -1 : read(r->fd, buf, PORT_CHUNK);
        if (got <= 0)
            break; /* the guest closed (or reset): the end of this connection */
        Airlock__Vmhost__V1__PortForwardFrame out = AIRLOCK__VMHOST__V1__PORT_FORWARD_FRAME__INIT;
        out.data.data = buf;
        out.data.len = (size_t)got;
        if (rpc_call_send(r->call, &out.base) < 0)
            break;
        sandbox_touch(r->sb);
    }
    free(buf);
    atomic_store(&r->stop, true);
    if (why)
        rpc_call_finish(r->call, GRPC_STATUS_UNAVAILABLE, why);
    else
        rpc_call_finish(r->call, GRPC_STATUS_OK, NULL);
    shutdown(r->fd, SHUT_RDWR); /* wakes nothing here, but a blocked write below */
    return NULL;
}

/* Caller → guest on the handler's thread; the other direction on a
 * thread of its own. */
static void relay_run(struct relay *r, const ProtobufCBinaryData *first)
{
    pthread_t reader;
    if (pthread_create(&reader, NULL, guest_to_caller, r) != 0) {
        rpc_call_finish(r->call, GRPC_STATUS_RESOURCE_EXHAUSTED, "cannot start a relay thread");
        return;
    }
    bool ok = !first->len || fs_send_all(r->fd, first->data, first->len) == 0;
    while (ok && !atomic_load(&r->stop)) {
        Airlock__Vmhost__V1__PortForwardFrame *in = (void *)rpc_call_recv(
            r->call, &airlock__vmhost__v1__port_forward_frame__descriptor);
        if (!in) {
            if (rpc_call_recv_status(r->call) == RPC_RECV_END)
                shutdown(r->fd, SHUT_WR); /* the caller is done sending; answers may follow */
            else
                atomic_store(&r->stop, true);
            break;
        }
        ok = fs_send_all(r->fd, in->data.data, in->data.len) == 0;
        protobuf_c_message_free_unpacked(&in->base, NULL);
        sandbox_touch(r->sb);
    }
    if (!ok || atomic_load(&r->stop))
        shutdown(r->fd, SHUT_RDWR);
    pthread_join(reader, NULL);
}

void service_port_forward(struct rpc_call *call, void *ctx)
{
    struct vmhost *vh = ctx;
    Airlock__Vmhost__V1__PortForwardFrame *open = (void *)rpc_call_recv_request(
        call, &airlock__vmhost__v1__port_forward_frame__descriptor);
    if (!open)
        return;
    struct relay r = { .call = call, .fd = -1 };
    bool counted = false;
    if (open->port == 0 || open->port > 65535) {
        rpc_call_finishf(call, GRPC_STATUS_INVALID_ARGUMENT, "port: %u is not a TCP port (1-65535)",
                         open->port);
        goto out;
    }
    if (atomic_fetch_add(&forwards_open, 1) >= PORT_FORWARDS_MAX) {
        atomic_fetch_sub(&forwards_open, 1);
        rpc_call_finishf(call, GRPC_STATUS_RESOURCE_EXHAUSTED,
                         "this node relays %d port connections already", PORT_FORWARDS_MAX);
        goto out;
    }
    counted = true;
    r.ch = service_running_sandbox(call, vh, open->sandbox_id, &r.sb);
    if (!r.ch)
        goto out;
    char ns[256], err[256];
    struct guest_dial d = { .port = (uint16_t)open->port, .fd = -1 };
    if (sandbox_net_netns_path(open->sandbox_id, ns, sizeof(ns)) < 0 ||
        netns_run(ns, dial_guest, &d, err, sizeof(err)) < 0) {
        if (d.err)
            rpc_call_finishf(call, GRPC_STATUS_UNAVAILABLE,
                             "port %u of sandbox %s: %s (nothing accepts connections there)",
                             open->port, open->sandbox_id, strerror(d.err));
        else
            rpc_call_finishf(call, GRPC_STATUS_INTERNAL, "sandbox %s's network: %s",
                             open->sandbox_id, err);
        goto out;
    }
    r.fd = d.fd;
    Airlock__Vmhost__V1__PortForwardFrame connected = AIRLOCK__VMHOST__V1__PORT_FORWARD_FRAME__INIT;
    if (rpc_call_send(call, &connected.base) < 0) {
        rpc_call_finish(call, GRPC_STATUS_CANCELLED, "the caller left");
        goto out;
    }
    relay_run(&r, &open->data);
out:
    if (r.fd >= 0)
        close(r.fd);
    service_done(r.sb, r.ch);
    if (counted)
        atomic_fetch_sub(&forwards_open, 1);
    protobuf_c_message_free_unpacked(&open->base, NULL);
}
