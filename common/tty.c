#include "tty.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* Signals that end the process while the terminal is raw: their handler
 * puts the terminal back first (tcsetattr is async-signal-safe). */
static const int restore_signals[] = { SIGTERM, SIGHUP, SIGQUIT };
#define N_RESTORE_SIGNALS (sizeof(restore_signals) / sizeof(*restore_signals))

static struct termios raw_saved; /* the mode to restore from a handler */
static volatile sig_atomic_t raw_active;
static struct sigaction previous[N_RESTORE_SIGNALS];

static void restore_and_die(int sig)
{
    if (raw_active)
        tcsetattr(STDIN_FILENO, TCSANOW, &raw_saved);
    raw_active = 0;
    signal(sig, SIG_DFL);
    raise(sig);
}

void tty_enter_raw(struct tty_state *tty)
{
    tty->raw = false;
    if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &tty->saved) < 0)
        return;
    raw_saved = tty->saved;
    raw_active = 1;
    struct sigaction sa = { .sa_handler = restore_and_die };
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < N_RESTORE_SIGNALS; i++)
        sigaction(restore_signals[i], &sa, &previous[i]);
    struct termios raw = tty->saved;
    cfmakeraw(&raw);
    if (tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0) {
        tty->raw = true;
        return;
    }
    tty_restore(tty);
}

void tty_restore(struct tty_state *tty)
{
    if (!raw_active)
        return;
    if (tty->raw)
        tcsetattr(STDIN_FILENO, TCSANOW, &tty->saved);
    raw_active = 0;
    for (size_t i = 0; i < N_RESTORE_SIGNALS; i++)
        sigaction(restore_signals[i], &previous[i], NULL);
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

/* SIGWINCH only writes here; the reader does the rest. */
static int winch_pipe[2] = { -1, -1 };

static void on_sigwinch(int sig)
{
    (void)sig;
    int saved_errno = errno;
    if (write(winch_pipe[1], "w", 1) < 0) {
        /* full pipe: a resize is pending anyway */
    }
    errno = saved_errno;
}

int tty_winch_watch(void)
{
    if (winch_pipe[0] >= 0)
        return winch_pipe[0];
    if (pipe2(winch_pipe, O_CLOEXEC | O_NONBLOCK) < 0) {
        winch_pipe[0] = winch_pipe[1] = -1;
        return -1;
    }
    struct sigaction sa = { .sa_handler = on_sigwinch, .sa_flags = SA_RESTART };
    sigemptyset(&sa.sa_mask);
    sigaction(SIGWINCH, &sa, NULL);
    return winch_pipe[0];
}

void tty_winch_drain(void)
{
    char drain[64];
    while (winch_pipe[0] >= 0 && read(winch_pipe[0], drain, sizeof(drain)) > 0)
        ;
}

void tty_winch_unwatch(void)
{
    if (winch_pipe[0] < 0)
        return;
    signal(SIGWINCH, SIG_DFL);
    close(winch_pipe[0]);
    close(winch_pipe[1]);
    winch_pipe[0] = winch_pipe[1] = -1;
}
