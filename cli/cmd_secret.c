/* airlock secret set|ls|rm|unlock|lock: the project's credentials, which
 * egress injects into the sandboxes' requests (REST /v1/secrets, vault).
 * A secret's value and a BYOK key are read from stdin or a file, never
 * from the command line, which every user of the host can read (ps). */
#include <ctype.h>
#include <stdbool.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "cli.h"
#include "fsutil.h"

#define SECRET_VALUE_MAX 8192
#define SECRET_HOSTS_MAX 32
/* Bound of the rate and ttl options (the API checks the real limits). */
#define SECRET_COUNT_MAX 1000000
#define SECRET_SET_USAGE                                                                           \
    "usage: airlock secret set NAME --host H [--host H]... [--header NAME] [--format F]\n"         \
    "                          [--sandbox ID] [--per-minute N] [--burst N] [--plaintext]\n"     \
    "                          < value\n"                                                      \
    "  --plaintext  also into plain HTTP requests (the secret crosses the network in clear)"

/* The value on stdin, one trailing newline dropped; NULL after saying why. */
static char *read_value(void)
{
    char *v = malloc(SECRET_VALUE_MAX + 2);
    if (!v)
        return NULL;
    size_t n = fread(v, 1, SECRET_VALUE_MAX + 1, stdin);
    if (n > 0 && v[n - 1] == '\n')
        n--;
    if (n > 0 && v[n - 1] == '\r')
        n--;
    if (n == 0 || n > SECRET_VALUE_MAX) {
        fprintf(stderr, "airlock: the secret's value goes on stdin: 1..%d bytes\n",
                SECRET_VALUE_MAX);
        OPENSSL_cleanse(v, SECRET_VALUE_MAX + 2);
        free(v);
        return NULL;
    }
    v[n] = '\0';
    return v;
}

static int secret_set(struct cli *c, int argc, char **argv)
{
    static const struct option opts[] = {
        { "host", required_argument, NULL, 'H' },     { "header", required_argument, NULL, 'h' },
        { "format", required_argument, NULL, 'f' },   { "sandbox", required_argument, NULL, 's' },
        { "per-minute", required_argument, NULL, 'p' }, { "burst", required_argument, NULL, 'b' },
        { "plaintext", no_argument, NULL, 'P' },      { NULL, 0, NULL, 0 },
    };
    const char *hosts[SECRET_HOSTS_MAX], *header = "Authorization", *format = "Bearer {secret}",
               *sandbox = NULL;
    size_t n_hosts = 0;
    long per_minute = 0, burst = 0;
    bool plaintext = false;
    if (argc < 2 || argv[1][0] == '-') {
        fprintf(stderr, "%s\n", SECRET_SET_USAGE);
        return CLI_EXIT_USAGE;
    }
    const char *name = argv[1];
    /* The options follow NAME, which stands in for the program name. */
    argc--;
    argv++;
    int opt;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
        switch (opt) {
        case 'H':
            if (n_hosts == SECRET_HOSTS_MAX) {
                fprintf(stderr, "airlock: at most %d --host\n", SECRET_HOSTS_MAX);
                return CLI_EXIT_USAGE;
            }
            hosts[n_hosts++] = optarg;
            break;
        case 'h': header = optarg; break;
        case 'f': format = optarg; break;
        case 's': sandbox = optarg; break;
        case 'p': per_minute = cli_number_option("per-minute", optarg, SECRET_COUNT_MAX); break;
        case 'b': burst = cli_number_option("burst", optarg, SECRET_COUNT_MAX); break;
        case 'P': plaintext = true; break;
        default: fprintf(stderr, "%s\n", SECRET_SET_USAGE); return CLI_EXIT_USAGE;
        }
        if (per_minute < 0 || burst < 0)
            return CLI_EXIT_USAGE;
    }
    if (optind != argc || n_hosts == 0) {
        fprintf(stderr, "%s\n", SECRET_SET_USAGE);
        return CLI_EXIT_USAGE;
    }
    char *value = read_value();
    if (!value)
        return CLI_EXIT_USAGE;
    json_t *bindings = json_array();
    for (size_t i = 0; i < n_hosts; i++)
        json_array_append_new(bindings, json_pack("{s:s,s:s,s:s,s:b}", "host", hosts[i], "header",
                                                  header, "format", format, "plaintext",
                                                  plaintext));
    json_t *body = json_pack("{s:s,s:s,s:s,s:o}", "name", name, "value", value, "scope",
                             sandbox ? "sandbox" : "project", "bindings", bindings);
    OPENSSL_cleanse(value, strlen(value));
    free(value);
    if (sandbox)
        json_object_set_new(body, "sandbox_id", json_string(sandbox));
    if (per_minute)
        json_object_set_new(body, "rate_limit",
                            json_pack("{s:I,s:I}", "per_minute", (json_int_t)per_minute, "burst",
                                      (json_int_t)(burst ? burst : per_minute)));
    json_t *answer = NULL;
    /* cli_call steals body; its copy of the value is jansson's to free. */
    int status = cli_call(c, "POST", "/v1/secrets", body, &answer);
    int rc = CLI_EXIT_ERROR;
    if (status == 201) {
        if (c->json)
            cli_print_json(stdout, answer);
        else
            printf("%s\n", json_string_value(json_object_get(answer, "id")));
        rc = CLI_EXIT_OK;
    } else if (status > 0) {
        rc = cli_fail(c, status, answer, sandbox);
    }
    json_decref(answer);
    return rc;
}

/* "h1,h2" of a secret's bindings, in out. */
static void binding_hosts(json_t *secret, char *out, size_t outlen)
{
    size_t i, o = 0;
    json_t *b;
    out[0] = '\0';
    json_array_foreach(json_object_get(secret, "bindings"), i, b) {
        int n = snprintf(out + o, outlen - o, "%s%s", i ? "," : "",
                         json_string_value(json_object_get(b, "host")));
        if (n < 0 || (size_t)n >= outlen - o)
            break;
        o += (size_t)n;
    }
}

static int secret_ls(struct cli *c, int argc, char **argv)
{
    char path[256] = "/v1/secrets";
    if (argc == 3 && strcmp(argv[1], "--sandbox") == 0)
        snprintf(path, sizeof(path), "/v1/secrets?sandbox_id=%.100s", argv[2]);
    else if (argc != 1) {
        fprintf(stderr, "usage: airlock secret ls [--sandbox ID]\n");
        return CLI_EXIT_USAGE;
    }
    json_t *answer = NULL;
    int status = cli_call(c, "GET", path, NULL, &answer);
    int rc = CLI_EXIT_ERROR;
    if (status == 200 && c->json) {
        cli_print_json(stdout, answer);
        rc = CLI_EXIT_OK;
    } else if (status == 200) {
        printf("%-24s %-8s %-22s %-24s %s\n", "NAME", "SCOPE", "SANDBOX", "ID", "HOSTS");
        size_t i;
        json_t *s;
        json_array_foreach(json_object_get(answer, "secrets"), i, s) {
            char hosts[512];
            binding_hosts(s, hosts, sizeof(hosts));
            const char *sb = json_string_value(json_object_get(s, "sandbox_id"));
            printf("%-24s %-8s %-22s %-24s %s\n", json_string_value(json_object_get(s, "name")),
                   json_string_value(json_object_get(s, "scope")), sb && *sb ? sb : "-",
                   json_string_value(json_object_get(s, "id")), hosts);
        }
        rc = CLI_EXIT_OK;
    } else if (status > 0) {
        rc = cli_fail(c, status, answer, NULL);
    }
    json_decref(answer);
    return rc;
}

static int secret_rm(struct cli *c, int argc, char **argv)
{
    char path[320];
    if (argc == 2)
        snprintf(path, sizeof(path), "/v1/secrets/%.128s", argv[1]);
    else if (argc == 4 && strcmp(argv[2], "--sandbox") == 0)
        snprintf(path, sizeof(path), "/v1/secrets/%.128s?sandbox_id=%.100s", argv[1], argv[3]);
    else {
        fprintf(stderr, "usage: airlock secret rm NAME [--sandbox ID]\n");
        return CLI_EXIT_USAGE;
    }
    json_t *answer = NULL;
    int status = cli_call(c, "DELETE", path, NULL, &answer);
    int rc = CLI_EXIT_ERROR;
    if (status == 204) {
        if (c->json) {
            json_t *done = json_pack("{s:s,s:b}", "secret", argv[1], "deleted", 1);
            cli_print_json(stdout, done);
            json_decref(done);
        } else {
            printf("%s deleted\n", argv[1]);
        }
        rc = CLI_EXIT_OK;
    } else if (status > 0) {
        rc = cli_fail(c, status, answer, NULL);
    }
    json_decref(answer);
    return rc;
}

/* The BYOK key in a file: 64 hex digits (surrounding blanks ignored) in
 * out; -1 after saying why. */
static int read_key_file(const char *path, char out[65])
{
    char *text = NULL, err[512];
    size_t len = 0;
    if (fs_read_file(path, 4096, &text, &len, err, sizeof(err)) < 0) {
        fprintf(stderr, "airlock: --key-file: %s\n", err);
        return -1;
    }
    size_t start = 0, n = 0;
    while (start < len && isspace((unsigned char)text[start]))
        start++;
    while (start + n < len && isxdigit((unsigned char)text[start + n]))
        n++;
    bool ok = n == 64;
    for (size_t i = start + n; ok && i < len; i++)
        ok = isspace((unsigned char)text[i]);
    if (ok) {
        memcpy(out, text + start, 64);
        out[64] = '\0';
    }
    OPENSSL_cleanse(text, len);
    free(text);
    if (!ok)
        fprintf(stderr, "airlock: --key-file %s must hold the project's key as 64 hex digits\n",
                path);
    return ok ? 0 : -1;
}

static int secret_unlock(struct cli *c, int argc, char **argv, bool unlock)
{
    static const struct option opts[] = {
        { "key-file", required_argument, NULL, 'k' },
        { "ttl", required_argument, NULL, 't' },
        { NULL, 0, NULL, 0 },
    };
    const char *key_file = NULL;
    long ttl = 0;
    int opt;
    optind = 1;
    while (unlock && (opt = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
        if (opt == 'k')
            key_file = optarg;
        else if (opt != 't' || (ttl = cli_number_option("ttl", optarg, SECRET_COUNT_MAX)) < 0)
            return CLI_EXIT_USAGE;
    }
    if (unlock ? (!key_file || optind != argc) : argc != 1) {
        fprintf(stderr, unlock ? "usage: airlock secret unlock --key-file F [--ttl S]\n"
                               : "usage: airlock secret lock\n");
        return CLI_EXIT_USAGE;
    }
    json_t *body = NULL;
    if (unlock) {
        char key[65];
        if (read_key_file(key_file, key) < 0)
            return CLI_EXIT_USAGE;
        body = json_pack("{s:s}", "customer_key", key);
        OPENSSL_cleanse(key, sizeof(key));
        if (ttl)
            json_object_set_new(body, "ttl_seconds", json_integer(ttl));
    }
    json_t *answer = NULL;
    int status = cli_call(c, "POST", unlock ? "/v1/secrets/unlock" : "/v1/secrets/lock", body,
                          &answer);
    int rc = CLI_EXIT_ERROR;
    if (status == 200) {
        if (c->json)
            cli_print_json(stdout, answer);
        else if (unlock)
            printf("unlocked until %s\n", json_string_value(json_object_get(answer, "expires_at")));
        else
            printf("locked\n");
        rc = CLI_EXIT_OK;
    } else if (status > 0) {
        rc = cli_fail(c, status, answer, NULL);
    }
    json_decref(answer);
    return rc;
}

int cmd_secret(struct cli *c, int argc, char **argv)
{
    const char *sub = argc > 1 ? argv[1] : "";
    if (strcmp(sub, "set") == 0)
        return secret_set(c, argc - 1, argv + 1);
    if (strcmp(sub, "ls") == 0)
        return secret_ls(c, argc - 1, argv + 1);
    if (strcmp(sub, "rm") == 0)
        return secret_rm(c, argc - 1, argv + 1);
    if (strcmp(sub, "unlock") == 0 || strcmp(sub, "lock") == 0)
        return secret_unlock(c, argc - 1, argv + 1, strcmp(sub, "unlock") == 0);
    fprintf(stderr, "usage: airlock secret set|ls|rm|unlock|lock ...\n");
    return CLI_EXIT_USAGE;
}
