/* airlock shell ID [-- CMD...]: an interactive shell in the sandbox. It is
 * a background process on a PTY (POST …/processes with "tty"): its output
 * SSE is relayed to our stdout, and a second thread forwards what we read
 * from stdin (raw mode: Ctrl-C is the byte 0x03, which the remote PTY turns
 * into SIGINT), window changes (SIGWINCH → …/resize) and a hang-up
 * (SIGTERM/SIGHUP/SIGINT → SIGHUP to the shell). Exits with the shell's
 * code. */
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "tty.h"

#define SHELL_STDIN_CHUNK 4096
/* bash where the image has it, else sh; a login shell either way. */
#define SHELL_DEFAULT_SCRIPT "command -v bash >/dev/null 2>&1 && exec bash -l; exec sh -l"

struct shell {
    const struct cli *c;
    const char *id;
    char proc_path[256];         /* /v1/sandboxes/ID/processes/PID */
    int wake[2];                 /* main → input thread: stop */
    struct http_response *output; /* the output stream */
    pthread_t thread;
};

/* SIGTERM/SIGHUP/SIGINT while the shell runs: written here, handled by
 * the input thread. */
static int hangup_pipe[2] = { -1, -1 };

static void on_hangup(int sig)
{
    (void)sig;
    int saved = errno;
    if (write(hangup_pipe[1], "h", 1) < 0) {
        /* a hang-up is pending anyway */
    }
    errno = saved;
}

/* POST sub-route of the process with body; true on 204. */
static bool post(struct shell *sh, const char *what, json_t *body)
{
    char path[300];
    snprintf(path, sizeof(path), "%s/%s", sh->proc_path, what);
    json_t *answer = NULL;
    int status = cli_call(sh->c, "POST", path, body, &answer);
    json_decref(answer);
    return status == 204;
}

static bool forward_stdin(struct shell *sh, bool *open)
{
    unsigned char buf[SHELL_STDIN_CHUNK];
    ssize_t n = read(STDIN_FILENO, buf, sizeof(buf));
    if (n < 0)
        return errno == EINTR || errno == EAGAIN;
    if (n == 0) {
        *open = false;
        return post(sh, "stdin", json_pack("{s:b}", "eof", 1));
    }
    /* Bytes, not text: a read may end inside a UTF-8 sequence. */
    char b64[4 * ((SHELL_STDIN_CHUNK + 2) / 3) + 1];
    EVP_EncodeBlock((unsigned char *)b64, buf, (int)n);
    return post(sh, "stdin", json_pack("{s:s}", "data_b64", b64));
}

static void forward_resize(struct shell *sh)
{
    tty_winch_drain();
    uint32_t rows, cols;
    if (tty_window_size(&rows, &cols))
        post(sh, "resize", json_pack("{s:I,s:I}", "rows", (json_int_t)rows, "cols",
                                     (json_int_t)cols));
}

/* The remote shell gets SIGHUP and ends, which ends the output stream;
 * if it cannot be told, the stream is cut here instead. */
static void hang_up(struct shell *sh)
{
    char drain[16];
    while (read(hangup_pipe[0], drain, sizeof(drain)) > 0)
        ;
    if (!post(sh, "signal", json_pack("{s:s}", "signal", "HUP")))
        http_cancel(sh->output);
}

static void *input_main(void *arg)
{
    struct shell *sh = arg;
    bool stdin_open = true, forwarding = true;
    int winch_fd = tty_winch_watch();
    for (;;) {
        struct pollfd fds[4] = {
            { .fd = sh->wake[0], .events = POLLIN },
            { .fd = stdin_open && forwarding ? STDIN_FILENO : -1, .events = POLLIN },
            { .fd = winch_fd, .events = POLLIN },
            { .fd = hangup_pipe[0], .events = POLLIN },
        };
        if (poll(fds, 4, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (fds[0].revents)
            break;
        /* A refused write means the shell is gone: its exit event is on
         * its way. */
        if (fds[1].revents)
            forwarding = forward_stdin(sh, &stdin_open);
        if (fds[2].revents)
            forward_resize(sh);
        if (fds[3].revents)
            hang_up(sh);
    }
    tty_winch_unwatch();
    return NULL;
}

static void hangup_watch(bool on)
{
    /* SIGINT only comes from outside: in raw mode Ctrl-C is a byte. */
    static const int sigs[] = { SIGTERM, SIGHUP, SIGINT };
    struct sigaction sa = { .sa_handler = on ? on_hangup : SIG_DFL };
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof(sigs) / sizeof(*sigs); i++)
        sigaction(sigs[i], &sa, NULL);
}

/* Starts the shell process; its pid, or 0 after reporting why not. */
static int start_shell(const struct cli *c, const char *id, json_t *cmd, int *rc)
{
    uint32_t rows = 24, cols = 80;
    tty_window_size(&rows, &cols);
    const char *term = getenv("TERM");
    json_t *body = json_pack("{s:o,s:b,s:b,s:I,s:I,s:{s:s}}", "cmd", cmd, "tty", 1, "stdin_open",
                             1, "rows", (json_int_t)rows, "cols", (json_int_t)cols, "env", "TERM",
                             term && *term ? term : "xterm");
    char path[256];
    snprintf(path, sizeof(path), "/v1/sandboxes/%.100s/processes", id);
    json_t *proc = NULL;
    int status = cli_call(c, "POST", path, body, &proc);
    int pid = status == 201 ? (int)json_integer_value(json_object_get(proc, "pid")) : 0;
    if (status > 0 && status != 201)
        *rc = cli_fail(c, status, proc, id);
    json_decref(proc);
    return pid;
}

/* Opens the output stream (SSE) of the shell process. */
static int attach_output(struct shell *sh, struct http_response *resp)
{
    char path[300];
    snprintf(path, sizeof(path), "%s/output", sh->proc_path);
    static const char *const headers[] = { "Accept: text/event-stream", NULL };
    struct http_request req = { .method = "GET", .path = path, .body_fd = -1 };
    if (cli_send(sh->c, &req, headers, resp) < 0)
        return -1;
    if (resp->status == 200)
        return 0;
    struct strbuf answer = { 0 };
    http_read_all(resp, &answer);
    json_t *err = answer.len ? json_loadb(answer.data, answer.len, 0, NULL) : NULL;
    cli_fail(sh->c, resp->status, err, sh->id);
    json_decref(err);
    strbuf_free(&answer);
    http_close(resp);
    return -1;
}

static int run(struct shell *sh, struct http_response *resp)
{
    if (pipe2(sh->wake, O_CLOEXEC) < 0 || pipe2(hangup_pipe, O_CLOEXEC | O_NONBLOCK) < 0) {
        fprintf(stderr, "airlock: %s\n", strerror(errno));
        post(sh, "signal", json_pack("{s:s}", "signal", "KILL"));
        return CLI_EXIT_ERROR;
    }
    sh->output = resp;
    struct tty_state tty = { 0 };
    tty_enter_raw(&tty);
    hangup_watch(true);
    int rc = CLI_EXIT_ERROR;
    if (pthread_create(&sh->thread, NULL, input_main, sh) != 0) {
        hangup_watch(false);
        tty_restore(&tty);
        fprintf(stderr, "airlock: cannot start the input thread\n");
        post(sh, "signal", json_pack("{s:s}", "signal", "HUP"));
        return rc;
    }
    rc = cli_relay_exec_events(resp);
    while (write(sh->wake[1], "x", 1) < 0 && errno == EINTR)
        ;
    pthread_join(sh->thread, NULL);
    hangup_watch(false);
    tty_restore(&tty);
    return rc;
}

int cmd_shell(struct cli *c, int argc, char **argv)
{
    if (argc < 2 || argv[1][0] == '-' || (argc > 2 && strcmp(argv[2], "--") != 0) ||
        argc == 3) {
        fprintf(stderr, "usage: airlock shell ID [-- CMD [ARG...]]\n");
        return CLI_EXIT_USAGE;
    }
    if (c->json) {
        fprintf(stderr, "airlock: shell is interactive and has no --json form; "
                        "use `airlock --json exec` for a command's result\n");
        return CLI_EXIT_USAGE;
    }
    struct shell sh = { .c = c, .id = argv[1], .wake = { -1, -1 } };
    json_t *cmd = json_array();
    if (argc > 3) {
        for (int i = 3; i < argc; i++)
            json_array_append_new(cmd, json_string(argv[i]));
    } else {
        json_array_append_new(cmd, json_string("sh"));
        json_array_append_new(cmd, json_string("-c"));
        json_array_append_new(cmd, json_string(SHELL_DEFAULT_SCRIPT));
    }
    int rc = CLI_EXIT_ERROR;
    int pid = start_shell(c, sh.id, cmd, &rc);
    if (!pid)
        return rc;
    snprintf(sh.proc_path, sizeof(sh.proc_path), "/v1/sandboxes/%.100s/processes/%d", sh.id, pid);
    struct http_response resp;
    if (attach_output(&sh, &resp) < 0) {
        post(&sh, "signal", json_pack("{s:s}", "signal", "KILL"));
        return CLI_EXIT_ERROR;
    }
    rc = run(&sh, &resp);
    http_close(&resp);
    for (int i = 0; i < 2; i++) {
        if (sh.wake[i] >= 0)
            close(sh.wake[i]);
        if (hangup_pipe[i] >= 0)
            close(hangup_pipe[i]);
        hangup_pipe[i] = -1;
    }
    return rc;
}
