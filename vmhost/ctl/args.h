/* Command-line parsing helpers shared by the commands. */
#ifndef AIRLOCK_VMHOSTCTL_ARGS_H
#define AIRLOCK_VMHOSTCTL_ARGS_H

#include <getopt.h>
#include <stdint.h>

/* Returned by ctl_next_option after it printed a usage error. */
#define CTL_BAD_OPTION (-2)

/* getopt_long over a command's argv (argv[0] is the command's name): the
 * next option, -1 after the last one (optind then indexes the first
 * operand; a "--" ends the options), or CTL_BAD_OPTION. shortopts must
 * start with ":" so a missing value is told apart from an unknown option. */
int ctl_next_option(int argc, char **argv, const char *shortopts, const struct option *longopts);

/* 0 when exactly n operands follow the options, else a usage error
 * (CTL_EXIT_USAGE). */
int ctl_expect_operands(int argc, char **argv, int n);
/* For commands without options: ctl_expect_operands after checking that
 * no option was given. */
int ctl_operands_only(int argc, char **argv, int n);

/* Each returns 0, or -1 when s is not a valid value. */
int ctl_parse_uint(const char *s, unsigned long max, unsigned long *out);
int ctl_parse_int32(const char *s, int32_t *out);
/* Octal permission bits, e.g. 0644 or 755. */
int ctl_parse_mode(const char *s, uint32_t *out);
/* TERM, SIGTERM or 15. */
int ctl_parse_signal(const char *s, int32_t *out);

#endif
