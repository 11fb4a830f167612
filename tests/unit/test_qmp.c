/* QMP: the line parser on good and hostile input, and the client against a
 * scripted fake QEMU on a unix socket. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "fsutil.h"
#include "qmp.h"

static enum qmp_msg_type parse(const char *line, struct qmp_msg *m)
{
    return qmp_parse_line(line, strlen(line), m);
}

static void test_greeting(void **state)
{
    (void)state;
    struct qmp_msg m;
    assert_int_equal(parse("{\"QMP\": {\"version\": {\"qemu\": {\"major\": 7}}, "
                           "\"capabilities\": [\"oob\"]}}",
                           &m),
                     QMP_MSG_GREETING);
    qmp_msg_clear(&m);
}

static void test_return_with_id(void **state)
{
    (void)state;
    struct qmp_msg m;
    assert_int_equal(parse("{\"return\": {\"status\": \"running\"}, \"id\": \"airlock-7\"}", &m),
                     QMP_MSG_RETURN);
    assert_string_equal(m.id, "airlock-7");
    assert_true(json_is_object(m.value));
    assert_string_equal(json_string_value(json_object_get(m.value, "status")), "running");
    qmp_msg_clear(&m);
    assert_null(m.value);

    /* A non-string id is not ours: kept as "". */
    assert_int_equal(parse("{\"return\": {}, \"id\": 12}", &m), QMP_MSG_RETURN);
    assert_string_equal(m.id, "");
    qmp_msg_clear(&m);
}

static void test_error(void **state)
{
    (void)state;
    struct qmp_msg m;
    assert_int_equal(parse("{\"id\": \"a\", \"error\": {\"class\": \"CommandNotFound\", "
                           "\"desc\": \"The command nope has not been found\"}}",
                           &m),
                     QMP_MSG_ERROR);
    assert_string_equal(m.error_class, "CommandNotFound");
    assert_string_equal(m.error_desc, "The command nope has not been found");
    assert_string_equal(m.id, "a");
    qmp_msg_clear(&m);
}

static void test_event(void **state)
{
    (void)state;
    struct qmp_msg m;
    assert_int_equal(parse("{\"timestamp\": {\"seconds\": 1, \"microseconds\": 2}, "
                           "\"event\": \"STOP\"}",
                           &m),
                     QMP_MSG_EVENT);
    assert_string_equal(m.event, "STOP");
    assert_null(m.value);
    qmp_msg_clear(&m);
    assert_int_equal(parse("{\"event\": \"SHUTDOWN\", \"data\": {\"guest\": true}}", &m),
                     QMP_MSG_EVENT);
    assert_true(json_is_true(json_object_get(m.value, "guest")));
    qmp_msg_clear(&m);
}

static void test_invalid_lines(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "",
        "hello",
        "{",
        "{\"return\": {",
        "{\"return\": {}} trailing",
        "[]",
        "123",
        "null",
        "\"QMP\"",
        "{\"QMP\": 1}",
        "{\"error\": \"boom\"}",
        "{\"error\": {\"class\": 1, \"desc\": \"x\"}}",
        "{\"error\": {\"class\": \"X\"}}",
        "{\"event\": 5}",
        "{\"event\": null}",
        "{\"foo\": 1}",
        "{\"return\": 1, \"return\": 2}",
        "\xff\xfe{\"return\": {}}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct qmp_msg m;
        assert_int_equal(parse(bad[i], &m), QMP_MSG_INVALID);
        assert_true(m.error_desc[0] != '\0');
        assert_null(m.value);
        qmp_msg_clear(&m);
    }
}

static void test_embedded_nul_and_huge_lines(void **state)
{
    (void)state;
    struct qmp_msg m;
    const char with_nul[] = "{\"return\": {}}\0{\"x\":1}";
    assert_int_equal(qmp_parse_line(with_nul, sizeof(with_nul) - 1, &m), QMP_MSG_INVALID);
    qmp_msg_clear(&m);

    /* Beyond the limit: rejected without parsing. */
    size_t huge = QMP_LINE_MAX + 10;
    char *line = malloc(huge);
    assert_non_null(line);
    memset(line, ' ', huge);
    line[0] = '{';
    line[huge - 1] = '}';
    assert_int_equal(qmp_parse_line(line, huge, &m), QMP_MSG_INVALID);
    assert_non_null(strstr(m.error_desc, "longer"));
    qmp_msg_clear(&m);

    /* Large but legal: a long string value parses. */
    size_t big = 512 * 1024;
    char *text = malloc(big + 64);
    assert_non_null(text);
    int n = snprintf(text, 64, "{\"return\": \"");
    memset(text + n, 'a', big);
    strcpy(text + n + big, "\"}");
    assert_int_equal(parse(text, &m), QMP_MSG_RETURN);
    assert_int_equal(json_string_length(m.value), big);
    qmp_msg_clear(&m);
    free(text);
    free(line);
}

/* --- client against a fake QEMU ------------------------------------------ */

struct fake_qemu {
    int listen_fd;
    const char *const *script; /* lines to send; "<" = read one line first */
    char received[4096];
};

static void *fake_qemu_main(void *arg)
{
    struct fake_qemu *f = arg;
    int fd = accept(f->listen_fd, NULL, NULL);
    if (fd < 0)
        return NULL;
    size_t used = 0;
    for (const char *const *s = f->script; *s; s++) {
        if (strcmp(*s, "<") == 0) { /* read up to and including one newline */
            char c;
            while (used + 1 < sizeof(f->received) && read(fd, &c, 1) == 1) {
                f->received[used++] = c;
                if (c == '\n')
                    break;
            }
            f->received[used] = '\0';
        } else {
            ssize_t ignored = write(fd, *s, strlen(*s));
            (void)ignored;
        }
    }
    close(fd);
    return NULL;
}

static int events_seen;

static void count_event(void *arg, const char *event, json_t *data)
{
    (void)data;
    assert_string_equal(event, (const char *)arg);
    events_seen++;
}

static void run_fake(const char *const *script, void (*client)(const char *path))
{
    char dir[] = "/tmp/test_qmp.XXXXXX";
    assert_non_null(mkdtemp(dir));
    struct sockaddr_un addr = { .sun_family = AF_UNIX };
    snprintf(addr.sun_path, sizeof(addr.sun_path), "%s/qmp.sock", dir);
    struct fake_qemu f = { .script = script };
    f.listen_fd = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_int_equal(bind(f.listen_fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
    assert_int_equal(listen(f.listen_fd, 1), 0);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, fake_qemu_main, &f), 0);
    client(addr.sun_path);
    pthread_join(t, NULL);
    close(f.listen_fd);
    fs_remove_tree(dir, NULL, 0);
}

static void client_happy(const char *path)
{
    struct qmp_client c;
    char err[256] = "";
    events_seen = 0;
    assert_int_equal(qmp_connect(&c, path, count_event, (void *)"STOP", 2000, err, sizeof(err)),
                     0);
    json_t *ret = NULL;
    assert_int_equal(qmp_execute(&c, "query-status", NULL, &ret, 2000, err, sizeof(err)), 0);
    assert_string_equal(json_string_value(json_object_get(ret, "status")), "paused");
    json_decref(ret);
    assert_int_equal(events_seen, 1);

    assert_int_equal(qmp_execute(&c, "nope", NULL, NULL, 2000, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "CommandNotFound"));

    /* The fake closes now: a clean error, not a hang. */
    assert_int_equal(qmp_execute(&c, "cont", NULL, NULL, 2000, err, sizeof(err)), -1);
    assert_true(strstr(err, "closed") || strstr(err, "send") || strstr(err, "recv"));
    qmp_close(&c);
    qmp_close(&c); /* idempotent */
}

static void test_client_conversation(void **state)
{
    (void)state;
    static const char *const script[] = {
        "{\"QMP\": {\"version\": {}, \"capabilities\": []}}\n",
        "<",
        "{\"return\": {}, \"id\": \"airlock-1\"}\n",
        "<",
        /* an event and a stale answer before ours; ours arrives in two pieces */
        "{\"event\": \"STOP\", \"timestamp\": {}}\n",
        "{\"return\": {}, \"id\": \"airlock-0\"}\n",
        "{\"return\": {\"status\": \"pau",
        "sed\"}, \"id\": \"airlock-2\"}\n",
        "<",
        "{\"error\": {\"class\": \"CommandNotFound\", \"desc\": \"no\"}, \"id\": \"airlock-3\"}\n",
        NULL,
    };
    run_fake(script, client_happy);
}

static void client_garbage(const char *path)
{
    struct qmp_client c;
    char err[256] = "";
    assert_int_equal(qmp_connect(&c, path, NULL, NULL, 2000, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "unexpected message"));
    assert_int_equal(c.fd, -1);
}

static void test_client_rejects_garbage_greeting(void **state)
{
    (void)state;
    static const char *const script[] = { "this is not QMP\n", NULL };
    run_fake(script, client_garbage);
}

static void client_silent(const char *path)
{
    struct qmp_client c;
    char err[256] = "";
    assert_int_equal(qmp_connect(&c, path, NULL, NULL, 200, err, sizeof(err)), -1);
    assert_true(strstr(err, "timeout") || strstr(err, "closed"));
}

static void test_client_times_out(void **state)
{
    (void)state;
    static const char *const script[] = { "<", NULL }; /* waits for a line that never comes */
    run_fake(script, client_silent);
}

static void client_waits_for_events(const char *path)
{
    struct qmp_client c;
    char err[256] = "";
    events_seen = 0;
    assert_int_equal(qmp_connect(&c, path, count_event, (void *)"MIGRATION", 2000, err,
                                 sizeof(err)),
                     0);
    /* A stale answer is skipped; each call returns after one event. */
    assert_int_equal(qmp_wait_event(&c, 2000, err, sizeof(err)), 0);
    assert_int_equal(events_seen, 1);
    assert_int_equal(qmp_wait_event(&c, 2000, err, sizeof(err)), 0);
    assert_int_equal(events_seen, 2);
    /* Then the fake closes: an error, not a hang. */
    assert_int_equal(qmp_wait_event(&c, 2000, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "closed"));
    qmp_close(&c);
    assert_int_equal(qmp_wait_event(&c, 10, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "not connected"));
}

static void test_client_waits_for_events(void **state)
{
    (void)state;
    static const char *const script[] = {
        "{\"QMP\": {\"version\": {}, \"capabilities\": []}}\n",
        "<",
        "{\"return\": {}, \"id\": \"airlock-1\"}\n",
        "{\"return\": {}, \"id\": \"airlock-0\"}\n",
        "{\"event\": \"MIGRATION\", \"data\": {\"status\": \"active\"}, \"timestamp\": {}}\n",
        "{\"event\": \"MIGRATION\", \"data\": {\"status\": \"completed\"}, \"timestamp\": {}}\n",
        NULL,
    };
    run_fake(script, client_waits_for_events);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_greeting),
        cmocka_unit_test(test_return_with_id),
        cmocka_unit_test(test_error),
        cmocka_unit_test(test_event),
        cmocka_unit_test(test_invalid_lines),
        cmocka_unit_test(test_embedded_nul_and_huge_lines),
        cmocka_unit_test(test_client_conversation),
        cmocka_unit_test(test_client_rejects_garbage_greeting),
        cmocka_unit_test(test_client_times_out),
        cmocka_unit_test(test_client_waits_for_events),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
