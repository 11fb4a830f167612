/* The local terminal for `exec --pty`. */
#ifndef AIRLOCK_VMHOSTCTL_TTY_H
#define AIRLOCK_VMHOSTCTL_TTY_H

#include <stdbool.h>
#include <stdint.h>
#include <termios.h>

struct tty_state {
    bool raw; /* saved holds the mode to restore */
    struct termios saved;
};

/* Puts stdin's terminal in raw mode, so keys (Ctrl-C included) reach the
 * remote PTY unchanged. Does nothing when stdin is not a terminal. */
void tty_enter_raw(struct tty_state *tty);
void tty_restore(struct tty_state *tty);

/* The local window size; false when there is no terminal. */
bool tty_window_size(uint32_t *rows, uint32_t *cols);

#endif
