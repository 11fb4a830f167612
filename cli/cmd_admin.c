/* airlock project ls|create, airlock key ls|create|rm: the admin key's
 * projects and API keys (REST /v1/projects…). A new key's secret is
 * printed once, like the API shows it once. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char *str(json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

static void print_projects(json_t *answer)
{
    printf("%-24s %-30s %s\n", "ID", "NAME", "CREATED");
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(answer, "projects"), i, p)
        printf("%-24s %-30s %s\n", str(p, "id"), str(p, "name"), str(p, "created_at"));
}

static void print_project(json_t *answer)
{
    printf("%s\n", str(answer, "id"));
}

static void print_keys(json_t *answer)
{
    printf("%-22s %-20s %-5s %-26s %s\n", "ID", "NAME", "ADMIN", "CREATED", "REVOKED");
    size_t i;
    json_t *k;
    json_array_foreach(json_object_get(answer, "keys"), i, k)
        printf("%-22s %-20s %-5s %-26s %s\n", str(k, "id"), str(k, "name"),
               json_is_true(json_object_get(k, "admin")) ? "yes" : "no", str(k, "created_at"),
               *str(k, "revoked_at") ? str(k, "revoked_at") : "-");
}

/* The only time a key's secret is shown: the secret on stdout, its id on
 * stderr, so `$(airlock key create P)` captures just the key. */
static void print_new_key(json_t *answer)
{
    fprintf(stderr, "key %s (its secret is shown only now)\n", str(answer, "id"));
    printf("%s\n", str(answer, "key"));
}

static void print_nothing(json_t *answer)
{
    (void)answer;
}

int cmd_project(struct cli *c, int argc, char **argv)
{
    const char *sub = argc > 1 ? argv[1] : "";
    if (strcmp(sub, "ls") == 0 && argc == 2)
        return cli_call_print(c, "GET", "/v1/projects", NULL, 200, print_projects);
    if (strcmp(sub, "create") == 0 && argc == 3)
        return cli_call_print(c, "POST", "/v1/projects", json_pack("{s:s}", "name", argv[2]),
                              201, print_project);
    fprintf(stderr, "usage: airlock project ls | airlock project create NAME\n");
    return CLI_EXIT_USAGE;
}

int cmd_key(struct cli *c, int argc, char **argv)
{
    const char *sub = argc > 1 ? argv[1] : "";
    char path[320];
    if (strcmp(sub, "ls") == 0 && argc == 3) {
        snprintf(path, sizeof(path), "/v1/projects/%.100s/keys", argv[2]);
        return cli_call_print(c, "GET", path, NULL, 200, print_keys);
    }
    if (strcmp(sub, "create") == 0 && (argc == 3 || (argc == 5 && !strcmp(argv[3], "--name")))) {
        snprintf(path, sizeof(path), "/v1/projects/%.100s/keys", argv[2]);
        return cli_call_print(c, "POST", path,
                              json_pack("{s:s}", "name", argc == 5 ? argv[4] : ""), 201,
                              print_new_key);
    }
    if (strcmp(sub, "rm") == 0 && argc == 4) {
        snprintf(path, sizeof(path), "/v1/projects/%.100s/keys/%.100s", argv[2], argv[3]);
        int rc = cli_call_print(c, "DELETE", path, NULL, 204, print_nothing);
        if (rc == CLI_EXIT_OK && c->json) {
            json_t *done = json_pack("{s:s,s:b}", "key", argv[3], "revoked", 1);
            cli_print_json(stdout, done);
            json_decref(done);
        } else if (rc == CLI_EXIT_OK) {
            printf("%s revoked\n", argv[3]);
        }
        return rc;
    }
    fprintf(stderr, "usage: airlock key ls PROJECT | airlock key create PROJECT [--name N] | "
                    "airlock key rm PROJECT KEY_ID\n");
    return CLI_EXIT_USAGE;
}
