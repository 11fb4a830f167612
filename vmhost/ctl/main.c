/* vmhostctl [global options] COMMAND [args]: global options and dispatch. */
#include "args.h"
#include "commands.h"
#include "ctl.h"
#include "internal_token.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ctl_command {
    const char *name;
    ctl_command_fn run;
};

static const struct ctl_command commands[] = {
#define COMMAND(name, run, usage) {name, run},
    CTL_COMMANDS(COMMAND)
#undef COMMAND
};
#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static const struct ctl_command *find_command(const char *name)
{
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

/* Seconds from the command line as milliseconds; -1 when invalid. */
static int seconds_option_ms(const char *s)
{
    unsigned long secs;
    if (ctl_parse_uint(s, 24 * 3600, &secs) < 0 || secs == 0)
        return -1;
    return (int)secs * 1000;
}

/* Global options up to the command name; returns its index in argv, or
 * -1 after a usage error, 0 when help was printed. */
static int parse_global_options(struct ctl *ctl, int argc, char **argv)
{
    static const struct option options[] = {
        {"addr", required_argument, NULL, 'a'},
        {"json", no_argument, NULL, 'j'},
        {"connect-timeout", required_argument, NULL, 'c'},
        {"rpc-timeout", required_argument, NULL, 't'},
        {"token-file", required_argument, NULL, 'k'},
        INTERNAL_TLS_OPTIONS,
        {"help", no_argument, NULL, 'h'},
        {0},
    };
    int opt;
    /* "+": stop at the command name; its own options follow it. */
    while ((opt = ctl_next_option(argc, argv, "+:h", options)) != -1) {
        if (tls_files_option(&ctl->tls_files, opt, optarg))
            continue;
        switch (opt) {
        case 'a':
            ctl->addr = optarg;
            break;
        case 'j':
            ctl->json = true;
            break;
        case 'k':
            ctl->token_file = optarg;
            break;
        case 'c':
            if ((ctl->connect_timeout_ms = seconds_option_ms(optarg)) < 0) {
                ctl_usage_error(NULL, "invalid --connect-timeout '%s'", optarg);
                return -1;
            }
            break;
        case 't':
            if ((ctl->call_timeout_ms = seconds_option_ms(optarg)) < 0) {
                ctl_usage_error(NULL, "invalid --rpc-timeout '%s'", optarg);
                return -1;
            }
            break;
        case 'h':
            ctl_print_usage(stdout);
            return 0;
        default:
            return -1;
        }
    }
    if (optind >= argc) {
        ctl_usage_error(NULL, "missing command");
        return -1;
    }
    return optind;
}

int main(int argc, char **argv)
{
    const char *env_addr = getenv("AIRLOCK_VMHOST_ADDR");
    const char *env_token = getenv(INTERNAL_TOKEN_ENV);
    struct ctl ctl = {
        .addr = env_addr && *env_addr ? env_addr : CTL_DEFAULT_ADDR,
        .token_file = env_token && *env_token ? env_token : NULL,
        .connect_timeout_ms = 5000,
        .call_timeout_ms = 120000,
    };
    int cmd_index = parse_global_options(&ctl, argc, argv);
    if (cmd_index <= 0)
        return cmd_index == 0 ? 0 : CTL_EXIT_USAGE;
    const struct ctl_command *cmd = find_command(argv[cmd_index]);
    if (!cmd)
        return ctl_usage_error(NULL, "unknown command '%s'", argv[cmd_index]);

    optind = 0; /* GNU getopt: start over for the command's own options */
    int rc = cmd->run(&ctl, argc - cmd_index, argv + cmd_index);
    rpc_channel_close(ctl.channel);
    tls_credentials_free(ctl.tls);
    return rc;
}
