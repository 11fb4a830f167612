/* airlock exec ID [--timeout S] -- CMD...: runs the command through the
 * exec route's SSE mode, writing stdout/stderr as they arrive, and exits
 * with the command's code (128 + N when a signal ended it, 124 on its
 * timeout). With --json: one JSON result, the route's non-streaming
 * answer. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "fsutil.h"

int cmd_exec(struct cli *c, int argc, char **argv)
{
    static const struct option opts[] = {
        { "timeout", required_argument, NULL, 't' },
        { NULL, 0, NULL, 0 },
    };
    long timeout_s = 0;
    int opt;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
        char *end;
        timeout_s = opt == 't' ? strtol(optarg, &end, 10) : -1;
        if (timeout_s < 0 || (opt == 't' && *end))
            goto usage;
    }
    /* ID -- CMD...: getopt consumed "--" when it came right after the options. */
    if (optind >= argc)
        goto usage;
    const char *id = argv[optind++];
    if (optind < argc && strcmp(argv[optind], "--") == 0)
        optind++;
    if (optind >= argc)
        goto usage;
    json_t *cmd = json_array();
    for (int i = optind; i < argc; i++)
        json_array_append_new(cmd, json_string(argv[i]));
    json_t *body = json_pack("{s:o,s:I}", "cmd", cmd, "timeout_s", (json_int_t)timeout_s);
    char path[256];
    snprintf(path, sizeof(path), "/v1/sandboxes/%.100s/exec", id);

    if (c->json) {
        json_t *result = NULL;
        int status = cli_call(c, "POST", path, body, &result);
        int rc = CLI_EXIT_ERROR;
        if (status == 200) {
            cli_print_json(stdout, result);
            rc = cli_exit_status(result);
        } else if (status > 0) {
            rc = cli_fail(c, status, result, id);
        }
        json_decref(result);
        return rc;
    }
    char *text = json_dumps(body, JSON_COMPACT);
    json_decref(body);
    static const char *const headers[] = { "Content-Type: application/json",
                                           "Accept: text/event-stream", NULL };
    struct http_request req = { .method = "POST", .path = path, .body = text,
                                .body_len = text ? strlen(text) : 0, .body_fd = -1 };
    struct http_response resp;
    int rc = cli_send(c, &req, headers, &resp) < 0 ? CLI_EXIT_ERROR : -1;
    free(text);
    if (rc == CLI_EXIT_ERROR)
        return rc;
    if (resp.status == 200) {
        rc = cli_relay_exec_events(&resp);
    } else {
        struct strbuf answer = { 0 };
        http_read_all(&resp, &answer);
        json_t *err = answer.len ? json_loadb(answer.data, answer.len, 0, NULL) : NULL;
        rc = cli_fail(c, resp.status, err, id);
        json_decref(err);
        strbuf_free(&answer);
    }
    http_close(&resp);
    return rc;
usage:
    fprintf(stderr, "usage: airlock exec [--timeout S] ID -- CMD [ARG...]\n");
    return CLI_EXIT_USAGE;
}
