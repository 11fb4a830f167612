/* checkpoint, restore, fork, port: one REST call each. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* POSTs body to /v1/sandboxes/ID/<what>; on ok_status prints the answer
 * (JSON, or print_text's lines), else the error with advice for id. */
static int post_to_sandbox(struct cli *c, const char *id, const char *what, json_t *body,
                           int ok_status, void (*print_text)(const char *id, json_t *answer))
{
    char path[256];
    snprintf(path, sizeof(path), "/v1/sandboxes/%.100s/%s", id, what);
    json_t *answer = NULL;
    int status = cli_call(c, "POST", path, body, &answer);
    int rc = CLI_EXIT_ERROR;
    if (status == ok_status) {
        if (c->json)
            cli_print_json(stdout, answer);
        else
            print_text(id, answer);
        rc = CLI_EXIT_OK;
    } else if (status > 0) {
        rc = cli_fail(c, status, answer, id);
    }
    json_decref(answer);
    return rc;
}

static void print_checkpoint(const char *id, json_t *cp)
{
    printf("%s checkpoint %s (%s)\n", id, json_string_value(json_object_get(cp, "name")),
           json_string_value(json_object_get(cp, "kind")));
}

static void print_state(const char *id, json_t *sb)
{
    printf("%s %s\n", id, json_string_value(json_object_get(sb, "state")));
}

static void print_fork_ids(const char *id, json_t *answer)
{
    (void)id;
    size_t i;
    json_t *sb;
    json_array_foreach(json_object_get(answer, "sandboxes"), i, sb)
        printf("%s\n", json_string_value(json_object_get(sb, "id")));
}

/* getopt_long over argv into body: each option's value as a string, or
 * with as_number as a number in 1..max. The positional arguments are left
 * from optind; -1 after printing the problem. */
struct body_option {
    const char *name;
    const char *field;
    long max;                  /* 0: a string */
};

static int parse_body_options(int argc, char **argv, const struct body_option *bopts, size_t n,
                              json_t *body)
{
    struct option opts[4] = { { NULL, 0, NULL, 0 } };
    for (size_t i = 0; i < n && i < 3; i++)
        opts[i] = (struct option){ bopts[i].name, required_argument, NULL, (int)i };
    int opt;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
        if (opt < 0 || (size_t)opt >= n)
            return -1;
        const struct body_option *b = &bopts[opt];
        if (!b->max) {
            json_object_set_new(body, b->field, json_string(optarg));
            continue;
        }
        char *end;
        long v = strtol(optarg, &end, 10);
        if (*end || v <= 0 || v > b->max) {
            fprintf(stderr, "airlock: --%s: \"%s\" is not a number in 1..%ld\n", b->name, optarg,
                    b->max);
            return -1;
        }
        json_object_set_new(body, b->field, json_integer(v));
    }
    return 0;
}

int cmd_checkpoint(struct cli *c, int argc, char **argv)
{
    static const struct body_option opts[] = { { "kind", "kind", 0 } };
    json_t *body = json_object();
    if (parse_body_options(argc, argv, opts, 1, body) < 0 || argc - optind != 2) {
        fprintf(stderr, "usage: airlock checkpoint ID NAME [--kind disk|full]\n");
        json_decref(body);
        return CLI_EXIT_USAGE;
    }
    json_object_set_new(body, "name", json_string(argv[optind + 1]));
    return post_to_sandbox(c, argv[optind], "checkpoints", body, 201, print_checkpoint);
}

int cmd_restore(struct cli *c, int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: airlock restore ID NAME\n");
        return CLI_EXIT_USAGE;
    }
    return post_to_sandbox(c, argv[1], "restore", json_pack("{s:s}", "checkpoint", argv[2]), 200,
                           print_state);
}

int cmd_fork(struct cli *c, int argc, char **argv)
{
    static const struct body_option opts[] = { { "count", "count", 16 },
                                               { "checkpoint", "checkpoint", 0 } };
    json_t *body = json_object();
    if (parse_body_options(argc, argv, opts, 2, body) < 0 || argc - optind != 1) {
        fprintf(stderr, "usage: airlock fork ID [--count N] [--checkpoint NAME]\n");
        json_decref(body);
        return CLI_EXIT_USAGE;
    }
    return post_to_sandbox(c, argv[optind], "fork", body, 201, print_fork_ids);
}

static void print_url(const char *id, json_t *answer)
{
    (void)id;
    printf("%s\n", json_string_value(json_object_get(answer, "url")));
}

/* The URL of a port through the gateway (docs/ports.md). */
int cmd_port(struct cli *c, int argc, char **argv)
{
    static const struct body_option opts[] = {
        { "expires", "expires_in_s", 7 * 24 * 3600 },
    };
    json_t *body = json_object();
    if (parse_body_options(argc, argv, opts, 1, body) < 0 || argc - optind != 2) {
        fprintf(stderr, "usage: airlock port ID PORT [--expires SECONDS]\n");
        json_decref(body);
        return CLI_EXIT_USAGE;
    }
    char what[64];
    snprintf(what, sizeof(what), "ports/%.16s/url", argv[optind + 1]);
    return post_to_sandbox(c, argv[optind], what, body, 200, print_url);
}
