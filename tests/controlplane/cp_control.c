#include "cp_control.h"

#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fsutil.h"
#include "test_proc.h"

/* A command line is short; a client that sends none in this time is cut. */
#define CONTROL_READ_TIMEOUT_MS 10000

int cp_control_open(struct cp_control *c, const struct cp_stack *st)
{
    struct sockaddr_un a = { .sun_family = AF_UNIX };
    c->fd = -1;
    if (fs_path(c->path, sizeof(c->path), "%s/control.sock", st->dir) < 0 ||
        strlen(c->path) >= sizeof(a.sun_path)) {
        fprintf(stderr, "cp_control: socket path too long\n");
        return -1;
    }
    memcpy(a.sun_path, c->path, strlen(c->path) + 1);
    c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (c->fd < 0 || bind(c->fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(c->fd, 4) < 0) {
        perror("cp_control: socket");
        cp_control_close(c);
        return -1;
    }
    return 0;
}

void cp_control_close(struct cp_control *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
}

static int kill_now(pid_t *pid)
{
    if (*pid <= 0)
        return -1;
    kill(*pid, SIGKILL);
    waitpid(*pid, NULL, 0);
    *pid = 0;
    return 0;
}

/* The pid of the part of the stack named name that runs as one process
 * of the harness's (egress: node's), or NULL. */
static pid_t *part_pid(struct cp_stack *st, struct cp_node *node, const char *name)
{
    if (strcmp(name, "scheduler") == 0)
        return &st->scheduler_pid;
    if (strcmp(name, "standby") == 0)
        return &st->standby_pid;
    if (strcmp(name, "gateway") == 0)
        return &st->gateway_pid;
    if (strcmp(name, "egress") == 0)
        return &node->egress_pid;
    if (strcmp(name, "vault") == 0)
        return &st->vault_pid;
    if (strcmp(name, "nats") == 0)
        return &st->nats_pid;
    return NULL;
}

/* Starts part name of part_pid's (not running). */
static int part_start(struct cp_stack *st, struct cp_node *node, const char *name)
{
    if (strcmp(name, "scheduler") == 0 || strcmp(name, "standby") == 0)
        return cp_stack_start_scheduler(st, strcmp(name, "standby") == 0);
    if (strcmp(name, "gateway") == 0)
        return cp_stack_start_gateway(st);
    if (strcmp(name, "egress") == 0)
        return cp_stack_start_egress(st, node);
    if (strcmp(name, "vault") == 0)
        return cp_stack_start_vault(st);
    return cp_stack_start_nats(st);
}

/* The node an egress or vmhost command names by a trailing index ("kill
 * vmhost 1"; none: the first), cut off cmd; NULL when there is no such node. */
static struct cp_node *command_node(struct cp_stack *st, char *cmd)
{
    char *space = strrchr(cmd, ' ');
    if (!space || space[1] < '0' || space[1] > '9' || space[2])
        return &st->nodes[0];
    size_t i = (size_t)(space[1] - '0');
    *space = '\0';
    return i < st->n_nodes ? &st->nodes[i] : NULL;
}

/* Runs one command; the answer line goes to out. */
static void run_command_line(struct cp_stack *st, char *cmd, char *out, size_t outlen)
{
    struct cp_node *node = command_node(st, cmd); /* the egress and vmhost commands' */
    if (!node) {
        snprintf(out, outlen, "error no such node in: %.100s\n", cmd);
        return;
    }
    int rc = -1;
    pid_t *pid;
    if (strcmp(cmd, "restart scheduler") == 0)
        rc = test_stop_pid(&st->scheduler_pid, st->dir, "scheduler.log", true) < 0
                 ? -1
                 : cp_stack_start_scheduler(st, false);
    else if (strcmp(cmd, "restart gateway") == 0)
        rc = test_stop_pid(&st->gateway_pid, st->dir, "gateway.log", true) < 0
                 ? -1
                 : cp_stack_start_gateway(st);
    else if (strcmp(cmd, "restart egress") == 0)
        rc = test_stop_pid(&node->egress_pid, st->dir, node->egress_log, true) < 0
                 ? -1
                 : cp_stack_start_egress(st, node);
    else if (strcmp(cmd, "restart postgres") == 0)
        rc = pg_test_restart(&st->pg);
    else if (strcmp(cmd, "restart vmhost") == 0)
        rc = itest_vmhost_crash_and_restart_with(&node->vmhost, node->vmhost_args);
    else if (strcmp(cmd, "stop-start vmhost") == 0) /* make down + make up, for the node */
        rc = itest_vmhost_restart_with(&node->vmhost, node->vmhost_args);
    else if (strcmp(cmd, "kill vmhost") == 0)
        rc = node->vmhost.pid > 0 ? (itest_vmhost_crash(&node->vmhost), 0) : -1;
    else if (strcmp(cmd, "start vmhost") == 0)
        rc = node->vmhost.pid > 0 ? -1 : itest_vmhost_respawn(&node->vmhost, node->vmhost_args);
    else if (strcmp(cmd, "kill postgres") == 0)
        rc = pg_test_crash(&st->pg);
    else if (strcmp(cmd, "start postgres") == 0)
        rc = st->pg.started ? -1 : pg_test_start_again(&st->pg);
    else if (strncmp(cmd, "kill ", 5) == 0 && (pid = part_pid(st, node, cmd + 5)))
        rc = kill_now(pid);
    else if (strncmp(cmd, "start ", 6) == 0 && (pid = part_pid(st, node, cmd + 6)))
        rc = *pid > 0 ? -1 : part_start(st, node, cmd + 6);
    else if (strcmp(cmd, "pids") == 0)
        rc = 0;
    else {
        snprintf(out, outlen, "error unknown command: %.100s\n", cmd);
        return;
    }
    if (rc < 0)
        snprintf(out, outlen, "error %.100s failed (see the harness's output)\n", cmd);
    else
        snprintf(out, outlen, "ok scheduler=%d standby=%d gateway=%d vmhost=%d\n",
                 (int)st->scheduler_pid, (int)st->standby_pid, (int)st->gateway_pid,
                 (int)node->vmhost.pid);
}

static void serve_one(struct cp_control *c, struct cp_stack *st)
{
    int fd = accept4(c->fd, NULL, NULL, SOCK_CLOEXEC);
    if (fd < 0)
        return;
    char cmd[256];
    size_t len = 0;
    struct pollfd p = { .fd = fd, .events = POLLIN };
    while (len < sizeof(cmd) - 1 && poll(&p, 1, CONTROL_READ_TIMEOUT_MS) == 1) {
        ssize_t n = read(fd, cmd + len, sizeof(cmd) - 1 - len);
        if (n <= 0)
            break;
        len += (size_t)n;
        if (memchr(cmd, '\n', len))
            break;
    }
    cmd[len] = '\0';
    cmd[strcspn(cmd, "\r\n")] = '\0';
    char out[512];
    fprintf(stderr, "cp_control: %s\n", cmd);
    run_command_line(st, cmd, out, sizeof(out));
    fprintf(stderr, "cp_control: %s", out);
    if (write(fd, out, strlen(out)) < 0)
        perror("cp_control: write");
    close(fd);
}

int cp_control_serve(struct cp_control *c, struct cp_stack *st, pid_t client)
{
    for (;;) {
        int status;
        if (waitpid(client, &status, WNOHANG) == client)
            return status;
        struct pollfd p = { .fd = c->fd, .events = POLLIN };
        if (poll(&p, 1, 200) == 1)
            serve_one(c, st);
    }
}
