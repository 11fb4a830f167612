/* airlock volume create|ls|get|rm|grow|snapshot|clone: a project's volumes
 * (REST /v1/volumes, docs/api.md "Volumes"). One REST call each; the
 * scheduler judges names and sizes and names what is wrong. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

#define VOLUME_USAGE                                                                           \
    "usage: airlock volume create NAME --size MiB | volume clone NAME VOLUME@SNAPSHOT\n"       \
    "       airlock volume ls | volume get NAME | volume rm NAME | volume grow NAME --size MiB\n" \
    "       airlock volume snapshot NAME SNAPSHOT | volume snapshot rm NAME SNAPSHOT\n"

/* The API's largest size_mb (1 TiB). */
#define VOLUME_SIZE_MAX_MB 1048576

static void print_volume(json_t *v)
{
    json_t *holder = json_object_get(v, "attached_sandbox");
    json_t *used = json_object_get(v, "used_bytes");
    printf("%-24s %9lld MiB  node %-12s  %s", json_string_value(json_object_get(v, "name")),
           (long long)json_integer_value(json_object_get(v, "size_mb")),
           *json_string_value(json_object_get(v, "node")) ? json_string_value(
                                                                json_object_get(v, "node"))
                                                          : "(unused)",
           json_is_string(holder) ? json_string_value(holder) : "-");
    if (used)
        printf("  used %lld bytes", (long long)json_integer_value(used));
    printf("\n");
    size_t i;
    json_t *s;
    json_array_foreach(json_object_get(v, "snapshots"), i, s)
        printf("  @%-22s %s\n", json_string_value(json_object_get(s, "name")),
               json_string_value(json_object_get(s, "created_at")));
}

static void print_volumes(json_t *answer)
{
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(answer, "volumes"), i, v)
        print_volume(v);
}

static void print_nothing(json_t *answer)
{
    (void)answer;
}

static void print_name(json_t *answer)
{
    printf("%s\n", json_string_value(json_object_get(answer, "name")));
}

/* "--size N" at argv[0..1] as size_mb into body; false after printing
 * the problem. */
static bool size_option(int argc, char **argv, json_t *body)
{
    long n = argc == 2 && strcmp(argv[0], "--size") == 0
                 ? cli_number_option("size", argv[1], VOLUME_SIZE_MAX_MB)
                 : -1;
    if (n < 0)
        return false;
    json_object_set_new(body, "size_mb", json_integer(n));
    return true;
}

int cmd_volume(struct cli *c, int argc, char **argv)
{
    const char *sub = argc > 1 ? argv[1] : "";
    char path[256];
    if (argc >= 3)
        snprintf(path, sizeof(path), "/v1/volumes/%.100s", argv[2]);
    if (strcmp(sub, "ls") == 0 && argc == 2)
        return cli_call_print(c, "GET", "/v1/volumes", NULL, 200, print_volumes);
    if (strcmp(sub, "get") == 0 && argc == 3)
        return cli_call_print(c, "GET", path, NULL, 200, print_volume);
    if (strcmp(sub, "rm") == 0 && argc == 3)
        return cli_call_print(c, "DELETE", path, NULL, 204, print_nothing);
    if (strcmp(sub, "clone") == 0 && argc == 4)
        return cli_call_print(c, "POST", "/v1/volumes",
                              json_pack("{s:s,s:s}", "name", argv[2], "from_snapshot", argv[3]),
                              201, print_name);
    if ((strcmp(sub, "create") == 0 || strcmp(sub, "grow") == 0) && argc == 5) {
        json_t *body = json_object();
        if (!size_option(2, argv + 3, body)) {
            json_decref(body);
            fprintf(stderr, VOLUME_USAGE);
            return CLI_EXIT_USAGE;
        }
        if (sub[0] == 'c') {
            json_object_set_new(body, "name", json_string(argv[2]));
            return cli_call_print(c, "POST", "/v1/volumes", body, 201, print_name);
        }
        strncat(path, "/grow", sizeof(path) - strlen(path) - 1);
        return cli_call_print(c, "POST", path, body, 200, print_volume);
    }
    if (strcmp(sub, "snapshot") == 0 && argc == 4) {
        strncat(path, "/snapshots", sizeof(path) - strlen(path) - 1);
        return cli_call_print(c, "POST", path, json_pack("{s:s}", "name", argv[3]), 201,
                              print_name);
    }
    if (strcmp(sub, "snapshot") == 0 && argc == 5 && strcmp(argv[2], "rm") == 0) {
        snprintf(path, sizeof(path), "/v1/volumes/%.100s/snapshots/%.100s", argv[3], argv[4]);
        return cli_call_print(c, "DELETE", path, NULL, 204, print_nothing);
    }
    fprintf(stderr, VOLUME_USAGE);
    return CLI_EXIT_USAGE;
}
