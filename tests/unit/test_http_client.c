/* common/http_client's kept connections (http_conn) against a small HTTP
 * server on 127.0.0.1 in a thread of the test: what decides whether the
 * next request reuses the connection, and the retry when the server
 * closed an idle one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "http_client.h"

/* What the server answers to each request, in turn. */
enum answer_kind {
    ANSWER_KEEP,        /* 200 with Content-Length, connection kept */
    ANSWER_CLOSE,       /* the same with "Connection: close", then closes */
    ANSWER_UNTIL_CLOSE, /* body without length: ends when the connection does */
    ANSWER_CHUNKED,     /* chunked, its final empty line a moment after the rest */
    ANSWER_HANG_UP,     /* reads the request, closes without answering */
};

struct test_server {
    int listen_fd;
    uint16_t port;
    pthread_t thread;
    const enum answer_kind *script;
    size_t n_script;
    int accepted; /* connections accepted */
    int served;   /* requests answered */
};

/* Reads one request head (the tests send no body). 0, or -1 at EOF. */
static int read_request(int fd)
{
    char buf[4096];
    size_t len = 0;
    while (len < sizeof(buf) - 1) {
        ssize_t n = read(fd, buf + len, 1);
        if (n <= 0)
            return -1;
        len += (size_t)n;
        buf[len] = '\0';
        if (strstr(buf, "\r\n\r\n"))
            return 0;
    }
    return -1;
}

/* No cmocka assertion here: this runs in the server's thread. A short
 * write shows up as the client's failure. */
static void write_str(int fd, const char *s)
{
    if (send(fd, s, strlen(s), MSG_NOSIGNAL) < 0)
        perror("test server: send");
}

static void *server_main(void *arg)
{
    struct test_server *srv = arg;
    size_t step = 0;
    while (step < srv->n_script) {
        int fd = accept(srv->listen_fd, NULL, NULL);
        if (fd < 0)
            break;
        srv->accepted++;
        bool open = true;
        while (open && step < srv->n_script && read_request(fd) == 0) {
            switch (srv->script[step++]) {
            case ANSWER_KEEP:
                write_str(fd, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
                srv->served++;
                break;
            case ANSWER_CLOSE:
                write_str(fd, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok");
                srv->served++;
                open = false;
                break;
            case ANSWER_UNTIL_CLOSE:
                write_str(fd, "HTTP/1.1 200 OK\r\n\r\nok");
                srv->served++;
                open = false;
                break;
            case ANSWER_CHUNKED:
                write_str(fd, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                              "2\r\nok\r\n0\r\n");
                usleep(20 * 1000);
                write_str(fd, "\r\n");
                srv->served++;
                break;
            case ANSWER_HANG_UP:
                open = false;
                break;
            }
        }
        close(fd);
    }
    return NULL;
}

static void server_start(struct test_server *srv, const enum answer_kind *script, size_t n)
{
    memset(srv, 0, sizeof(*srv));
    srv->script = script;
    srv->n_script = n;
    srv->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(srv->listen_fd >= 0);
    struct sockaddr_in addr = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof(addr);
    assert_int_equal(bind(srv->listen_fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
    assert_int_equal(listen(srv->listen_fd, 8), 0);
    assert_int_equal(getsockname(srv->listen_fd, (struct sockaddr *)&addr, &len), 0);
    srv->port = ntohs(addr.sin_port);
    assert_int_equal(pthread_create(&srv->thread, NULL, server_main, srv), 0);
}

/* Waits for the server to finish its script. */
static void server_stop(struct test_server *srv)
{
    pthread_join(srv->thread, NULL);
    close(srv->listen_fd);
}

/* GET / on conn; returns the status, the body in body (3 bytes). */
static int get(struct test_server *srv, struct http_conn *conn, char body[3])
{
    struct http_target t = { .port = srv->port };
    snprintf(t.host, sizeof(t.host), "127.0.0.1");
    struct http_request req = { .method = "GET", .path = "/", .body_fd = -1 };
    struct http_response resp;
    char err[256];
    if (http_send_on(conn, &t, &req, &resp, err, sizeof(err)) < 0)
        return -1;
    ssize_t n = http_read_body(&resp, body, 2);
    body[n > 0 ? n : 0] = '\0';
    char extra;
    assert_int_equal(http_read_body(&resp, &extra, 1), 0); /* the end of the body */
    http_close(&resp);
    return resp.status;
}

/* Three answers with a length: one connection for all three. */
static void test_kept_connection_is_reused(void **state)
{
    (void)state;
    static const enum answer_kind script[] = { ANSWER_KEEP, ANSWER_KEEP, ANSWER_KEEP };
    struct test_server srv;
    server_start(&srv, script, 3);
    struct http_conn conn = { .fd = -1 };
    char body[3];
    for (int i = 0; i < 3; i++) {
        assert_int_equal(get(&srv, &conn, body), 200);
        assert_string_equal(body, "ok");
        assert_true(conn.fd >= 0);
    }
    http_conn_close(&conn);
    assert_int_equal(conn.fd, -1);
    server_stop(&srv);
    assert_int_equal(srv.accepted, 1);
    assert_int_equal(srv.served, 3);
}

/* "Connection: close" and a body that ends with the connection: the next
 * request opens a new one. */
static void test_server_close_means_new_connection(void **state)
{
    (void)state;
    static const enum answer_kind script[] = { ANSWER_CLOSE, ANSWER_UNTIL_CLOSE, ANSWER_KEEP };
    struct test_server srv;
    server_start(&srv, script, 3);
    struct http_conn conn = { .fd = -1 };
    char body[3];
    assert_int_equal(get(&srv, &conn, body), 200);
    assert_int_equal(conn.fd, -1);
    assert_int_equal(get(&srv, &conn, body), 200);
    assert_string_equal(body, "ok");
    assert_int_equal(conn.fd, -1);
    assert_int_equal(get(&srv, &conn, body), 200);
    assert_true(conn.fd >= 0);
    http_conn_close(&conn);
    server_stop(&srv);
    assert_int_equal(srv.accepted, 3);
}

/* A chunked answer whose last empty line comes late: read to its end, so
 * the next answer on the connection parses. */
static void test_chunked_answer_is_read_to_its_end(void **state)
{
    (void)state;
    static const enum answer_kind script[] = { ANSWER_CHUNKED, ANSWER_KEEP };
    struct test_server srv;
    server_start(&srv, script, 2);
    struct http_conn conn = { .fd = -1 };
    char body[3];
    assert_int_equal(get(&srv, &conn, body), 200);
    assert_string_equal(body, "ok");
    assert_int_equal(get(&srv, &conn, body), 200);
    assert_string_equal(body, "ok");
    http_conn_close(&conn);
    server_stop(&srv);
    assert_int_equal(srv.accepted, 1);
}

/* The server drops a kept connection without answering: the request is
 * sent once more on a new connection, and answered there. */
static void test_idle_close_is_retried_once(void **state)
{
    (void)state;
    static const enum answer_kind script[] = { ANSWER_KEEP, ANSWER_HANG_UP, ANSWER_KEEP };
    struct test_server srv;
    server_start(&srv, script, 3);
    struct http_conn conn = { .fd = -1 };
    char body[3];
    assert_int_equal(get(&srv, &conn, body), 200);
    assert_int_equal(get(&srv, &conn, body), 200);
    assert_string_equal(body, "ok");
    http_conn_close(&conn);
    server_stop(&srv);
    assert_int_equal(srv.accepted, 2);
    assert_int_equal(srv.served, 2);
}

/* A new connection that gets no answer is an error, not a retry loop. */
static void test_no_answer_on_new_connection_fails(void **state)
{
    (void)state;
    static const enum answer_kind script[] = { ANSWER_HANG_UP };
    struct test_server srv;
    server_start(&srv, script, 1);
    struct http_conn conn = { .fd = -1 };
    char body[3];
    assert_int_equal(get(&srv, &conn, body), -1);
    assert_int_equal(conn.fd, -1);
    server_stop(&srv);
    assert_int_equal(srv.accepted, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kept_connection_is_reused),
        cmocka_unit_test(test_server_close_means_new_connection),
        cmocka_unit_test(test_chunked_answer_is_read_to_its_end),
        cmocka_unit_test(test_idle_close_is_retried_once),
        cmocka_unit_test(test_no_answer_on_new_connection_fails),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
