#include "tty.h"

#include <sys/ioctl.h>
#include <unistd.h>

void tty_enter_raw(struct tty_state *tty)
{
    tty->raw = false;
    if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &tty->saved) < 0)
        return;
    struct termios raw = tty->saved;
    cfmakeraw(&raw);
    if (tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0)
        tty->raw = true;
}

void tty_restore(struct tty_state *tty)
{
    if (tty->raw)
        tcsetattr(STDIN_FILENO, TCSANOW, &tty->saved);
    tty->raw = false;
}

bool tty_window_size(uint32_t *rows, uint32_t *cols)
{
    struct winsize ws;
    if (ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) < 0 && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) < 0)
        return false;
    if (ws.ws_row == 0 || ws.ws_col == 0)
        return false;
    *rows = ws.ws_row;
    *cols = ws.ws_col;
    return true;
}
