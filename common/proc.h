/* Looking processes up by command line, for finding the QEMU processes a
 * sandbox directory belongs to (leftover cleanup, leak checks in tests). */
#ifndef AIRLOCK_PROC_H
#define AIRLOCK_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* /proc/<pid>/cmdline with the NUL separators turned into spaces; malloc'd,
 * or NULL when the process is gone. */
char *proc_cmdline(pid_t pid);

/* True when pid's command line contains both a and b (b may be NULL). */
bool proc_cmdline_matches(pid_t pid, const char *a, const char *b);

/* Stores up to max pids whose command line contains a and b (b may be NULL)
 * and returns how many matched in all. The calling process is skipped. */
size_t proc_find(const char *a, const char *b, pid_t *out, size_t max);

#endif
