/* common/http_client (libcurl) against a small HTTP server on 127.0.0.1 in
 * a thread of the test: what decides whether the next request on a kept
 * connection (http_conn) reuses it, the retry when the server closed an
 * idle one, a streamed answer read while the server still writes it (SSE),
 * a read another thread cancels, and a body streamed from a file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
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
    ANSWER_STREAM,      /* one SSE line, the next once the client took it */
    ANSWER_STALL,       /* a head and a line, then nothing until the client left */
    ANSWER_ECHO_SIZE,   /* reads the request body, answers its length */
};

struct test_server {
    int listen_fd;
    uint16_t port;
    pthread_t thread;
    const enum answer_kind *script;
    size_t n_script;
    int accepted; /* connections accepted */
    int served;   /* requests answered */
    int line_taken[2]; /* ANSWER_STREAM: the client read the first line */
};

/* Reads one request head into buf. 0, or -1 at EOF. */
static int read_request(int fd, char *buf, size_t cap)
{
    size_t len = 0;
    while (len < cap - 1) {
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

/* Reads the request's body (Content-Length of head) and answers how many
 * bytes came. */
static void echo_size(int fd, const char *head)
{
    const char *cl = strcasestr(head, "Content-Length:");
    long want = cl ? strtol(cl + 15, NULL, 10) : 0, got = 0;
    if (strcasestr(head, "Expect: 100-continue"))
        write_str(fd, "HTTP/1.1 100 Continue\r\n\r\n");
    char buf[4096];
    ssize_t n;
    while (got < want && (n = read(fd, buf, sizeof(buf))) > 0)
        got += n;
    char answer[128], body[32];
    snprintf(body, sizeof(body), "%ld", got);
    snprintf(answer, sizeof(answer), "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n%s",
             strlen(body), body);
    write_str(fd, answer);
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
        char head[4096];
        while (open && step < srv->n_script && read_request(fd, head, sizeof(head)) == 0) {
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
            case ANSWER_STREAM: {
                write_str(fd, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n"
                              "data: 1\n");
                char c;
                if (read(srv->line_taken[0], &c, 1) == 1)
                    write_str(fd, "data: 2\n");
                srv->served++;
                open = false;
                break;
            }
            case ANSWER_STALL: {
                write_str(fd, "HTTP/1.1 200 OK\r\n\r\ndata: 1\n");
                char c;
                while (read(fd, &c, 1) > 0) /* until the client closes */
                    ;
                srv->served++;
                open = false;
                break;
            }
            case ANSWER_ECHO_SIZE:
                echo_size(fd, head);
                srv->served++;
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
    assert_int_equal(pipe(srv->line_taken), 0);
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
    close(srv->line_taken[0]);
    close(srv->line_taken[1]);
}

static void target_of(const struct test_server *srv, struct http_target *t)
{
    char url[64], err[256];
    snprintf(url, sizeof(url), "http://127.0.0.1:%u/", srv->port);
    assert_int_equal(http_target_parse(url, t, err, sizeof(err)), 0);
}

/* GET / on conn; returns the status, the body in body (3 bytes). */
static int get(struct test_server *srv, struct http_conn *conn, char body[3])
{
    struct http_target t;
    target_of(srv, &t);
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
    struct http_conn conn = { 0 };
    char body[3];
    for (int i = 0; i < 3; i++) {
        assert_int_equal(get(&srv, &conn, body), 200);
        assert_string_equal(body, "ok");
    }
    http_conn_close(&conn);
    assert_null(conn.multi);
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
    struct http_conn conn = { 0 };
    char body[3];
    assert_int_equal(get(&srv, &conn, body), 200);
    assert_int_equal(get(&srv, &conn, body), 200);
    assert_string_equal(body, "ok");
    assert_int_equal(get(&srv, &conn, body), 200);
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
    struct http_conn conn = { 0 };
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
    struct http_conn conn = { 0 };
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
    struct http_conn conn = { 0 };
    char body[3];
    assert_int_equal(get(&srv, &conn, body), -1);
    http_conn_close(&conn);
    server_stop(&srv);
    assert_int_equal(srv.accepted, 1);
}

/* An SSE answer is read line by line while the server still writes it:
 * the server sends its second line only once the client took the first. */
static void test_streamed_answer_reads_before_its_end(void **state)
{
    (void)state;
    static const enum answer_kind script[] = { ANSWER_STREAM };
    struct test_server srv;
    server_start(&srv, script, 1);
    struct http_target t;
    target_of(&srv, &t);
    struct http_request req = { .method = "GET", .path = "/events", .body_fd = -1 };
    struct http_response resp;
    char err[256];
    assert_int_equal(http_send(&t, &req, &resp, err, sizeof(err)), 0);
    assert_int_equal(resp.status, 200);
    struct strbuf line = { 0 };
    assert_int_equal(http_read_line(&resp, &line), 1);
    assert_string_equal(strbuf_str(&line), "data: 1");
    assert_int_equal(write(srv.line_taken[1], "x", 1), 1);
    assert_int_equal(http_read_line(&resp, &line), 1);
    assert_string_equal(strbuf_str(&line), "data: 2");
    assert_int_equal(http_read_line(&resp, &line), 0); /* the server closed: the end */
    strbuf_free(&line);
    http_close(&resp);
    server_stop(&srv);
}

struct canceller {
    struct http_response *resp;
    pthread_t thread;
};

static void *cancel_soon(void *arg)
{
    struct canceller *c = arg;
    usleep(100 * 1000);
    http_cancel(c->resp);
    return NULL;
}

/* A read waiting for a stream that has nothing more to say ends when
 * another thread cancels it (airlock shell's hang-up). */
static void test_cancel_ends_a_waiting_read(void **state)
{
    (void)state;
    static const enum answer_kind script[] = { ANSWER_STALL };
    struct test_server srv;
    server_start(&srv, script, 1);
    struct http_target t;
    target_of(&srv, &t);
    struct http_request req = { .method = "GET", .path = "/", .body_fd = -1 };
    struct http_response resp;
    char err[256];
    assert_int_equal(http_send(&t, &req, &resp, err, sizeof(err)), 0);
    struct strbuf line = { 0 };
    assert_int_equal(http_read_line(&resp, &line), 1);
    struct canceller c = { .resp = &resp };
    assert_int_equal(pthread_create(&c.thread, NULL, cancel_soon, &c), 0);
    assert_int_equal(http_read_line(&resp, &line), -1);
    pthread_join(c.thread, NULL);
    strbuf_free(&line);
    http_close(&resp); /* closes the connection: the server's read ends */
    server_stop(&srv);
    assert_int_equal(srv.served, 1);
}

/* A body streamed from a file arrives whole, larger than any one buffer. */
static void test_body_streams_from_a_file(void **state)
{
    (void)state;
    static const enum answer_kind script[] = { ANSWER_ECHO_SIZE };
    struct test_server srv;
    server_start(&srv, script, 1);
    struct http_target t;
    target_of(&srv, &t);
    FILE *f = tmpfile();
    assert_non_null(f);
    static char block[65536];
    memset(block, 'a', sizeof(block));
    for (int i = 0; i < 10; i++)
        assert_int_equal(fwrite(block, 1, sizeof(block), f), sizeof(block));
    assert_int_equal(fflush(f), 0);
    int fd = fileno(f);
    assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
    struct http_request req = { .method = "PUT", .path = "/file", .body_len = 10 * sizeof(block),
                                .body_fd = fd };
    struct http_response resp;
    char err[256];
    assert_int_equal(http_send(&t, &req, &resp, err, sizeof(err)), 0);
    struct strbuf answer = { 0 };
    assert_int_equal(http_read_all(&resp, &answer), 0);
    assert_string_equal(strbuf_str(&answer), "655360");
    strbuf_free(&answer);
    http_close(&resp);
    fclose(f);
    server_stop(&srv);
}

/* http and https URLs, with or without port and trailing "/"; nothing else. */
static void test_target_parse(void **state)
{
    (void)state;
    struct http_target t;
    char err[256];
    assert_int_equal(http_target_parse("https://gw.example:8443/", &t, err, sizeof(err)), 0);
    assert_string_equal(t.base, "https://gw.example:8443");
    assert_null(t.ca_file);
    assert_int_equal(http_target_parse("http://127.0.0.1", &t, err, sizeof(err)), 0);
    assert_string_equal(t.base, "http://127.0.0.1");
    assert_int_equal(http_target_parse("ftp://127.0.0.1", &t, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "http:// and https://"));
    assert_int_equal(http_target_parse("https://host:99999", &t, err, sizeof(err)), -1);
    assert_int_equal(http_target_parse("https://host/v1", &t, err, sizeof(err)), -1);
    assert_int_equal(http_target_parse("https://:80", &t, err, sizeof(err)), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kept_connection_is_reused),
        cmocka_unit_test(test_server_close_means_new_connection),
        cmocka_unit_test(test_chunked_answer_is_read_to_its_end),
        cmocka_unit_test(test_idle_close_is_retried_once),
        cmocka_unit_test(test_no_answer_on_new_connection_fails),
        cmocka_unit_test(test_streamed_answer_reads_before_its_end),
        cmocka_unit_test(test_cancel_ends_a_waiting_read),
        cmocka_unit_test(test_body_streams_from_a_file),
        cmocka_unit_test(test_target_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
