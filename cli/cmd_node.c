/* airlock node ls|get|drain|undrain (admin): the nodes and their drain
 * state (REST /v1/nodes). ls: one line per node; get, drain and undrain
 * print the node, drain and undrain as it is after the call. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

#define NODE_USAGE                                                                        \
    "usage: airlock node ls | airlock node get ID | airlock node drain ID | "           \
    "airlock node undrain ID\n"

static const char *str(json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

static long long num(json_t *o, const char *key)
{
    return (long long)json_integer_value(json_object_get(o, key));
}

/* "running=2 paused=1", or "-" when it holds none. */
static void print_counts(json_t *counts)
{
    const char *state;
    json_t *n;
    int printed = 0;
    json_object_foreach(counts, state, n)
        printf("%s%s=%lld", printed++ ? " " : "", state, (long long)json_integer_value(n));
    printf("%s\n", printed ? "" : "-");
}

static void print_nodes(json_t *answer)
{
    printf("%-20s %-9s %-5s %-11s %-15s %s\n", "ID", "STATE", "LIVE", "VCPUS", "MEMORY_MB",
           "SANDBOXES");
    size_t i;
    json_t *n;
    json_array_foreach(json_object_get(answer, "nodes"), i, n) {
        json_t *cap = json_object_get(n, "capacity");
        char vcpus[32], memory[48];
        snprintf(vcpus, sizeof(vcpus), "%lld/%lld", num(cap, "vcpus_committed"),
                 num(cap, "vcpus_limit"));
        snprintf(memory, sizeof(memory), "%lld/%lld", num(cap, "memory_committed_mb"),
                 num(cap, "memory_limit_mb"));
        printf("%-20s %-9s %-5s %-11s %-15s ", str(n, "id"), str(n, "state"),
               json_is_true(json_object_get(n, "live")) ? "yes" : "no", vcpus, memory);
        print_counts(json_object_get(n, "sandboxes"));
    }
}

static void print_node(json_t *n)
{
    json_t *cap = json_object_get(n, "capacity");
    printf("id:              %s\n", str(n, "id"));
    printf("state:           %s\n", str(n, "state"));
    printf("live:            %s (last heartbeat %s)\n",
           json_is_true(json_object_get(n, "live")) ? "yes" : "no", str(n, "last_heartbeat_at"));
    if (*str(n, "state_changed_at"))
        printf("state changed:   %s by %s\n", str(n, "state_changed_at"),
               str(n, "state_changed_by"));
    printf("vCPUs:           %lld of %lld committed\n", num(cap, "vcpus_committed"),
           num(cap, "vcpus_limit"));
    printf("memory:          %lld of %lld MiB committed, %lld MiB free on the host\n",
           num(cap, "memory_committed_mb"), num(cap, "memory_limit_mb"),
           num(cap, "free_memory_mb"));
    printf("sandbox records: %lld of %lld\n", num(cap, "sandbox_records"),
           num(cap, "sandbox_slots"));
    printf("sandboxes:       ");
    print_counts(json_object_get(n, "sandboxes"));
    printf("templates:      ");
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(n, "templates"), i, t)
        printf(" %s", json_string_value(t));
    printf("%s\n", json_array_size(json_object_get(n, "templates")) ? "" : " -");
}

int cmd_node(struct cli *c, int argc, char **argv)
{
    const char *sub = argc > 1 ? argv[1] : "";
    if (strcmp(sub, "ls") == 0 && argc == 2)
        return cli_call_print(c, "GET", "/v1/nodes", NULL, 200, print_nodes);
    char path[200];
    if (argc == 3 && strcmp(sub, "get") == 0) {
        snprintf(path, sizeof(path), "/v1/nodes/%.128s", argv[2]);
        return cli_call_print(c, "GET", path, NULL, 200, print_node);
    }
    if (argc == 3 && (strcmp(sub, "drain") == 0 || strcmp(sub, "undrain") == 0)) {
        snprintf(path, sizeof(path), "/v1/nodes/%.128s/%s", argv[2], sub);
        return cli_call_print(c, "POST", path, NULL, 200, print_node);
    }
    fprintf(stderr, NODE_USAGE);
    return CLI_EXIT_USAGE;
}
