/* airlock exec ID [--timeout S] -- CMD...: runs the command through the
 * exec route's SSE mode, writing stdout/stderr as they arrive, and exits
 * with the command's code (128 + N when a signal ended it, 124 on its
 * timeout). With --json: one JSON result, the route's non-streaming
 * answer. */
#include <getopt.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "fsutil.h"

#define EXEC_TIMED_OUT_EXIT 124

/* Writes the data of a stdout/stderr event to fd. */
static int write_output(int fd, json_t *data)
{
    const char *text = json_string_value(json_object_get(data, "data"));
    if (text)
        return fs_write_all(fd, text, json_string_length(json_object_get(data, "data")));
    const char *b64 = json_string_value(json_object_get(data, "data_b64"));
    if (!b64)
        return -1;
    size_t len = strlen(b64);
    unsigned char *raw = malloc(len / 4 * 3 + 3);
    int n = raw ? EVP_DecodeBlock(raw, (const unsigned char *)b64, (int)len) : -1;
    /* EVP_DecodeBlock counts the padding as data bytes. */
    if (n >= 0)
        n -= (len >= 1 && b64[len - 1] == '=') + (len >= 2 && b64[len - 2] == '=');
    int rc = n >= 0 ? fs_write_all(fd, raw, (size_t)n) : -1;
    free(raw);
    return rc;
}

static int exit_status_of(json_t *exit)
{
    if (json_is_true(json_object_get(exit, "timed_out")))
        return EXEC_TIMED_OUT_EXIT;
    json_int_t sig = json_integer_value(json_object_get(exit, "signal"));
    if (sig > 0)
        return 128 + (int)sig;
    return (int)json_integer_value(json_object_get(exit, "exit_code"));
}

/* Reads SSE events until exit; the exit status to use. */
static int relay_events(struct http_response *resp)
{
    struct strbuf line = { 0 };
    char event[32] = "";
    int rc = -1;
    while (rc < 0 && http_read_line(resp, &line) == 1) {
        const char *text = strbuf_str(&line);
        if (strncmp(text, "event: ", 7) == 0) {
            snprintf(event, sizeof(event), "%s", text + 7);
            continue;
        }
        if (strncmp(text, "data: ", 6) != 0)
            continue;
        json_t *data = json_loads(text + 6, 0, NULL);
        if (strcmp(event, "stdout") == 0 || strcmp(event, "stderr") == 0) {
            write_output(event[3] == 'o' ? STDOUT_FILENO : STDERR_FILENO, data);
        } else if (strcmp(event, "exit") == 0) {
            rc = exit_status_of(data);
        } else if (strcmp(event, "error") == 0) {
            const char *msg = json_string_value(json_object_get(json_object_get(data, "error"), "message"));
            fprintf(stderr, "airlock: the command's output stream broke: %s\n", msg ? msg : "?");
            rc = CLI_EXIT_ERROR;
        }
        json_decref(data);
    }
    if (rc < 0) {
        fprintf(stderr, "airlock: the gateway closed the stream before the command exited\n");
        rc = CLI_EXIT_ERROR;
    }
    strbuf_free(&line);
    return rc;
}

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
            rc = exit_status_of(result);
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
        rc = relay_events(&resp);
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
