/* A named template's steps inside its build VM (template_named.c), over the
 * VM's guest channel: files written in, directories made, commands run
 * with their output as build log lines, the start command left running. */
#ifndef AIRLOCK_TEMPLATE_GUEST_H
#define AIRLOCK_TEMPLATE_GUEST_H

#include <protobuf-c/protobuf-c.h>
#include <stddef.h>

struct guest_channel;

/* Receives one line of the build log (no newline, valid UTF-8). */
typedef void (*template_log_fn)(void *arg, const char *line);

/* How run commands and the start command are run. */
struct template_guest_exec {
    const ProtobufCBinaryData *env; /* "K=V" entries */
    size_t n_env;
    const char *cwd;                /* "" = root's home */
    int timeout_ms;                 /* run commands only; the guest kills the group after it */
};

/* Each returns 0 on success, 1 when the guest refused or the command
 * failed (the spec's fault: err says why), -1 when the guest could not be
 * reached. */

/* Writes len bytes to path (parents made, atomic), with mode (0 = 0644). */
int template_guest_write_file(struct guest_channel *ch, const char *path, const void *data,
                              size_t len, unsigned mode, char *err, size_t errlen);

/* mkdir -p path. */
int template_guest_mkdir(struct guest_channel *ch, const char *path, char *err, size_t errlen);

/* Runs `sh -c cmd` as root; each line of its output (stdout and stderr
 * together) goes to log prefixed with "| ". 1 with err naming the exit
 * code, signal or timeout when it did not exit 0. */
int template_guest_run(struct guest_channel *ch, const char *cmd,
                       const struct template_guest_exec *how, template_log_fn log, void *log_arg,
                       char *err, size_t errlen);

/* Starts `sh -c cmd` as a background process (it outlives the channel);
 * *pid gets its pid. */
int template_guest_start(struct guest_channel *ch, const char *cmd,
                         const struct template_guest_exec *how, int *pid, char *err,
                         size_t errlen);

/* Copies text into out (outlen > 0) as one log line: invalid UTF-8 and
 * control characters (but tabs) become '?'. */
void template_log_line_clean(const char *text, size_t len, char *out, size_t outlen);

#endif
