/* QEMU Machine Protocol client: line-delimited JSON over a unix socket.
 *
 * qmp_parse_line() classifies one line without any I/O, so the parser can
 * be tested on its own; the client on top sends commands with an id and
 * waits for the matching answer, passing events to a callback. */
#ifndef AIRLOCK_QMP_H
#define AIRLOCK_QMP_H

#include <jansson.h>
#include <stddef.h>

/* Longest line we accept from QEMU; a longer one breaks the connection. */
#define QMP_LINE_MAX (1u << 20)

enum qmp_msg_type {
    QMP_MSG_INVALID = 0,
    QMP_MSG_GREETING, /* {"QMP": {...}} */
    QMP_MSG_RETURN,   /* {"return": ..., "id": ...} */
    QMP_MSG_ERROR,    /* {"error": {"class": ..., "desc": ...}, "id": ...} */
    QMP_MSG_EVENT,    /* {"event": "STOP", "data": ..., "timestamp": ...} */
};

struct qmp_msg {
    enum qmp_msg_type type;
    char id[64];           /* "" when the message has no string id */
    char error_class[64];  /* QMP_MSG_ERROR */
    char error_desc[512];  /* QMP_MSG_ERROR; why the line is invalid for QMP_MSG_INVALID */
    char event[64];        /* QMP_MSG_EVENT */
    json_t *value;         /* the "return" value or the event's "data"; owned, may be NULL */
};

/* Parses one line (without the newline; it need not be NUL-terminated).
 * Never fails hard: anything that is not a QMP message is QMP_MSG_INVALID
 * with the reason in error_desc. Call qmp_msg_clear() afterwards. */
enum qmp_msg_type qmp_parse_line(const char *line, size_t len, struct qmp_msg *out);
void qmp_msg_clear(struct qmp_msg *m);

typedef void (*qmp_event_fn)(void *arg, const char *event, json_t *data);

struct qmp_client {
    int fd;
    unsigned next_id;
    char *buf; /* bytes received but not yet consumed */
    size_t len, cap;
    qmp_event_fn on_event;
    void *event_arg;
};

/* Connects, reads the greeting and negotiates capabilities within
 * timeout_ms. Events that arrive while waiting for answers go to on_event
 * (NULL = skipped). On failure the client is closed. */
int qmp_connect(struct qmp_client *c, const char *socket_path, qmp_event_fn on_event,
                void *event_arg, int timeout_ms, char *err, size_t errlen);

/* Runs a command (arguments may be NULL; it is not consumed) and waits up to
 * timeout_ms for its answer. On success *ret (if not NULL) gets the return
 * value (caller decrefs). A QMP error is returned as -1 with
 * "<class>: <desc>" in err. */
int qmp_execute(struct qmp_client *c, const char *command, json_t *arguments, json_t **ret,
                int timeout_ms, char *err, size_t errlen);
/* The same, passing fd (SCM_RIGHTS) with the command: for "getfd". */
int qmp_execute_fd(struct qmp_client *c, const char *command, json_t *arguments, int fd,
                   json_t **ret, int timeout_ms, char *err, size_t errlen);

/* Waits up to timeout_ms for the next event and passes it to on_event
 * (answers to earlier, timed-out commands are skipped). Returns 0 after one
 * event, -1 on timeout or a broken connection. */
int qmp_wait_event(struct qmp_client *c, int timeout_ms, char *err, size_t errlen);

void qmp_close(struct qmp_client *c);

#endif
