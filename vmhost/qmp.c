#include "qmp.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "clock.h"
#include "vm_socket.h"

static void copy_string(char *dst, size_t dstlen, json_t *value)
{
    snprintf(dst, dstlen, "%s", json_is_string(value) ? json_string_value(value) : "");
}

static enum qmp_msg_type invalid(struct qmp_msg *out, const char *why)
{
    json_decref(out->value);
    out->value = NULL;
    out->type = QMP_MSG_INVALID;
    snprintf(out->error_desc, sizeof(out->error_desc), "%s", why);
    return QMP_MSG_INVALID;
}

enum qmp_msg_type qmp_parse_line(const char *line, size_t len, struct qmp_msg *out)
{
    memset(out, 0, sizeof(*out));
    if (len > QMP_LINE_MAX)
        return invalid(out, "line longer than QMP_LINE_MAX");
    json_error_t jerr;
    json_t *root = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        char why[256];
        snprintf(why, sizeof(why), "not JSON: %s", jerr.text);
        return invalid(out, why);
    }
    if (!json_is_object(root)) {
        json_decref(root);
        return invalid(out, "not a JSON object");
    }
    copy_string(out->id, sizeof(out->id), json_object_get(root, "id"));

    json_t *v;
    if ((v = json_object_get(root, "QMP"))) {
        if (json_is_object(v))
            out->type = QMP_MSG_GREETING;
        else
            invalid(out, "\"QMP\" is not an object");
    } else if ((v = json_object_get(root, "return"))) {
        out->type = QMP_MSG_RETURN;
        out->value = json_incref(v);
    } else if ((v = json_object_get(root, "error"))) {
        json_t *cls = json_object_get(v, "class"), *desc = json_object_get(v, "desc");
        if (!json_is_object(v) || !json_is_string(cls) || !json_is_string(desc)) {
            invalid(out, "\"error\" lacks string \"class\" and \"desc\"");
        } else {
            out->type = QMP_MSG_ERROR;
            copy_string(out->error_class, sizeof(out->error_class), cls);
            copy_string(out->error_desc, sizeof(out->error_desc), desc);
        }
    } else if ((v = json_object_get(root, "event"))) {
        if (!json_is_string(v)) {
            invalid(out, "\"event\" is not a string");
        } else {
            out->type = QMP_MSG_EVENT;
            copy_string(out->event, sizeof(out->event), v);
            json_t *data = json_object_get(root, "data");
            out->value = data ? json_incref(data) : NULL;
        }
    } else {
        invalid(out, "object has none of QMP, return, error, event");
    }
    json_decref(root);
    return out->type;
}

void qmp_msg_clear(struct qmp_msg *m)
{
    json_decref(m->value);
    m->value = NULL;
}

/* Takes the next complete line out of the buffer into a malloc'd string,
 * reading from the socket until one arrives or the deadline passes. */
static int read_line(struct qmp_client *c, long long deadline, char **line, size_t *linelen,
                     char *err, size_t errlen)
{
    for (;;) {
        char *nl = c->len ? memchr(c->buf, '\n', c->len) : NULL;
        if (nl) {
            *linelen = (size_t)(nl - c->buf);
            *line = malloc(*linelen + 1);
            if (!*line) {
                snprintf(err, errlen, "QMP: out of memory");
                return -1;
            }
            memcpy(*line, c->buf, *linelen);
            (*line)[*linelen] = '\0';
            c->len -= *linelen + 1;
            memmove(c->buf, nl + 1, c->len);
            return 0;
        }
        if (c->len > QMP_LINE_MAX) {
            snprintf(err, errlen, "QMP: line longer than %u bytes", QMP_LINE_MAX);
            return -1;
        }
        if (c->cap - c->len < 4096) {
            size_t cap = c->cap ? c->cap * 2 : 8192;
            char *bigger = realloc(c->buf, cap);
            if (!bigger) {
                snprintf(err, errlen, "QMP: out of memory");
                return -1;
            }
            c->buf = bigger;
            c->cap = cap;
        }
        long long left = deadline - clock_monotonic_ms();
        if (left <= 0) {
            snprintf(err, errlen, "QMP: no answer within the timeout");
            return -1;
        }
        struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
        int pr = poll(&pfd, 1, (int)left);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr < 0) {
            snprintf(err, errlen, "QMP: poll: %s", strerror(errno));
            return -1;
        }
        if (pr == 0)
            continue; /* the deadline check above reports it */
        ssize_t n = recv(c->fd, c->buf + c->len, c->cap - c->len, 0);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n < 0) {
            snprintf(err, errlen, "QMP: recv: %s", strerror(errno));
            return -1;
        }
        if (n == 0) {
            snprintf(err, errlen, "QMP: QEMU closed the connection");
            return -1;
        }
        c->len += (size_t)n;
    }
}

/* Reads and parses the next message; anything that is not QMP is an error. */
static int read_one(struct qmp_client *c, long long deadline, struct qmp_msg *m, char *err,
                    size_t errlen)
{
    char *line = NULL;
    size_t len;
    if (read_line(c, deadline, &line, &len, err, errlen) < 0)
        return -1;
    enum qmp_msg_type t = qmp_parse_line(line, len, m);
    free(line);
    if (t == QMP_MSG_INVALID) {
        snprintf(err, errlen, "QMP: unexpected message from QEMU: %s", m->error_desc);
        qmp_msg_clear(m);
        return -1;
    }
    if (t == QMP_MSG_EVENT && c->on_event)
        c->on_event(c->event_arg, m->event, m->value);
    return 0;
}

/* Reads until a message other than an event arrives, passing events on. */
static int read_message(struct qmp_client *c, long long deadline, struct qmp_msg *m, char *err,
                        size_t errlen)
{
    for (;;) {
        if (read_one(c, deadline, m, err, errlen) < 0)
            return -1;
        if (m->type != QMP_MSG_EVENT)
            return 0;
        qmp_msg_clear(m);
    }
}

static int send_all(int fd, const char *data, size_t len, char *err, size_t errlen)
{
    while (len > 0) {
        ssize_t n = send(fd, data, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            snprintf(err, errlen, "QMP: send: %s", strerror(errno));
            return -1;
        }
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

/* The first byte carries fd as SCM_RIGHTS; the rest goes as usual. */
static int send_with_fd(int sock, const char *data, size_t len, int fd, char *err, size_t errlen)
{
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } ctl = { 0 };
    struct iovec iov = { .iov_base = (void *)data, .iov_len = 1 };
    struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
                          .msg_controllen = sizeof(ctl.buf) };
    struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cm), &fd, sizeof(int));
    ssize_t n;
    while ((n = sendmsg(sock, &msg, MSG_NOSIGNAL)) < 0 && errno == EINTR)
        ;
    if (n < 0) {
        snprintf(err, errlen, "QMP: sendmsg: %s", strerror(errno));
        return -1;
    }
    return send_all(sock, data + 1, len - 1, err, errlen);
}

int qmp_execute(struct qmp_client *c, const char *command, json_t *arguments, json_t **ret,
                int timeout_ms, char *err, size_t errlen)
{
    return qmp_execute_fd(c, command, arguments, -1, ret, timeout_ms, err, errlen);
}

int qmp_execute_fd(struct qmp_client *c, const char *command, json_t *arguments, int fd,
                   json_t **ret, int timeout_ms, char *err, size_t errlen)
{
    if (ret)
        *ret = NULL;
    if (c->fd < 0) {
        snprintf(err, errlen, "QMP: not connected");
        return -1;
    }
    char id[32];
    snprintf(id, sizeof(id), "airlock-%u", ++c->next_id);
    json_t *req = json_pack("{s:s, s:s}", "execute", command, "id", id);
    if (req && arguments)
        json_object_set(req, "arguments", arguments);
    char *text = req ? json_dumps(req, JSON_COMPACT) : NULL;
    json_decref(req);
    if (!text) {
        snprintf(err, errlen, "QMP: cannot encode command %s", command);
        return -1;
    }
    int rc = fd >= 0 ? send_with_fd(c->fd, text, strlen(text), fd, err, errlen)
                     : send_all(c->fd, text, strlen(text), err, errlen);
    if (rc == 0)
        rc = send_all(c->fd, "\n", 1, err, errlen);
    free(text);
    if (rc < 0)
        return -1;

    long long deadline = clock_monotonic_ms() + timeout_ms;
    for (;;) {
        struct qmp_msg m;
        if (read_message(c, deadline, &m, err, errlen) < 0)
            return -1;
        if (strcmp(m.id, id) != 0) { /* a late answer to an earlier, timed-out command */
            qmp_msg_clear(&m);
            continue;
        }
        if (m.type == QMP_MSG_ERROR) {
            snprintf(err, errlen, "QMP %s: %s: %s", command, m.error_class, m.error_desc);
            qmp_msg_clear(&m);
            return -1;
        }
        if (m.type != QMP_MSG_RETURN) {
            snprintf(err, errlen, "QMP %s: unexpected greeting", command);
            qmp_msg_clear(&m);
            return -1;
        }
        if (ret) {
            *ret = m.value;
            m.value = NULL;
        }
        qmp_msg_clear(&m);
        return 0;
    }
}

int qmp_wait_event(struct qmp_client *c, int timeout_ms, char *err, size_t errlen)
{
    if (c->fd < 0) {
        snprintf(err, errlen, "QMP: not connected");
        return -1;
    }
    long long deadline = clock_monotonic_ms() + timeout_ms;
    for (;;) {
        struct qmp_msg m;
        if (read_one(c, deadline, &m, err, errlen) < 0)
            return -1;
        bool event = m.type == QMP_MSG_EVENT;
        qmp_msg_clear(&m); /* answers to earlier, timed-out commands */
        if (event)
            return 0;
    }
}

int qmp_connect(struct qmp_client *c, const char *socket_path, qmp_event_fn on_event,
                void *event_arg, int timeout_ms, char *err, size_t errlen)
{
    *c = (struct qmp_client){ .fd = -1, .on_event = on_event, .event_arg = event_arg };
    char why[512];
    c->fd = vm_socket_connect(socket_path, why, sizeof(why));
    if (c->fd < 0) {
        snprintf(err, errlen, "QMP connect %s", why);
        goto fail;
    }
    long long deadline = clock_monotonic_ms() + timeout_ms;
    struct qmp_msg m;
    if (read_message(c, deadline, &m, err, errlen) < 0)
        goto fail;
    bool greeting = m.type == QMP_MSG_GREETING;
    qmp_msg_clear(&m);
    if (!greeting) {
        snprintf(err, errlen, "QMP %s: expected a greeting", socket_path);
        goto fail;
    }
    long long left = deadline - clock_monotonic_ms();
    if (qmp_execute(c, "qmp_capabilities", NULL, NULL, left > 0 ? (int)left : 1, err, errlen) <
        0)
        goto fail;
    return 0;
fail:
    qmp_close(c);
    return -1;
}

void qmp_close(struct qmp_client *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    free(c->buf);
    c->buf = NULL;
    c->len = c->cap = 0;
}
