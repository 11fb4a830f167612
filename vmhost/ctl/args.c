#include "args.h"

#include "ctl.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int ctl_next_option(int argc, char **argv, const char *shortopts, const struct option *longopts)
{
    opterr = 0; /* errors are reported below, with the command's usage */
    int opt = getopt_long(argc, argv, shortopts, longopts, NULL);
    if (opt == '?') {
        ctl_usage_error(argv[0], "unknown option '%s'", argv[optind - 1]);
        return CTL_BAD_OPTION;
    }
    if (opt == ':') {
        ctl_usage_error(argv[0], "option '%s' needs a value", argv[optind - 1]);
        return CTL_BAD_OPTION;
    }
    return opt;
}

int ctl_expect_operands(int argc, char **argv, int n)
{
    if (argc - optind != n)
        return ctl_usage_error(argv[0], "expected %d argument%s", n, n == 1 ? "" : "s");
    return 0;
}

int ctl_operands_only(int argc, char **argv, int n)
{
    static const struct option none[] = {{0}};
    int opt = ctl_next_option(argc, argv, ":", none);
    if (opt == CTL_BAD_OPTION)
        return CTL_EXIT_USAGE;
    if (opt != -1)
        return ctl_usage_error(argv[0], "unexpected option '%s'", argv[optind - 1]);
    return ctl_expect_operands(argc, argv, n);
}

int ctl_parse_uint(const char *s, unsigned long max, unsigned long *out)
{
    if (!s || *s < '0' || *s > '9')
        return -1;
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || *end || v > max)
        return -1;
    *out = v;
    return 0;
}

int ctl_parse_int32(const char *s, int32_t *out)
{
    unsigned long v;
    if (ctl_parse_uint(s, INT32_MAX, &v) < 0)
        return -1;
    *out = (int32_t)v;
    return 0;
}

int ctl_parse_mode(const char *s, uint32_t *out)
{
    if (!s || *s < '0' || *s > '7')
        return -1;
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 8);
    if (errno || *end || v > 07777)
        return -1;
    *out = (uint32_t)v;
    return 0;
}

int ctl_parse_signal(const char *s, int32_t *out)
{
    if (ctl_parse_int32(s, out) == 0)
        return *out > 0 && *out < NSIG ? 0 : -1;
    if (strncasecmp(s, "SIG", 3) == 0)
        s += 3;
    for (int sig = 1; sig < NSIG; sig++) {
        const char *name = sigabbrev_np(sig);
        if (name && strcasecmp(name, s) == 0) {
            *out = sig;
            return 0;
        }
    }
    return -1;
}
