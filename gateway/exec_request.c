#include "exec_request.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_input.h"
#include "string_map_json.h"

#define EXEC_DEFAULT_TIMEOUT_S 60
#define EXEC_MAX_TIMEOUT_S 86400
#define EXEC_DEFAULT_ROWS 24
#define EXEC_DEFAULT_COLS 80
#define EXEC_MAX_WINDOW 65535

void exec_request_free(struct exec_request *in)
{
    json_decref(in->body);
    json_decref(in->env);
    free(in->argv);
    free(in->entries);
    free(in->entry_ptrs);
    memset(in, 0, sizeof(*in));
}

/* "tty" with its window size ("rows", "cols"; 24x80 by default). */
static int parse_window(struct exec_request *in, struct airlock_error *e)
{
    in->tty = json_is_true(json_object_get(in->body, "tty"));
    const char *size_field = json_object_get(in->body, "rows")   ? "rows"
                             : json_object_get(in->body, "cols") ? "cols"
                                                                 : NULL;
    if (!in->tty && size_field)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID, "%s: only with \"tty\": true", size_field);
    if (json_input_uint(in->body, "rows", EXEC_MAX_WINDOW, EXEC_DEFAULT_ROWS, &in->rows, e) < 0 ||
        json_input_uint(in->body, "cols", EXEC_MAX_WINDOW, EXEC_DEFAULT_COLS, &in->cols, e) < 0)
        return -1;
    if (in->rows == 0 || in->cols == 0)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID, "%s: must be 1..%d",
                                 in->rows == 0 ? "rows" : "cols", EXEC_MAX_WINDOW);
    return 0;
}

int exec_request_parse(struct exec_request *in, const struct strbuf *body, enum exec_kind kind,
                       struct airlock_error *e)
{
    json_t *obj;
    memset(in, 0, sizeof(*in));
    if (json_input_object(body->data, body->len, &obj, e) < 0)
        return -1;
    return exec_request_from_json(in, obj, kind, e);
}

int exec_request_from_json(struct exec_request *in, json_t *body, enum exec_kind kind,
                           struct airlock_error *e)
{
    static const struct json_field fields[] = {
        { "cmd", JF_STRING_ARRAY }, { "env", JF_STRING_MAP }, { "cwd", JF_STRING },
        { "stdin", JF_STRING },     { "timeout_s", JF_UINT }, { "tty", JF_BOOL },
        { "rows", JF_UINT },        { "cols", JF_UINT },      { "stdin_open", JF_BOOL },
    };
    /* stdin_open (last) only makes sense for a process that outlives the call. */
    size_t n_fields = sizeof(fields) / sizeof(*fields) - (kind == EXEC_FOREGROUND ? 1 : 0);
    memset(in, 0, sizeof(*in));
    in->body = body;
    if (json_input_check(body, fields, n_fields, e) < 0)
        return -1;
    json_t *cmd = json_object_get(in->body, "cmd");
    if (!cmd || json_array_size(cmd) == 0)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                 "cmd: required, a non-empty array of strings");
    json_t *stdin_text = json_object_get(in->body, "stdin");
    if (stdin_text) {
        in->stdin.data = (uint8_t *)json_string_value(stdin_text);
        in->stdin.len = json_string_length(stdin_text);
    }
    uint64_t fallback = kind == EXEC_FOREGROUND ? EXEC_DEFAULT_TIMEOUT_S : 0;
    if (json_input_uint(in->body, "timeout_s", EXEC_MAX_TIMEOUT_S, fallback, &in->timeout_s, e) < 0)
        return -1;
    return parse_window(in, e);
}

int exec_request_build(struct exec_request *in, const Airlock__Scheduler__V1__Sandbox *sb)
{
    Airlock__Vmhost__V1__ExecRequest *req = &in->req;
    airlock__vmhost__v1__exec_request__init(req);
    req->sandbox_id = sb->id;
    json_t *cmd = json_object_get(in->body, "cmd");
    size_t argc = json_array_size(cmd);
    in->argv = calloc(argc, sizeof(*in->argv));
    char err[256]; /* unused: the scheduler's strings come from jsonb, UTF-8 */
    in->env = string_map_to_json((ProtobufCMessage **)sb->env, sb->n_env, "env", err, sizeof(err));
    if (!in->env)
        return -1;
    json_t *req_env = json_object_get(in->body, "env");
    if (req_env)
        json_object_update(in->env, req_env);
    size_t envc = json_object_size(in->env);
    in->entries = calloc(envc + 1, sizeof(*in->entries));
    in->entry_ptrs = calloc(envc + 1, sizeof(*in->entry_ptrs));
    if (!in->argv || !in->entries || !in->entry_ptrs)
        return -1;
    for (size_t i = 0; i < argc; i++) {
        json_t *a = json_array_get(cmd, i);
        in->argv[i].data = (uint8_t *)json_string_value(a);
        in->argv[i].len = json_string_length(a);
    }
    req->argv = in->argv;
    req->n_argv = argc;
    const char *key;
    json_t *v;
    size_t n = 0;
    json_object_foreach(in->env, key, v)
    {
        airlock__vmhost__v1__exec_request__env_entry__init(&in->entries[n]);
        in->entries[n].key = (char *)key;
        in->entries[n].value = (char *)json_string_value(v);
        in->entry_ptrs[n] = &in->entries[n];
        n++;
    }
    req->env = in->entry_ptrs;
    req->n_env = n;
    const char *cwd = json_input_string(in->body, "cwd", NULL);
    if (cwd) {
        req->cwd.data = (uint8_t *)cwd;
        req->cwd.len = strlen(cwd);
    }
    req->stdin = in->stdin;
    req->stdin_open = json_is_true(json_object_get(in->body, "stdin_open"));
    req->timeout_ms = (uint32_t)(in->timeout_s * 1000);
    req->pty = in->tty;
    if (in->tty) {
        req->rows = (uint32_t)in->rows;
        req->cols = (uint32_t)in->cols;
    }
    return 0;
}
