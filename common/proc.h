/* Looking processes up by command line and working directory, for finding
 * the QEMU processes a sandbox directory belongs to (leftover cleanup,
 * re-adoption, leak checks in tests). */
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

/* True when pid's working directory is the directory dir names (the same
 * inode: it follows renames, and holds for a process in another root). */
bool proc_cwd_is(pid_t pid, const char *dir);
/* Like proc_find: command line contains a, working directory is dir. */
size_t proc_find_in_dir(const char *a, const char *dir, pid_t *out, size_t max);

/* The start time of a live process (field 22 of /proc/<pid>/stat, clock
 * ticks since boot): with the pid it names one process, even after the pid
 * is reused. Returns -1 when the process is gone or a zombie. */
int proc_start_time(pid_t pid, unsigned long long *ticks);

#endif
