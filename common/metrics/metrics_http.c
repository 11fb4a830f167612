#include "metrics_http.h"

#include <arpa/inet.h>
#include <stdbool.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct metrics_server {
    struct MHD_Daemon *daemon;
    struct metrics_registry *reg;
};

const char *metrics_listen_addr(const char *flag_value)
{
    const char *v = flag_value ? flag_value : getenv(METRICS_LISTEN_ENV);
    return v && *v ? v : NULL;
}

static int parse_addr(const char *addr, struct sockaddr_in *sa)
{
    const char *colon = strrchr(addr, ':');
    char host[INET_ADDRSTRLEN];
    if (!colon || (size_t)(colon - addr) >= sizeof(host))
        return -1;
    memcpy(host, addr, (size_t)(colon - addr));
    host[colon - addr] = '\0';
    char *end;
    unsigned long port = strtoul(colon + 1, &end, 10);
    if (colon[1] < '0' || colon[1] > '9' || *end || port == 0 || port > 65535)
        return -1;
    memset(sa, 0, sizeof(*sa));
    sa->sin_family = AF_INET;
    sa->sin_port = htons((uint16_t)port);
    return inet_pton(AF_INET, host, &sa->sin_addr) == 1 ? 0 : -1;
}

int metrics_listen_check(const char *addr, char *err, size_t errlen)
{
    struct sockaddr_in sa;
    if (parse_addr(addr, &sa) == 0)
        return 0;
    snprintf(err, errlen, "--%s (or %s): %s: not IPv4:PORT (e.g. 127.0.0.1:9101)",
             METRICS_LISTEN_FLAG, METRICS_LISTEN_ENV, addr);
    return -1;
}

struct MHD_Response *metrics_response(struct metrics_registry *reg)
{
    struct strbuf text = { 0 };
    metrics_render(reg, &text);
    struct MHD_Response *resp =
        strbuf_failed(&text)
            ? NULL
            : MHD_create_response_from_buffer(text.len, text.data, MHD_RESPMEM_MUST_FREE);
    if (!resp) {
        strbuf_free(&text);
        return NULL;
    }
    MHD_add_response_header(resp, "Content-Type", "text/plain; version=0.0.4; charset=utf-8");
    return resp;
}

static enum MHD_Result answer(void *cls, struct MHD_Connection *conn, const char *url,
                              const char *method, const char *version, const char *body,
                              size_t *body_len, void **state)
{
    (void)version, (void)body, (void)body_len, (void)state;
    struct metrics_server *srv = cls;
    static const char not_found[] = "not found: only GET /metrics is served here\n";
    bool scrape = strcmp(url, "/metrics") == 0 &&
                  (strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0);
    struct MHD_Response *resp =
        scrape ? metrics_response(srv->reg)
               : MHD_create_response_from_buffer(sizeof(not_found) - 1, (void *)not_found,
                                                 MHD_RESPMEM_PERSISTENT);
    if (!resp)
        return MHD_NO;
    enum MHD_Result r = MHD_queue_response(conn, scrape ? 200 : 404, resp);
    MHD_destroy_response(resp);
    return r;
}

struct metrics_server *metrics_server_start(struct metrics_registry *reg, const char *addr,
                                            char *err, size_t errlen)
{
    struct sockaddr_in sa;
    if (metrics_listen_check(addr, err, errlen) < 0 || parse_addr(addr, &sa) < 0)
        return NULL;
    struct metrics_server *srv = calloc(1, sizeof(*srv));
    if (!srv) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    srv->reg = reg;
    /* One polling thread: a scrape is small, and collectors then never
     * run twice at once. */
    srv->daemon = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO, 0, NULL, NULL,
                                   answer, srv, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
                                   MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10,
                                   MHD_OPTION_CONNECTION_LIMIT, (unsigned)64, MHD_OPTION_END);
    if (!srv->daemon) {
        snprintf(err, errlen, "--%s: %s: cannot listen (address in use or not this host's)",
                 METRICS_LISTEN_FLAG, addr);
        free(srv);
        return NULL;
    }
    return srv;
}

void metrics_server_stop(struct metrics_server *srv)
{
    if (!srv)
        return;
    MHD_stop_daemon(srv->daemon);
    free(srv);
}
