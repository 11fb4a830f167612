#include "test_proc.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "fsutil.h"
#include "pg_test.h"

static void (*cleanup_fn)(void);

static void cleanup_at_exit(void)
{
    if (cleanup_fn)
        cleanup_fn();
}

static void cleanup_on_signal(int sig)
{
    cleanup_at_exit();
    signal(sig, SIG_DFL);
    raise(sig);
}

void test_cleanup_install(void (*fn)(void))
{
    if (!cleanup_fn)
        atexit(cleanup_at_exit);
    cleanup_fn = fn;
    signal(SIGINT, cleanup_on_signal);
    signal(SIGTERM, cleanup_on_signal);
}

int test_temp_dir(char *dir, size_t len, const char *prefix)
{
    snprintf(dir, len, "/tmp/%s-XXXXXX", prefix);
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return -1;
    }
    /* Services that drop privileges (PostgreSQL) reach their files below. */
    chmod(dir, 0755);
    return 0;
}

bool test_have_root(const char *program, const char *why)
{
    if (geteuid() == 0)
        return true;
    fprintf(stderr, "%s needs root (%s); skipped\n", program, why);
    return false;
}

/* Starts argv with stdout+stderr appended to dir/log_name. */
pid_t test_spawn(const char *const argv[], const char *dir, const char *log_name)
{
    char log[PATH_MAX];
    fs_path(log, sizeof(log), "%s/%s", dir, log_name);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    return pid;
}

/* TERM, then KILL after 30 s; -1 unless it exited 0 (or, when !strict,
 * exited at all: nats-server exits 1 on TERM). */
int test_stop_pid(pid_t *pid, const char *dir, const char *log_name, bool strict)
{
    if (*pid <= 0)
        return 0;
    kill(*pid, SIGTERM);
    int status = 0;
    int64_t deadline = clock_monotonic_ms() + 30000;
    while (waitpid(*pid, &status, WNOHANG) == 0) {
        if (clock_monotonic_ms() > deadline) {
            kill(*pid, SIGKILL);
            waitpid(*pid, &status, 0);
            break;
        }
        usleep(20 * 1000);
    }
    *pid = 0;
    if (WIFEXITED(status) && (WEXITSTATUS(status) == 0 || !strict))
        return 0;
    fprintf(stderr, "%s did not stop cleanly (wait status %d)\n", log_name, status);
    test_print_log_tail(dir, log_name);
    return -1;
}

int test_free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof(a);
    int port = -1;
    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    if (fd >= 0)
        close(fd);
    return port;
}

bool test_port_answers(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    bool ok = fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
    if (fd >= 0)
        close(fd);
    return ok;
}
