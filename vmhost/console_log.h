/* A VM's serial console, kept by vmhost, bounded. QEMU writes the console
 * to a socket in its jail (RUN/vm/console.sock), never to a file: a thread
 * here reads it and appends to RUN/console.log, which vmhost alone writes.
 * When the file would pass max_bytes it is rewritten with its newest half,
 * so `cat /dev/zero > /dev/console` in a guest costs that much disk and no
 * more (the older bytes go: a console is read from its end). */
#ifndef AIRLOCK_CONSOLE_LOG_H
#define AIRLOCK_CONSOLE_LOG_H

#include <stddef.h>

struct console_log;

/* Connects to QEMU's console socket and starts keeping log_path. -1 with a
 * message when the socket cannot be reached. */
int console_log_attach(const char *socket_path, const char *log_path, size_t max_bytes,
                       struct console_log **out, char *err, size_t errlen);

/* The VM's directory was renamed: the log follows. */
int console_log_move(struct console_log *cl, const char *log_path, char *err, size_t errlen);

/* Waits up to timeout_ms until QEMU closed its end (QEMU has ended) and
 * everything it wrote is in the file. */
void console_log_drain(struct console_log *cl, int timeout_ms);

/* Stops keeping the log (what was read is in the file) and frees. NULL is
 * fine. */
void console_log_detach(struct console_log *cl);

#endif
