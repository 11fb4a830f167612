/* Processes and cleanup for tests that start real services: each one is
 * spawned with its output in a log file, stopped by its pid, and a failing
 * test (exit or SIGINT/SIGTERM) still runs the cleanup. */
#ifndef AIRLOCK_TEST_PROC_H
#define AIRLOCK_TEST_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Runs fn at exit and on SIGINT/SIGTERM (then dies of the signal). Call
 * again after code that installed its own handlers to take them back. */
void test_cleanup_install(void (*fn)(void));

/* The exit code of a test program that cannot run on this machine
 * (ctest's SKIP_RETURN_CODE). */
#define TEST_SKIPPED 77

/* Whether this process runs as root; when not, prints "<program> needs
 * root (<why>); skipped" first. */
bool test_have_root(const char *program, const char *why);

/* mkdtemp("/tmp/<prefix>-XXXXXX"), world-searchable. 0 or -1. */
int test_temp_dir(char *dir, size_t len, const char *prefix);

/* A TCP port on 127.0.0.1 free a moment ago, or -1. */
int test_free_port(void);
/* Whether something accepts connections on 127.0.0.1:port. */
bool test_port_answers(int port);

/* Starts argv with stdout+stderr appended to dir/log_name. */
pid_t test_spawn(const char *const argv[], const char *dir, const char *log_name);

/* TERM, then KILL after 30 s; -1 unless it exited 0 (or, when !strict,
 * exited at all: nats-server exits 1 on TERM). Prints the log tail when
 * it did not stop cleanly. */
int test_stop_pid(pid_t *pid, const char *dir, const char *log_name, bool strict);

#endif
