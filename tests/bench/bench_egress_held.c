#include "bench_egress_held.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "netlab.h"
#include "netns.h"

#define HELD_PORT 8182
#define HELD_MAX 1024
#define HOLD_WAIT_MS 30000
#define HELD_BATCH 16
#define REQUEST "GET /held HTTP/1.1\r\nHost: allowed.test\r\n\r\n"

struct held_conns {
    int n;
    int clients[HELD_MAX];
    int sink_fd;
    int sunk[HELD_MAX];               /* the sink's side, read from once */
    atomic_int n_sunk;
    atomic_bool stop;
    pthread_t sink_thread;
    bool sink_started;
};

/* Accepts and reads each connection's request once, then keeps it. */
static void *sink_main(void *arg)
{
    struct held_conns *h = arg;
    while (!atomic_load(&h->stop) && atomic_load(&h->n_sunk) < h->n) {
        struct pollfd pfd = { .fd = h->sink_fd, .events = POLLIN };
        if (poll(&pfd, 1, 100) != 1)
            continue;
        int fd = accept4(h->sink_fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0)
            continue;
        char buf[512];
        struct pollfd rp = { .fd = fd, .events = POLLIN };
        if (poll(&rp, 1, HOLD_WAIT_MS) != 1 || read(fd, buf, sizeof(buf)) <= 0) {
            close(fd);
            continue;
        }
        h->sunk[atomic_load(&h->n_sunk)] = fd;
        atomic_fetch_add(&h->n_sunk, 1);
    }
    return NULL;
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* Until the sink holds n; -1 after HOLD_WAIT_MS. */
static int wait_sunk(struct held_conns *h, int n)
{
    for (long long end = now_ms() + HOLD_WAIT_MS; atomic_load(&h->n_sunk) < n;) {
        if (now_ms() > end) {
            fprintf(stderr, "bench egress: only %d of %d held connections reached the sink\n",
                    atomic_load(&h->n_sunk), n);
            return -1;
        }
        usleep(2000);
    }
    return 0;
}

/* In batches within the sandbox's pending share (32): each batch is
 * decided and spliced before the next. */
static int open_clients(void *arg)
{
    struct held_conns *h = arg;
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(HELD_PORT) };
    inet_pton(AF_INET, NETLAB_WEB1, &sa.sin_addr);
    for (int i = 0; i < h->n; i++) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        h->clients[i] = fd;
        if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
            send(fd, REQUEST, strlen(REQUEST), MSG_NOSIGNAL) < 0)
            return -1;
        if ((i + 1) % HELD_BATCH == 0 && wait_sunk(h, i + 1) < 0)
            return -1;
    }
    return wait_sunk(h, h->n);
}

struct held_conns *held_conns_open(int n)
{
    struct held_conns *h = calloc(1, sizeof(*h));
    if (!h || n > HELD_MAX) {
        free(h);
        return NULL;
    }
    h->n = n;
    h->sink_fd = -1;
    for (int i = 0; i < HELD_MAX; i++)
        h->clients[i] = -1;
    if ((h->sink_fd = netlab_inet_listen(NETLAB_WEB1, HELD_PORT, HELD_MAX)) < 0 ||
        pthread_create(&h->sink_thread, NULL, sink_main, h) != 0) {
        fprintf(stderr, "bench egress: held connections' sink did not start\n");
        goto fail;
    }
    h->sink_started = true;
    char err[256] = "";
    if (netns_run(netlab_ns_path(NETLAB_GUEST_NS), open_clients, h, err, sizeof(err)) < 0) {
        fprintf(stderr, "bench egress: opening %d held connections failed %s\n", n, err);
        goto fail;
    }
    return h;
fail:
    held_conns_close(h);
    return NULL;
}

void held_conns_close(struct held_conns *h)
{
    if (!h)
        return;
    atomic_store(&h->stop, true);
    if (h->sink_started)
        pthread_join(h->sink_thread, NULL);
    for (int i = 0; i < h->n; i++)
        if (h->clients[i] >= 0)
            close(h->clients[i]);
    for (int i = 0; i < atomic_load(&h->n_sunk); i++)
        close(h->sunk[i]);
    if (h->sink_fd >= 0)
        close(h->sink_fd);
    free(h);
}

int process_threads(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}
