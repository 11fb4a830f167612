/* vmhostctl's usage text and usage errors (ctl.h), from the command list
 * (commands.h): a leaf the commands, the argument helpers and main.c
 * share. */
#include "commands.h"
#include "ctl.h"
#include "internal_token.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const struct command_usage {
    const char *name;
    const char *usage; /* what follows the name */
} usages[] = {
#define COMMAND_USAGE(name, run, usage) {name, usage},
    CTL_COMMANDS(COMMAND_USAGE)
#undef COMMAND_USAGE
};
#define N_USAGES (sizeof(usages) / sizeof(usages[0]))

void ctl_print_usage(FILE *out)
{
    fprintf(out,
            "usage: vmhostctl [--addr unix:/PATH | HOST:PORT] [--json] [--connect-timeout SECONDS]\n"
            "                 [--rpc-timeout SECONDS] [--token-file PATH] COMMAND [ARGS]\n"
            "The address defaults to $AIRLOCK_VMHOST_ADDR, else " CTL_DEFAULT_ADDR ".\n"
            "The token file (vmhost's --internal-token-file) defaults to\n"
            "$" INTERNAL_TOKEN_ENV ".\n"
            "With mutual TLS vmhostctl presents this node's vmhost certificate:\n"
            INTERNAL_TLS_USAGE
            "Commands:\n");
    for (size_t i = 0; i < N_USAGES; i++)
        fprintf(out, "  %-9s %s\n", usages[i].name, usages[i].usage);
}

static const struct command_usage *find_usage(const char *name)
{
    for (size_t i = 0; i < N_USAGES; i++)
        if (strcmp(usages[i].name, name) == 0)
            return &usages[i];
    return NULL;
}

int ctl_usage_error(const char *command, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("vmhostctl: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    const struct command_usage *cmd = command ? find_usage(command) : NULL;
    if (cmd)
        fprintf(stderr, "usage: vmhostctl %s%s%s\n", cmd->name, *cmd->usage ? " " : "", cmd->usage);
    else
        ctl_print_usage(stderr);
    return CTL_EXIT_USAGE;
}
