/* common/metrics: the registry's text exposition (label escaping,
 * histogram buckets), concurrent updates, and the /metrics listener
 * (a real libmicrohttpd on loopback, scraped with libcurl). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "http_client.h"
#include "metrics_registry.h"
#include "metrics_http.h"

static char *render(struct metrics_registry *reg)
{
    struct strbuf out = { 0 };
    metrics_render(reg, &out);
    assert_false(strbuf_failed(&out));
    char *s = strdup(strbuf_str(&out));
    strbuf_free(&out);
    return s;
}

static void test_counter_labels_escaped(void **state)
{
    (void)state;
    struct metrics_registry *reg = metrics_registry_new();
    struct metric *c = metrics_counter(reg, "t_requests_total", "Requests \\ by\nmethod.", 2,
                                       METRIC_LABELS("method", "code"));
    metric_add(c, METRIC_LABELS("Get", "OK"), 1);
    metric_add(c, METRIC_LABELS("Get", "OK"), 2);
    metric_add(c, METRIC_LABELS("a\"b\\c\nd", "X"), 1);
    metric_add(c, METRIC_LABELS("Get", "OK"), -5); /* a counter never goes down */
    char *text = render(reg);
    assert_string_equal(text, "# HELP t_requests_total Requests \\\\ by\\nmethod.\n"
                              "# TYPE t_requests_total counter\n"
                              "t_requests_total{method=\"Get\",code=\"OK\"} 3\n"
                              "t_requests_total{method=\"a\\\"b\\\\c\\nd\",code=\"X\"} 1\n");
    free(text);
    metrics_registry_free(reg);
}

static void test_gauge_set_add_clear(void **state)
{
    (void)state;
    struct metrics_registry *reg = metrics_registry_new();
    struct metric *g = metrics_gauge(reg, "t_pool", "Pool size.", 1, METRIC_LABELS("template"));
    struct metric *plain = metrics_gauge(reg, "t_up", "Up.", 0, NULL);
    metric_set(g, METRIC_LABELS("a"), 4);
    metric_add(g, METRIC_LABELS("a"), -1);
    metric_set(plain, NULL, 1.5);
    metric_observe(g, METRIC_LABELS("a"), 9); /* not a histogram: ignored */
    char *text = render(reg);
    assert_non_null(strstr(text, "# TYPE t_pool gauge\nt_pool{template=\"a\"} 3\n"));
    assert_non_null(strstr(text, "\nt_up 1.5\n"));
    free(text);
    metric_clear(g);
    text = render(reg);
    assert_null(strstr(text, "t_pool{"));
    assert_non_null(strstr(text, "# TYPE t_pool gauge\n"));
    free(text);
    metrics_registry_free(reg);
}

static void test_histogram_buckets(void **state)
{
    (void)state;
    struct metrics_registry *reg = metrics_registry_new();
    static const double bounds[] = { 0.01, 0.1, 1 };
    struct metric *h = metrics_histogram(reg, "t_seconds", "Latency.", 1, METRIC_LABELS("path"),
                                         bounds, 3);
    assert_non_null(h);
    metric_observe(h, METRIC_LABELS("pool"), 0.005);
    metric_observe(h, METRIC_LABELS("pool"), 0.01); /* le is inclusive */
    metric_observe(h, METRIC_LABELS("pool"), 0.5);
    metric_observe(h, METRIC_LABELS("pool"), 7);
    char *text = render(reg);
    assert_string_equal(text, "# HELP t_seconds Latency.\n"
                              "# TYPE t_seconds histogram\n"
                              "t_seconds_bucket{path=\"pool\",le=\"0.01\"} 2\n"
                              "t_seconds_bucket{path=\"pool\",le=\"0.1\"} 2\n"
                              "t_seconds_bucket{path=\"pool\",le=\"1\"} 3\n"
                              "t_seconds_bucket{path=\"pool\",le=\"+Inf\"} 4\n"
                              "t_seconds_sum{path=\"pool\"} 7.515\n"
                              "t_seconds_count{path=\"pool\"} 4\n");
    free(text);
    static const double unordered[] = { 1, 0.5 };
    assert_null(metrics_histogram(reg, "t_bad", "x", 0, NULL, unordered, 2));
    metrics_registry_free(reg);
}

#define THREADS 8
#define PER_THREAD 20000

static void *hammer(void *arg)
{
    struct metric *c = arg;
    for (int i = 0; i < PER_THREAD; i++)
        metric_add(c, METRIC_LABELS(i % 2 ? "odd" : "even"), 1);
    return NULL;
}

static void test_concurrent_increments(void **state)
{
    (void)state;
    struct metrics_registry *reg = metrics_registry_new();
    struct metric *c = metrics_counter(reg, "t_total", "n.", 1, METRIC_LABELS("k"));
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, hammer, c), 0);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    char *text = render(reg);
    char want[128];
    snprintf(want, sizeof(want), "t_total{k=\"even\"} %d\nt_total{k=\"odd\"} %d\n",
             THREADS * PER_THREAD / 2, THREADS * PER_THREAD / 2);
    assert_non_null(strstr(text, want));
    free(text);
    metrics_registry_free(reg);
}

/* GET path from url: its status, the body into out. */
static int scrape(const char *url, const char *path, struct strbuf *out)
{
    char err[256];
    struct http_target t;
    assert_int_equal(http_target_parse(url, &t, err, sizeof(err)), 0);
    struct http_request req = { .method = "GET", .path = path, .body_fd = -1 };
    struct http_response resp;
    assert_int_equal(http_send(&t, &req, &resp, err, sizeof(err)), 0);
    assert_int_equal(http_read_all(&resp, out), 0);
    http_close(&resp);
    return resp.status;
}

static void collect(void *arg)
{
    metric_set(arg, NULL, 42);
}

static void test_listener(void **state)
{
    (void)state;
    char err[256];
    assert_int_equal(metrics_listen_check("localhost:9100", err, sizeof(err)), -1);
    assert_non_null(strstr(err, "--metrics-listen"));
    assert_int_equal(metrics_listen_check("127.0.0.1:0", err, sizeof(err)), -1);
    assert_int_equal(metrics_listen_check("127.0.0.1", err, sizeof(err)), -1);
    assert_int_equal(metrics_listen_check("127.0.0.1:9100", err, sizeof(err)), 0);
    assert_null(metrics_server_start(NULL, "nonsense", err, sizeof(err)));

    struct metrics_registry *reg = metrics_registry_new();
    struct metric *g = metrics_gauge(reg, "t_sampled", "Set at scrape.", 0, NULL);
    assert_int_equal(metrics_on_collect(reg, collect, g), 0);
    /* A free port: try a few from a high range (another test may hold one). */
    struct metrics_server *srv = NULL;
    char addr[32];
    for (int port = 39170; !srv && port < 39200; port++) {
        snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
        srv = metrics_server_start(reg, addr, err, sizeof(err));
    }
    assert_non_null(srv);
    /* The same address twice: refused, naming the flag. */
    assert_null(metrics_server_start(reg, addr, err, sizeof(err)));
    assert_non_null(strstr(err, "--metrics-listen"));

    char url[64];
    snprintf(url, sizeof(url), "http://%s", addr);
    struct strbuf body = { 0 };
    assert_int_equal(scrape(url, "/metrics", &body), 200);
    assert_non_null(strstr(strbuf_str(&body), "\nt_sampled 42\n"));
    strbuf_free(&body);
    assert_int_equal(scrape(url, "/other", &body), 404);
    strbuf_free(&body);
    metrics_server_stop(srv);
    metrics_registry_free(reg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counter_labels_escaped),
        cmocka_unit_test(test_gauge_set_add_clear),
        cmocka_unit_test(test_histogram_buckets),
        cmocka_unit_test(test_concurrent_increments),
        cmocka_unit_test(test_listener),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
