/* Feeding a running Exec from the CLI: stdin bytes, end of stdin and (with
 * a PTY) window resizes, each as an ExecInput call, from a thread of its
 * own while the main thread relays output. */
#ifndef AIRLOCK_VMHOSTCTL_EXEC_INPUT_H
#define AIRLOCK_VMHOSTCTL_EXEC_INPUT_H

#include "ctl.h"

#include <stdbool.h>

struct exec_input;

/* ctl must be connected. with_resize follows SIGWINCH. NULL (after a
 * message) when the thread cannot start. */
struct exec_input *exec_input_start(struct ctl *ctl, const char *sandbox_id, const char *exec_id,
                                    bool with_resize);
void exec_input_stop(struct exec_input *in);

#endif
