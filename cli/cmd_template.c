/* template build -f SPEC | ls | rm NAME[:VERSION] (docs/templates.md).
 * build streams the build log (SSE) to stderr as it comes and prints the
 * new version's ref ("name:version"), or with --json the template. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "fsutil.h"

#define TEMPLATE_SPEC_MAX (1u << 20)

/* The spec file's bytes ("-" = stdin); NULL after printing why. */
static char *read_spec(const char *path, size_t *len)
{
    char *text = NULL, err[512];
    if (strcmp(path, "-") != 0) {
        if (fs_read_file(path, TEMPLATE_SPEC_MAX, &text, len, err, sizeof(err)) < 0) {
            fprintf(stderr, "airlock: -f %s: %s\n", path, err);
            return NULL;
        }
        return text;
    }
    struct strbuf in = { 0 };
    char buf[8192];
    ssize_t n;
    while ((n = read(STDIN_FILENO, buf, sizeof(buf))) > 0 && in.len <= TEMPLATE_SPEC_MAX)
        strbuf_append_n(&in, buf, (size_t)n);
    if (n < 0 || strbuf_failed(&in) || in.len > TEMPLATE_SPEC_MAX) {
        fprintf(stderr, "airlock: -f -: cannot read the spec from stdin (at most %u bytes)\n",
                TEMPLATE_SPEC_MAX);
        strbuf_free(&in);
        return NULL;
    }
    *len = in.len;
    return in.data ? in.data : strdup("");
}

/* The SSE events of a build until done or error: the exit status. */
static int relay_build(const struct cli *c, struct http_response *resp)
{
    struct strbuf line = { 0 };
    char event[32] = "";
    int rc = -1;
    json_t *data;
    while (rc < 0 && cli_sse_next(resp, &line, event, sizeof(event), &data) == 1) {
        if (strcmp(event, "log") == 0) {
            fprintf(stderr, "%s\n", json_string_value(json_object_get(data, "line")));
        } else if (strcmp(event, "done") == 0) {
            if (c->json)
                cli_print_json(stdout, data);
            else
                printf("%s\n", json_string_value(json_object_get(data, "ref")));
            rc = CLI_EXIT_OK;
        } else if (strcmp(event, "error") == 0) {
            if (c->json)
                cli_print_json(stderr, data);
            else
                fprintf(stderr, "airlock: the build failed: %s\n",
                        json_string_value(
                            json_object_get(json_object_get(data, "error"), "message")));
            rc = CLI_EXIT_ERROR;
        }
        json_decref(data);
    }
    if (rc < 0) {
        fprintf(stderr, "airlock: the gateway closed the stream before the build finished\n");
        rc = CLI_EXIT_ERROR;
    }
    strbuf_free(&line);
    return rc;
}

static int template_build(struct cli *c, int argc, char **argv)
{
    const char *file = NULL;
    bool unknown = false;
    for (int i = 1; i < argc; i++) {
        if ((strcmp(argv[i], "-f") == 0 || strcmp(argv[i], "--file") == 0) && i + 1 < argc)
            file = argv[++i];
        else
            unknown = true;
    }
    if (!file || unknown) {
        fprintf(stderr, "usage: airlock template build -f SPEC.json   (- reads stdin; "
                        "docs/templates.md)\n");
        return CLI_EXIT_USAGE;
    }
    size_t len = 0;
    char *spec = read_spec(file, &len);
    if (!spec)
        return CLI_EXIT_ERROR;
    static const char *const headers[] = { "Content-Type: application/json",
                                           "Accept: text/event-stream", NULL };
    struct http_request req = { .method = "POST", .path = "/v1/templates", .body = spec,
                                .body_len = len, .body_fd = -1 };
    struct http_response resp;
    int rc = cli_send(c, &req, headers, &resp);
    free(spec);
    if (rc < 0)
        return CLI_EXIT_ERROR;
    if (resp.status == 200) {
        rc = relay_build(c, &resp);
    } else {
        struct strbuf answer = { 0 };
        http_read_all(&resp, &answer);
        json_t *error = answer.len ? json_loadb(answer.data, answer.len, 0, NULL) : NULL;
        rc = cli_fail(c, resp.status, error, NULL);
        json_decref(error);
        strbuf_free(&answer);
    }
    http_close(&resp);
    return rc;
}

static int template_ls(struct cli *c)
{
    json_t *answer = NULL;
    int status = cli_call(c, "GET", "/v1/templates", NULL, &answer);
    int rc = CLI_EXIT_ERROR;
    if (status == 200 && c->json) {
        cli_print_json(stdout, answer);
        rc = CLI_EXIT_OK;
    } else if (status == 200) {
        printf("%-40s %4s %6s %-16s %s\n", "TEMPLATE", "CPUS", "MEMORY", "NODE", "CREATED");
        size_t i;
        json_t *t;
        json_array_foreach(json_object_get(answer, "templates"), i, t)
            printf("%-40s %4d %6d %-16s %s\n", json_string_value(json_object_get(t, "ref")),
                   (int)json_integer_value(json_object_get(t, "cpus")),
                   (int)json_integer_value(json_object_get(t, "memory_mb")),
                   json_string_value(json_object_get(t, "node")),
                   json_string_value(json_object_get(t, "created_at")));
        rc = CLI_EXIT_OK;
    } else if (status > 0) {
        rc = cli_fail(c, status, answer, NULL);
    }
    json_decref(answer);
    return rc;
}

static int template_rm(struct cli *c, const char *name)
{
    char path[256];
    snprintf(path, sizeof(path), "/v1/templates/%.200s", name);
    json_t *answer = NULL;
    int status = cli_call(c, "DELETE", path, NULL, &answer);
    int rc = CLI_EXIT_ERROR;
    if (status == 204) {
        if (c->json) {
            json_t *done = json_pack("{s:s,s:b}", "template", name, "deleted", 1);
            cli_print_json(stdout, done);
            json_decref(done);
        } else {
            printf("%s deleted\n", name);
        }
        rc = CLI_EXIT_OK;
    } else if (status > 0) {
        rc = cli_fail(c, status, answer, NULL);
    }
    json_decref(answer);
    return rc;
}

int cmd_template(struct cli *c, int argc, char **argv)
{
    const char *sub = argc > 1 ? argv[1] : "";
    if (strcmp(sub, "build") == 0)
        return template_build(c, argc - 1, argv + 1);
    if (strcmp(sub, "ls") == 0 && argc == 2)
        return template_ls(c);
    if (strcmp(sub, "rm") == 0 && argc == 3)
        return template_rm(c, argv[2]);
    fprintf(stderr, "usage: airlock template build -f SPEC.json | ls | rm NAME[:VERSION]\n");
    return CLI_EXIT_USAGE;
}
