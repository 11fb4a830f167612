/* The local terminal of an interactive client (vmhostctl exec --pty,
 * airlock shell): raw mode that is restored on every way out, the window
 * size, and window changes (SIGWINCH) as a readable file descriptor. */
#ifndef AIRLOCK_TTY_H
#define AIRLOCK_TTY_H

#include <stdbool.h>
#include <stdint.h>
#include <termios.h>

struct tty_state {
    bool raw; /* saved holds the mode to restore */
    struct termios saved;
};

/* Puts stdin's terminal in raw mode, so keys (Ctrl-C included) reach the
 * remote PTY unchanged. Does nothing when stdin is not a terminal. Until
 * tty_restore(), a SIGTERM, SIGHUP or SIGQUIT restores the terminal before
 * it ends the process as usual. One tty_state at a time. */
void tty_enter_raw(struct tty_state *tty);
void tty_restore(struct tty_state *tty);

/* The local window size; false when there is no terminal. */
bool tty_window_size(uint32_t *rows, uint32_t *cols);

/* Window changes: after tty_winch_watch() the returned descriptor becomes
 * readable on every SIGWINCH (-1 when it cannot be set up);
 * tty_winch_drain() empties it, tty_winch_unwatch() undoes the watch. */
int tty_winch_watch(void);
void tty_winch_drain(void);
void tty_winch_unwatch(void);

#endif
