/* Talking to the gateway: auth header, JSON in and out, and errors that
 * say what to do next. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cli_send(const struct cli *c, struct http_request *req, const char *const *extra_headers,
             struct http_response *resp)
{
    char auth[512];
    snprintf(auth, sizeof(auth), "Authorization: Bearer %s", c->key);
    const char *headers[8];
    size_t n = 0;
    headers[n++] = auth;
    for (const char *const *h = extra_headers; h && *h && n + 1 < sizeof(headers) / sizeof(*headers); h++)
        headers[n++] = *h;
    headers[n] = NULL;
    req->headers = headers;
    char err[512];
    if (http_send(&c->target, req, resp, err, sizeof(err)) < 0) {
        fprintf(stderr, "airlock: cannot reach the gateway: %s\n", err);
        if (resp->tls_unverified)
            fprintf(stderr, "  its certificate does not verify: trust its CA with --ca-file or "
                            "AIRLOCK_CA_FILE (default: the system's trust store)\n");
        else
            fprintf(stderr, "  is it running? (`make up` starts it; --url or AIRLOCK_URL points "
                            "elsewhere)\n");
        return -1;
    }
    return 0;
}

int cli_call(const struct cli *c, const char *method, const char *path, json_t *body, json_t **out)
{
    *out = NULL;
    char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
    json_decref(body);
    struct http_request req = { .method = method, .path = path, .body = text,
                                .body_len = text ? strlen(text) : 0, .body_fd = -1 };
    static const char *const json_headers[] = { "Content-Type: application/json", NULL };
    struct http_response resp;
    int rc = cli_send(c, &req, text ? json_headers : NULL, &resp);
    free(text);
    if (rc < 0)
        return -1;
    struct strbuf answer = { 0 };
    if (http_read_all(&resp, &answer) < 0) {
        fprintf(stderr, "airlock: the gateway's answer to %s %s broke off\n", method, path);
        rc = -1;
    } else {
        if (answer.len)
            *out = json_loadb(answer.data, answer.len, 0, NULL);
        rc = resp.status;
    }
    strbuf_free(&answer);
    http_close(&resp);
    return rc;
}

int cli_call_print(struct cli *c, const char *method, const char *path, json_t *body, int want,
                   void (*print)(json_t *answer))
{
    json_t *answer = NULL;
    int status = cli_call(c, method, path, body, &answer);
    int rc = CLI_EXIT_ERROR;
    if (status == want) {
        if (c->json && answer)
            cli_print_json(stdout, answer);
        else if (!c->json)
            print(answer);
        rc = CLI_EXIT_OK;
    } else if (status > 0) {
        rc = cli_fail(c, status, answer, NULL);
    }
    json_decref(answer);
    return rc;
}

void cli_print_json(FILE *out, json_t *v)
{
    char *text = json_dumps(v, JSON_COMPACT);
    if (text)
        fprintf(out, "%s\n", text);
    free(text);
}

/* What to do about a sandbox in `state` that refused a call. */
static void print_state_hint(const char *id, const char *state)
{
    if (strcmp(state, "paused") == 0 || strcmp(state, "suspended") == 0)
        fprintf(stderr, "  sandbox %s is %s: run `airlock resume %s` first\n", id, state, id);
    else if (strcmp(state, "error") == 0)
        fprintf(stderr, "  sandbox %s is in state error: `airlock ls` shows why; `airlock rm %s` removes it\n",
                id, id);
    else if (strcmp(state, "running") != 0)
        fprintf(stderr, "  sandbox %s is %s: wait until it is running (`airlock ls`) and retry\n",
                id, state);
}

int cli_fail(const struct cli *c, int status, json_t *error_body, const char *sandbox_id)
{
    json_t *error = json_object_get(error_body, "error");
    const char *message = json_string_value(json_object_get(error, "message"));
    if (c->json && error)
        cli_print_json(stderr, error_body);
    else
        fprintf(stderr, "airlock: %s (HTTP %d)\n", message ? message : "the gateway refused", status);
    if (status == 401)
        fprintf(stderr, "  pass an API key with --key or AIRLOCK_API_KEY (`make up` prints the admin key)\n");
    else if (status == 429)
        fprintf(stderr, "  a quota of your key's project: `airlock quota show PROJECT` shows its "
                        "limits and what is in use\n");
    else if (status == 404 && sandbox_id && message && strncmp(message, "sandbox ", 8) == 0 &&
             strstr(message, sandbox_id))
        fprintf(stderr, "  `airlock ls` lists the sandboxes of your key's project\n");
    else if (status == 409 && sandbox_id) {
        char path[256];
        snprintf(path, sizeof(path), "/v1/sandboxes/%s", sandbox_id);
        json_t *sb = NULL;
        if (cli_call(c, "GET", path, NULL, &sb) == 200 && json_is_string(json_object_get(sb, "state")))
            print_state_hint(sandbox_id, json_string_value(json_object_get(sb, "state")));
        json_decref(sb);
    }
    return CLI_EXIT_ERROR;
}

int cli_sse_next(struct http_response *resp, struct strbuf *line, char *event, size_t eventlen,
                 json_t **data)
{
    *data = NULL;
    while (http_read_line(resp, line) == 1) {
        const char *text = strbuf_str(line);
        if (strncmp(text, "event: ", 7) == 0) {
            snprintf(event, eventlen, "%s", text + 7);
        } else if (strncmp(text, "data: ", 6) == 0) {
            *data = json_loads(text + 6, 0, NULL);
            return 1;
        }
    }
    return 0;
}

long cli_number_option(const char *name, const char *value, long max)
{
    char *end;
    long n = strtol(value, &end, 10);
    if (*end || n <= 0 || n > max) {
        fprintf(stderr, "airlock: --%s: \"%s\" is not a number in 1..%ld\n", name, value, max);
        return -1;
    }
    return n;
}
