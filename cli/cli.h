/* The airlock CLI: REST calls on the gateway (common/http_client/) and
 * one file per group of commands. Exit codes: 0 ok, 1 an error (printed
 * with what to do about it), 2 a usage error; exec exits with the
 * command's own code (128 + N for a signal). */
#ifndef AIRLOCK_CLI_H
#define AIRLOCK_CLI_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "http_client.h"

#define CLI_EXIT_OK 0
#define CLI_EXIT_ERROR 1
#define CLI_EXIT_USAGE 2

#define CLI_CREATE_USAGE \
    "[--template T] [--cpus N] [--memory MiB] [--idle-timeout S] [--ttl S]" \
    " [--checkpoint-every S] [--public-ports] [--volume NAME:/PATH[:ro]]..."

struct cli {
    const char *url;
    struct http_target target;
    const char *key;
    bool json;                 /* --json: machine-readable output on stdout */
};

/* A JSON request (body may be NULL; stolen) answered with JSON (*out,
 * NULL for an empty answer). Returns the HTTP status, or -1 after printing
 * why the gateway could not be reached. */
int cli_call(const struct cli *c, const char *method, const char *path, json_t *body, json_t **out);

/* Sends the request with the CLI's auth header added; -1 after printing
 * why it failed. extra_headers may be NULL. */
int cli_send(const struct cli *c, struct http_request *req, const char *const *extra_headers,
             struct http_response *resp);

/* One call that is not about a sandbox (admin, quotas): prints the
 * answer (--json: as it is) with print when the status is want, else
 * fails naming what went wrong; the exit status. */
int cli_call_print(struct cli *c, const char *method, const char *path, json_t *body, int want,
                   void (*print)(json_t *answer));

/* Reports a failed answer (status, the API's error body) on stderr — as
 * the JSON error with --json — with a hint for sandbox sandbox_id (may be
 * NULL) based on its current state. Returns CLI_EXIT_ERROR. */
int cli_fail(const struct cli *c, int status, json_t *error_body, const char *sandbox_id);

/* The next event of an SSE response: its name in event (the last
 * "event:" line) and its data parsed (NULL when not JSON; the caller
 * frees it). 1, or 0 at the end of the stream. line is scratch space. */
int cli_sse_next(struct http_response *resp, struct strbuf *line, char *event, size_t eventlen,
                 json_t **data);

/* Option --name's value as a number in 1..max; -1 after printing the
 * problem. */
long cli_number_option(const char *name, const char *value, long max);

/* Prints a JSON value on one line. */
void cli_print_json(FILE *out, json_t *v);

/* The exit status for an exec's "exit" event or result: its code, 128 + N
 * for a signal, 124 when it timed out (exec_output.c). */
int cli_exit_status(json_t *exit);
/* Relays an exec SSE stream (stdout/stderr events to ours) until its exit
 * event; the exit status to use, CLI_EXIT_ERROR when the stream broke. */
int cli_relay_exec_events(struct http_response *resp);

int cmd_create(struct cli *c, int argc, char **argv);
int cmd_ls(struct cli *c, int argc, char **argv);
int cmd_lifecycle(struct cli *c, const char *op, int argc, char **argv); /* pause resume suspend rm */
int cmd_exec(struct cli *c, int argc, char **argv);
int cmd_cp(struct cli *c, int argc, char **argv);
int cmd_checkpoint(struct cli *c, int argc, char **argv);
int cmd_restore(struct cli *c, int argc, char **argv);
int cmd_fork(struct cli *c, int argc, char **argv);
int cmd_port(struct cli *c, int argc, char **argv);
int cmd_logs(struct cli *c, int argc, char **argv);
int cmd_shell(struct cli *c, int argc, char **argv);
int cmd_template(struct cli *c, int argc, char **argv);
int cmd_secret(struct cli *c, int argc, char **argv);
int cmd_project(struct cli *c, int argc, char **argv); /* admin */
int cmd_key(struct cli *c, int argc, char **argv);     /* admin */
int cmd_quota(struct cli *c, int argc, char **argv);   /* set: admin */
int cmd_node(struct cli *c, int argc, char **argv);    /* admin */
int cmd_volume(struct cli *c, int argc, char **argv);
int cmd_e2b_key(struct cli *c, int argc, char **argv); /* no server asked */

#endif
