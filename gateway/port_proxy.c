#include "port_proxy.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "fsutil.h"
#include "gateway.h"
#include "http_head.h"
#include "log.h"
#include "port_access.h"
#include "reply.h"
#include "rpc_err.h"
#include "sandbox_access.h"
#include "scheduler.pb-c.h"
#include "vmhost.pb-c.h"

#define RELAY_CHUNK (64u << 10)
/* The head of a request is read again here (the ingress peeked at it). */
#define HEAD_MAX (16u << 10)
/* How long an error answer waits for the client's unread bytes before
 * closing (closing with bytes unread would reset the connection and
 * could lose the answer). */
#define LINGER_MS 1000

struct relay {
    struct relay *next;
    struct gateway *gw;
    struct port_relays *relays;
    int fd;
    struct port_target target;
    char invalid_why[256];
    struct rpc_stream *stream; /* under relays->mu while registered */
};

struct port_relays {
    pthread_mutex_t mu;
    pthread_cond_t idle;
    struct relay *list;
    unsigned n, max;
    bool stopping;
    void (*on_end)(void *arg);
    void *on_end_arg;
};

struct port_relays *port_relays_new(unsigned max, void (*on_end)(void *arg), void *arg)
{
    struct port_relays *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->idle, NULL);
    r->max = max;
    r->on_end = on_end;
    r->on_end_arg = arg;
    return r;
}

void port_relays_stop(struct port_relays *r)
{
    if (!r)
        return;
    pthread_mutex_lock(&r->mu);
    r->stopping = true;
    for (struct relay *c = r->list; c; c = c->next) {
        if (c->stream)
            rpc_stream_cancel(c->stream);
        shutdown(c->fd, SHUT_RDWR);
    }
    while (r->n)
        pthread_cond_wait(&r->idle, &r->mu);
    pthread_mutex_unlock(&r->mu);
    pthread_mutex_destroy(&r->mu);
    pthread_cond_destroy(&r->idle);
    free(r);
}

/* Our answer is the last thing on this connection: send it, stop
 * sending, and read what the client still sends for a moment so the close
 * does not reset the connection before the answer is read. */
static void answer_and_close(int fd, const char *head, const char *body)
{
    fs_send_all(fd, head, strlen(head));
    if (body)
        fs_send_all(fd, body, strlen(body));
    shutdown(fd, SHUT_WR);
    int64_t until = clock_monotonic_ms() + LINGER_MS;
    char sink[4096];
    for (int64_t now; (now = clock_monotonic_ms()) < until;) {
        struct pollfd p = { .fd = fd, .events = POLLIN };
        if (poll(&p, 1, (int)(until - now)) <= 0 || recv(fd, sink, sizeof(sink), 0) <= 0)
            break;
    }
}

static const char *reason(unsigned status)
{
    switch (status) {
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 409: return "Conflict";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    default: return "Internal Server Error";
    }
}

/* The API's error shape, so a client sees the same errors here. */
static void answer_error(struct relay *c, unsigned status, const char *code, const char *message)
{
    json_t *j = json_pack("{s:{s:s,s:s?}}", "error", "code", code, "message", message);
    char *body = j ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    char head[256];
    snprintf(head, sizeof(head),
             "HTTP/1.1 %u %s\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n"
             "Cache-Control: no-store\r\nConnection: close\r\n\r\n",
             status, reason(status), body ? strlen(body) : 0);
    answer_and_close(c->fd, head, body);
    free(body);
    log_info("port request refused", "sandbox=%s port=%u status=%u reason=\"%s\"",
             c->target.sandbox_id[0] ? c->target.sandbox_id : "-", c->target.port, status,
             message);
}

static void answer_airlock_error(struct relay *c, const struct airlock_error *e)
{
    const char *code;
    unsigned status = reply_http_status(e->class, &code);
    answer_error(c, status, code, e->message);
}

/* The signed URL checked: the cookie set and the same target asked for
 * again without the signature. */
static void answer_redirect(struct relay *c, const char *cookie, const char *location)
{
    char head[HEAD_MAX + 512];
    snprintf(head, sizeof(head),
             "HTTP/1.1 307 Temporary Redirect\r\nLocation: %s\r\nSet-Cookie: %s\r\n"
             "Cache-Control: no-store\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
             location, cookie);
    answer_and_close(c->fd, head, NULL);
}

/* Guest → client until the guest closes or the stream fails; then the
 * client's side is shut so the other direction ends too. */
static void *stream_to_client(void *arg)
{
    struct relay *c = arg;
    ProtobufCMessage *m;
    while (rpc_stream_recv(c->stream, &airlock__vmhost__v1__port_forward_frame__descriptor, &m) ==
           1) {
        Airlock__Vmhost__V1__PortForwardFrame *f = (void *)m;
        int rc = fs_send_all(c->fd, f->data.data, f->data.len);
        protobuf_c_message_free_unpacked(m, NULL);
        if (rc < 0) {
            rpc_stream_cancel(c->stream);
            break;
        }
    }
    shutdown(c->fd, SHUT_RDWR);
    return NULL;
}

/* Client → guest on this thread, the other way on another. */
static void relay_bytes(struct relay *c)
{
    pthread_t back;
    if (pthread_create(&back, NULL, stream_to_client, c) != 0) {
        rpc_stream_cancel(c->stream);
        return;
    }
    uint8_t *buf = malloc(RELAY_CHUNK);
    ssize_t n = -1;
    while (buf && (n = recv(c->fd, buf, RELAY_CHUNK, 0)) > 0) {
        Airlock__Vmhost__V1__PortForwardFrame f = AIRLOCK__VMHOST__V1__PORT_FORWARD_FRAME__INIT;
        f.data.data = buf;
        f.data.len = (size_t)n;
        if (rpc_stream_send(c->stream, &f.base) < 0)
            break;
    }
    if (n == 0)
        rpc_stream_close_send(c->stream); /* the client is done sending; answers may follow */
    else
        rpc_stream_cancel(c->stream);
    free(buf);
    pthread_join(back, NULL);
}

/* What vmhost's refusal to connect means to the client. */
static void answer_forward_refused(struct relay *c, grpc_status_code st, const char *details)
{
    if (st == GRPC_STATUS_UNAVAILABLE) {
        answer_error(c, 502, "port_unreachable", details);
        return;
    }
    struct airlock_error e;
    airlock_error_from_status(&e, st, details);
    answer_airlock_error(c, &e);
}

/* Opens PortForward and waits for vmhost's "connected"; 0 with
 * c->stream registered, or -1 after answering the client. */
static int open_forward(struct relay *c, struct rpc_channel *ch)
{
    struct rpc_stream *s = rpc_stream_open(ch, VMHOST_METHOD("PortForward"), 0);
    if (!s) {
        answer_error(c, 503, "unavailable", "out of memory");
        return -1;
    }
    pthread_mutex_lock(&c->relays->mu);
    c->stream = s;
    bool stopping = c->relays->stopping;
    pthread_mutex_unlock(&c->relays->mu);
    Airlock__Vmhost__V1__PortForwardFrame open = AIRLOCK__VMHOST__V1__PORT_FORWARD_FRAME__INIT;
    open.sandbox_id = c->target.sandbox_id;
    open.port = c->target.port;
    ProtobufCMessage *connected = NULL;
    if (!stopping && rpc_stream_send(s, &open.base) == 0 &&
        rpc_stream_recv(s, &airlock__vmhost__v1__port_forward_frame__descriptor, &connected) == 1) {
        protobuf_c_message_free_unpacked(connected, NULL);
        return 0;
    }
    pthread_mutex_lock(&c->relays->mu);
    c->stream = NULL;
    pthread_mutex_unlock(&c->relays->mu);
    if (stopping)
        rpc_stream_cancel(s);
    char *details = NULL;
    grpc_status_code st = rpc_stream_finish(s, &details);
    if (stopping)
        answer_error(c, 503, "unavailable", "the gateway is stopping; connect again");
    else
        answer_forward_refused(c, st == GRPC_STATUS_OK ? GRPC_STATUS_UNAVAILABLE : st,
                               details ? details : "the port's relay ended before it began");
    free(details);
    return -1;
}

/* The sandbox, its state and the request's credentials; 0 when the
 * connection may go through (with the vmhost channel), else -1 after
 * answering. */
static int admit(struct relay *c, struct rpc_channel **ch)
{
    char head[HEAD_MAX];
    ssize_t n = recv(c->fd, head, sizeof(head), MSG_PEEK);
    struct http_head h;
    if (n <= 0 || http_head_parse(head, (size_t)n, &h) != HTTP_HEAD_COMPLETE) {
        answer_error(c, 400, "invalid_argument", "the request's head could not be read again");
        return -1;
    }
    struct gateway *gw = c->gw;
    Airlock__Scheduler__V1__SandboxRef ref = AIRLOCK__SCHEDULER__V1__SANDBOX_REF__INIT;
    ref.id = c->target.sandbox_id;
    Airlock__Scheduler__V1__Sandbox *sb = NULL;
    struct airlock_error e;
    int rc = gw_unary(gw->scheduler, SCHEDULER_METHOD("GetSandboxForIngress"), &ref.base,
                      &airlock__scheduler__v1__sandbox__descriptor, (ProtobufCMessage **)&sb,
                      GW_SCHEDULER_TIMEOUT_MS, &e);
    if (rc < 0) {
        answer_airlock_error(c, &e);
        return -1;
    }
    struct port_grant g = { sb->id, c->target.port, sb->public_ports, sb->traffic_token };
    char why[512], cookie[256], location[HEAD_MAX];
    enum port_access_verdict v = port_access_check(&g, &h, time(NULL), why, sizeof(why), cookie,
                                                   sizeof(cookie), location, sizeof(location));
    rc = -1;
    if (v == PORT_ACCESS_MISSING) {
        answer_error(c, 401, "unauthenticated", why);
    } else if (v == PORT_ACCESS_DENIED) {
        answer_error(c, 403, "permission_denied", why);
    } else if (v == PORT_ACCESS_SIGNED_URL) {
        answer_redirect(c, cookie, location);
    } else if (strcmp(sb->state, "running") != 0 && strcmp(sb->state, "migrating") != 0) {
        /* The documented rule: no request wakes a sandbox (a port scan
         * would cost its owner a resume); its owner resumes it. */
        snprintf(why, sizeof(why), "sandbox %s is %s: its ports answer while it runs "
                 "(POST /v1/sandboxes/%s/resume)", sb->id, sb->state, sb->id);
        answer_error(c, 409, "conflict", why);
    } else if (gw_sandbox_node_channel(gw, sb, ch, &e) < 0) {
        answer_airlock_error(c, &e);
    } else {
        rc = 0;
    }
    protobuf_c_message_free_unpacked(&sb->base, NULL);
    return rc;
}

/* Leaves the registry; the last one out wakes a stopping gateway. */
static void relay_end(struct relay *c)
{
    struct port_relays *r = c->relays;
    pthread_mutex_lock(&r->mu);
    for (struct relay **p = &r->list; *p; p = &(*p)->next)
        if (*p == c) {
            *p = c->next;
            break;
        }
    if (--r->n == 0)
        pthread_cond_broadcast(&r->idle);
    pthread_mutex_unlock(&r->mu);
    free(c);
    r->on_end(r->on_end_arg);
}

static void *relay_main(void *arg)
{
    struct relay *c = arg;
    struct rpc_channel *ch = NULL;
    int64_t started = clock_monotonic_ms();
    if (c->invalid_why[0]) {
        answer_error(c, 400, "invalid_argument", c->invalid_why);
    } else if (admit(c, &ch) == 0 && open_forward(c, ch) == 0) {
        relay_bytes(c);
        pthread_mutex_lock(&c->relays->mu);
        struct rpc_stream *s = c->stream;
        c->stream = NULL;
        pthread_mutex_unlock(&c->relays->mu);
        char *details = NULL;
        grpc_status_code st = rpc_stream_finish(s, &details);
        log_info("port connection", "sandbox=%s port=%u ms=%lld status=%s%s%s%s",
                 c->target.sandbox_id, c->target.port,
                 (long long)(clock_monotonic_ms() - started), rpc_status_name(st),
                 details ? " details=\"" : "", details ? details : "", details ? "\"" : "");
        free(details);
    }
    close(c->fd);
    relay_end(c);
    return NULL;
}

void port_proxy_start(struct gateway *gw, struct port_relays *relays, int fd,
                      const struct port_target *t, const char *invalid_why)
{
    int flags = fcntl(fd, F_GETFL);
    fcntl(fd, F_SETFL, flags & ~O_NONBLOCK); /* the relay's reads and writes block */
    int one = 1; /* bytes go on as they come: the two ends do their own batching */
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    struct relay *c = calloc(1, sizeof(*c));
    pthread_mutex_lock(&relays->mu);
    bool admitted = c && relays->n < relays->max && !relays->stopping;
    if (admitted) {
        *c = (struct relay){ .next = relays->list, .gw = gw, .relays = relays, .fd = fd,
                             .target = *t };
        snprintf(c->invalid_why, sizeof(c->invalid_why), "%s", invalid_why ? invalid_why : "");
        relays->list = c;
        relays->n++;
    }
    pthread_mutex_unlock(&relays->mu);
    pthread_t thread;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    bool started = admitted && pthread_create(&thread, &attr, relay_main, c) == 0;
    pthread_attr_destroy(&attr);
    if (started)
        return;
    /* Too many at once: the client may retry; nothing was read yet. */
    static const char busy[] = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n"
                               "Retry-After: 1\r\nConnection: close\r\n\r\n";
    fs_send_all(fd, busy, sizeof(busy) - 1);
    close(fd);
    if (admitted) {
        relay_end(c);
    } else {
        free(c);
        relays->on_end(relays->on_end_arg);
    }
}
