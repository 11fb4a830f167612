/* airlock: the command-line client of the REST API. Parses the global
 * options and dispatches to the command; the commands live in cmd_*.c. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#define CLI_DEFAULT_URL "http://127.0.0.1:7070"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: airlock [--url URL] [--key KEY] [--ca-file PATH] [--json] COMMAND [ARGS]\n"
            "  --url URL    the gateway, http:// or https:// (env AIRLOCK_URL,\n"
            "               default " CLI_DEFAULT_URL ")\n"
            "  --key KEY    API key (env AIRLOCK_API_KEY)\n"
            "  --ca-file PATH  PEM CA certificates that https:// trusts (env AIRLOCK_CA_FILE,\n"
            "               default: the system's trust store); always verified\n"
            "  --json       machine-readable output (errors as JSON on stderr)\n"
            "commands:\n"
            "  create " CLI_CREATE_USAGE "\n"
            "               prints the new sandbox's id; S: seconds idle before it is suspended,\n"
            "               seconds after creation it is deleted (default: the server's)\n"
            "  ls\n"
            "  exec [--timeout S] ID -- CMD [ARG...]          streams output, exits with CMD's code\n"
            "  cp LOCAL ID:/path | cp ID:/path LOCAL             LOCAL - is stdin/stdout\n"
            "  pause ID | resume ID | suspend ID | rm ID\n"
            "  checkpoint ID NAME [--kind disk|full]            disk (default): restore cold-boots\n"
            "  restore ID NAME\n"
            "  fork ID [--count N] [--checkpoint NAME]          prints the new sandboxes' ids\n"
            "  port ID PORT [--expires SECONDS]                 the port's URL through the gateway\n"
            "                                                   (signed unless its ports are public)\n"
            "  shell ID [-- CMD [ARG...]]                       interactive shell on a PTY; exits with its code\n"
            "  logs [--tail BYTES] ID                           the sandbox's console output\n"
            "  template build -f SPEC.json                      build log on stderr, prints name:version\n"
            "  template ls | template rm NAME[:VERSION]\n"
            "  secret set NAME --host H [--host H]... [--header NAME] [--format 'Bearer {secret}']\n"
            "             [--sandbox ID] [--per-minute N] [--burst N] [--plaintext]  < value\n"
            "                                                   prints the id; --plaintext: plain HTTP too\n"
            "  secret ls [--sandbox ID] | secret rm NAME [--sandbox ID]\n"
            "  secret unlock --key-file F [--ttl S] | secret lock        BYOK projects\n"
            "  volume create NAME --size MiB | volume clone NAME VOLUME@SNAPSHOT\n"
            "  volume ls | volume get NAME | volume rm NAME | volume grow NAME --size MiB\n"
            "  volume snapshot NAME SNAPSHOT | volume snapshot rm NAME SNAPSHOT\n"
            "                                                   persistent disks; attach with\n"
            "                                                   create --volume NAME:/PATH[:ro]\n"
            "                                                   (NAME@SNAPSHOT: read-only)\n"
            "  quota show PROJECT                               limits and usage (a project key:\n"
            "                                                   its own project)\n"
            "  e2b-key                                          the key as E2B's SDKs take it\n"
            "                                                   (E2B_API_KEY; docs/e2b.md)\n"
            "admin key only:\n"
            "  project ls | project create NAME                 create prints the id\n"
            "  key ls PROJECT | key create PROJECT [--name N]   create prints the secret (once)\n"
            "  key rm PROJECT KEY_ID                            revokes it at once\n"
            "  quota set PROJECT --QUOTA N [--QUOTA N]...       QUOTA: sandboxes vcpus\n"
            "                                                   memory-mb checkpoints templates\n"
            "                                                   template-builds volumes volume-mb;\n"
            "                                                   N: a number,\n"
            "                                                   default or unlimited\n"
            "  node ls | node get ID                            nodes: state, capacity, sandboxes\n"
            "  node drain ID | node undrain ID                  no new work there / again\n");
}

static const char *env_or(const char *name, const char *fallback)
{
    const char *v = getenv(name);
    return v && *v ? v : fallback;
}

int main(int argc, char **argv)
{
    /* A closed stdout (airlock exec ... | head) ends the copy with an
     * error instead of killing us mid-write. */
    signal(SIGPIPE, SIG_IGN);
    static const struct option opts[] = {
        { "url", required_argument, NULL, 'u' },
        { "key", required_argument, NULL, 'k' },
        { "ca-file", required_argument, NULL, 'c' },
        { "json", no_argument, NULL, 'j' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    struct cli c = { .url = env_or("AIRLOCK_URL", CLI_DEFAULT_URL),
                     .key = env_or("AIRLOCK_API_KEY", NULL) };
    const char *ca_file = env_or("AIRLOCK_CA_FILE", NULL);
    int opt;
    /* "+": stop at the command, whose own options come after it. */
    while ((opt = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
        switch (opt) {
        case 'u': c.url = optarg; break;
        case 'k': c.key = optarg; break;
        case 'c': ca_file = optarg; break;
        case 'j': c.json = true; break;
        case 'h': usage(stdout); return CLI_EXIT_OK;
        default: usage(stderr); return CLI_EXIT_USAGE;
        }
    }
    if (optind >= argc) {
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    char err[512];
    if (http_target_parse(c.url, &c.target, err, sizeof(err)) < 0) {
        fprintf(stderr, "airlock: --url %s\n", err);
        return CLI_EXIT_USAGE;
    }
    if (ca_file && access(ca_file, R_OK) < 0) {
        fprintf(stderr, "airlock: --ca-file %s: %s\n", ca_file, strerror(errno));
        return CLI_EXIT_USAGE;
    }
    c.target.ca_file = ca_file;
    if (!c.key) {
        fprintf(stderr, "airlock: no API key: pass --key or set AIRLOCK_API_KEY"
                        " (`make up` prints the admin key)\n");
        return CLI_EXIT_USAGE;
    }
    const char *cmd = argv[optind];
    int cargc = argc - optind;
    char **cargv = argv + optind;
    if (strcmp(cmd, "create") == 0)
        return cmd_create(&c, cargc, cargv);
    if (strcmp(cmd, "ls") == 0)
        return cmd_ls(&c, cargc, cargv);
    if (strcmp(cmd, "exec") == 0)
        return cmd_exec(&c, cargc, cargv);
    if (strcmp(cmd, "cp") == 0)
        return cmd_cp(&c, cargc, cargv);
    if (strcmp(cmd, "checkpoint") == 0)
        return cmd_checkpoint(&c, cargc, cargv);
    if (strcmp(cmd, "restore") == 0)
        return cmd_restore(&c, cargc, cargv);
    if (strcmp(cmd, "fork") == 0)
        return cmd_fork(&c, cargc, cargv);
    if (strcmp(cmd, "port") == 0)
        return cmd_port(&c, cargc, cargv);
    if (strcmp(cmd, "shell") == 0)
        return cmd_shell(&c, cargc, cargv);
    if (strcmp(cmd, "logs") == 0)
        return cmd_logs(&c, cargc, cargv);
    if (strcmp(cmd, "template") == 0)
        return cmd_template(&c, cargc, cargv);
    if (strcmp(cmd, "secret") == 0)
        return cmd_secret(&c, cargc, cargv);
    if (strcmp(cmd, "project") == 0)
        return cmd_project(&c, cargc, cargv);
    if (strcmp(cmd, "key") == 0)
        return cmd_key(&c, cargc, cargv);
    if (strcmp(cmd, "quota") == 0)
        return cmd_quota(&c, cargc, cargv);
    if (strcmp(cmd, "volume") == 0)
        return cmd_volume(&c, cargc, cargv);
    if (strcmp(cmd, "node") == 0)
        return cmd_node(&c, cargc, cargv);
    if (strcmp(cmd, "e2b-key") == 0)
        return cmd_e2b_key(&c, cargc, cargv);
    if (strcmp(cmd, "pause") == 0 || strcmp(cmd, "resume") == 0 || strcmp(cmd, "suspend") == 0 ||
        strcmp(cmd, "rm") == 0)
        return cmd_lifecycle(&c, cmd, cargc, cargv);
    fprintf(stderr, "airlock: unknown command \"%s\"\n", cmd);
    usage(stderr);
    return CLI_EXIT_USAGE;
}
