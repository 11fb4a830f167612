/* airlock quota show|set PROJECT: a project's quotas and usage (REST
 * /v1/projects/{id}/quotas). show: the admin key, or a project key for
 * its own project; set: the admin key. The quotas' names are the API's:
 * each --NAME of set is sent as the field NAME ("-" as "_"), so the
 * gateway names one that is not a quota. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define QUOTA_USAGE                                                                          \
    "usage: airlock quota show PROJECT | airlock quota set PROJECT --QUOTA N [--QUOTA N]...\n" \
    "  QUOTA: sandboxes, vcpus, memory-mb, checkpoints, templates, template-builds, volumes,\n" \
    "         volume-mb\n"                                                                    \
    "  N: a number, default (the scheduler's default again) or unlimited\n"

static void print_quotas(json_t *answer)
{
    printf("%-16s %-20s %s\n", "QUOTA", "LIMIT", "USED");
    const char *name;
    json_t *q;
    json_object_foreach(json_object_get(answer, "quotas"), name, q) {
        json_int_t limit = json_integer_value(json_object_get(q, "limit"));
        char shown[48];
        if (limit < 0)
            snprintf(shown, sizeof(shown), "unlimited");
        else
            snprintf(shown, sizeof(shown), "%lld", (long long)limit);
        if (json_is_true(json_object_get(q, "is_default")))
            snprintf(shown + strlen(shown), sizeof(shown) - strlen(shown), " (default)");
        printf("%-16s %-20s %lld\n", name, shown,
               (long long)json_integer_value(json_object_get(q, "used")));
    }
}

/* A value of set: a number, "default" (0) or "unlimited" (-1); the
 * scheduler judges the number. false after printing the problem. */
static bool quota_value(const char *option, const char *text, json_int_t *out)
{
    if (strcmp(text, "default") == 0 || strcmp(text, "unlimited") == 0) {
        *out = text[0] == 'd' ? 0 : -1;
        return true;
    }
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || end == text || *end) {
        fprintf(stderr, "airlock: %s: \"%s\" is not a number, default or unlimited\n", option,
                text);
        return false;
    }
    *out = v;
    return true;
}

/* The --NAME N pairs of argv as the PUT body; NULL after printing the
 * problem. */
static json_t *quota_body(int argc, char **argv)
{
    json_t *body = json_object();
    for (int i = 0; i < argc; i += 2) {
        json_int_t v;
        if (strncmp(argv[i], "--", 2) != 0 || !argv[i][2] || i + 1 >= argc) {
            fprintf(stderr, "airlock: quota set: expected --QUOTA N, got \"%s\"\n", argv[i]);
            json_decref(body);
            return NULL;
        }
        if (!quota_value(argv[i], argv[i + 1], &v)) {
            json_decref(body);
            return NULL;
        }
        char field[64];
        snprintf(field, sizeof(field), "%s", argv[i] + 2);
        for (char *p = field; *p; p++)
            if (*p == '-')
                *p = '_';
        json_object_set_new(body, field, json_integer(v));
    }
    return body;
}

int cmd_quota(struct cli *c, int argc, char **argv)
{
    const char *sub = argc > 1 ? argv[1] : "";
    char path[200];
    if (argc >= 3)
        snprintf(path, sizeof(path), "/v1/projects/%.100s/quotas", argv[2]);
    if (strcmp(sub, "show") == 0 && argc == 3)
        return cli_call_print(c, "GET", path, NULL, 200, print_quotas);
    if (strcmp(sub, "set") == 0 && argc >= 5) {
        json_t *body = quota_body(argc - 3, argv + 3);
        return body ? cli_call_print(c, "PUT", path, body, 200, print_quotas) : CLI_EXIT_USAGE;
    }
    fprintf(stderr, QUOTA_USAGE);
    return CLI_EXIT_USAGE;
}
