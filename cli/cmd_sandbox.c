/* create, ls, pause, resume, suspend, rm: one REST call each. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "volume_spec.h"

/* The API's limit for idle_timeout_s and ttl_s (docs/api.md). */
#define CREATE_SECONDS_MAX 31536000

/* --volume NAME:/PATH[:ro] appended to the body's "volumes" (the
 * scheduler judges the name and path); -1 after printing the problem. */
static int add_volume(json_t *body, const char *text)
{
    char buf[VOLUME_REF_MAX + VOLUME_PATH_MAX + 8];
    struct volume_mount_spec m;
    struct airlock_error e;
    if (volume_mount_parse(text, buf, sizeof(buf), &m, &e) < 0) {
        fprintf(stderr, "airlock: %s\n", e.message);
        return -1;
    }
    json_t *list = json_object_get(body, "volumes");
    if (!list) {
        list = json_array();
        json_object_set_new(body, "volumes", list);
    }
    json_array_append_new(list, json_pack("{s:s,s:s,s:b}", "name", m.name, "path", m.path,
                                          "read_only", m.read_only));
    return 0;
}

int cmd_create(struct cli *c, int argc, char **argv)
{
    static const struct option opts[] = {
        { "template", required_argument, NULL, 't' },
        { "cpus", required_argument, NULL, 'c' },
        { "memory", required_argument, NULL, 'm' },
        { "idle-timeout", required_argument, NULL, 'i' },
        { "ttl", required_argument, NULL, 'l' },
        { "checkpoint-every", required_argument, NULL, 'k' },
        { "public-ports", no_argument, NULL, 'p' },
        { "volume", required_argument, NULL, 'v' },
        { NULL, 0, NULL, 0 },
    };
    /* The JSON field each number option sets. */
    static const struct {
        int opt;
        const char *name, *field;
        long max;
    } numbers[] = {
        { 'c', "cpus", "cpus", 16 },
        { 'm', "memory", "memory_mb", 65536 },
        { 'i', "idle-timeout", "idle_timeout_s", CREATE_SECONDS_MAX },
        { 'l', "ttl", "ttl_s", CREATE_SECONDS_MAX },
        /* The scheduler names its own range (10..86400). */
        { 'k', "checkpoint-every", "checkpoint_every_s", CREATE_SECONDS_MAX },
    };
    json_t *body = json_object();
    int opt;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
        if (opt == 't') {
            json_object_set_new(body, "template", json_string(optarg));
            continue;
        }
        if (opt == 'p') {
            json_object_set_new(body, "public_ports", json_true());
            continue;
        }
        if (opt == 'v') {
            if (add_volume(body, optarg) < 0) {
                json_decref(body);
                return CLI_EXIT_USAGE;
            }
            continue;
        }
        size_t i = 0;
        while (i < sizeof(numbers) / sizeof(*numbers) && numbers[i].opt != opt)
            i++;
        long n = i < sizeof(numbers) / sizeof(*numbers)
                     ? cli_number_option(numbers[i].name, optarg, numbers[i].max)
                     : -1;
        if (n < 0) {
            json_decref(body);
            return CLI_EXIT_USAGE;
        }
        json_object_set_new(body, numbers[i].field, json_integer(n));
    }
    if (optind != argc) {
        json_decref(body);
        fprintf(stderr, "usage: airlock create " CLI_CREATE_USAGE "\n");
        return CLI_EXIT_USAGE;
    }
    json_t *sb = NULL;
    int status = cli_call(c, "POST", "/v1/sandboxes", body, &sb);
    int rc = CLI_EXIT_ERROR;
    if (status == 201) {
        if (c->json)
            cli_print_json(stdout, sb);
        else
            printf("%s\n", json_string_value(json_object_get(sb, "id")));
        rc = CLI_EXIT_OK;
    } else if (status > 0) {
        rc = cli_fail(c, status, sb, NULL);
    }
    json_decref(sb);
    return rc;
}

int cmd_ls(struct cli *c, int argc, char **argv)
{
    (void)argv;
    if (argc != 1) {
        fprintf(stderr, "usage: airlock ls\n");
        return CLI_EXIT_USAGE;
    }
    json_t *list = NULL;
    int status = cli_call(c, "GET", "/v1/sandboxes", NULL, &list);
    if (status != 200) {
        int rc = status > 0 ? cli_fail(c, status, list, NULL) : CLI_EXIT_ERROR;
        json_decref(list);
        return rc;
    }
    if (c->json) {
        cli_print_json(stdout, list);
    } else {
        printf("%-24s %-10s %-10s %4s %7s  %s\n", "ID", "STATE", "TEMPLATE", "CPUS", "MEMORY",
               "CREATED");
        size_t i;
        json_t *sb;
        json_array_foreach(json_object_get(list, "sandboxes"), i, sb)
        {
            const char *error = json_string_value(json_object_get(sb, "error"));
            printf("%-24s %-10s %-10s %4lld %6lldM  %s%s%s\n",
                   json_string_value(json_object_get(sb, "id")),
                   json_string_value(json_object_get(sb, "state")),
                   json_string_value(json_object_get(sb, "template")),
                   (long long)json_integer_value(json_object_get(sb, "cpus")),
                   (long long)json_integer_value(json_object_get(sb, "memory_mb")),
                   json_string_value(json_object_get(sb, "created_at")), error ? "  " : "",
                   error ? error : "");
        }
    }
    json_decref(list);
    return CLI_EXIT_OK;
}

int cmd_lifecycle(struct cli *c, const char *op, int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: airlock %s ID\n", op);
        return CLI_EXIT_USAGE;
    }
    const char *id = argv[1];
    bool remove = strcmp(op, "rm") == 0;
    char path[256];
    if (remove)
        snprintf(path, sizeof(path), "/v1/sandboxes/%.100s", id);
    else
        snprintf(path, sizeof(path), "/v1/sandboxes/%.100s/%s", id, op);
    json_t *sb = NULL;
    int status = cli_call(c, remove ? "DELETE" : "POST", path, NULL, &sb);
    int rc = CLI_EXIT_ERROR;
    if (status == 200 || status == 204) {
        if (c->json && remove) {
            json_t *gone = json_pack("{s:s,s:s}", "id", id, "state", "deleted");
            cli_print_json(stdout, gone);
            json_decref(gone);
        } else if (c->json) {
            cli_print_json(stdout, sb);
        } else {
            printf("%s %s\n", id, remove ? "deleted" : json_string_value(json_object_get(sb, "state")));
        }
        rc = CLI_EXIT_OK;
    } else if (status > 0) {
        rc = cli_fail(c, status, sb, id);
    }
    json_decref(sb);
    return rc;
}
