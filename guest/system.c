/* Health, clock, entropy and hostname: what the host refreshes after a
 * restore, one at a time or all at once (SessionInit, which also brings the
 * sandbox CA: trust_store.h). */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <linux/random.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "guestd_state.h"
#include "guestd_version.h"
#include "request_handlers.h"
#include "send.h"
#include "trust_store.h"

#define ENTROPY_MAX_BYTES (64u << 10)
#define STEP_MSG_MAX 200

void health_request(struct guestd *g, uint32_t id, const GuestFrame *frame)
{
    (void)frame;
    Airlock__Guest__V1__Health h = AIRLOCK__GUEST__V1__HEALTH__INIT;
    h.ready = true;
    h.last_activity_unix_ms = g->last_activity_unix_ms;
    h.uptime_ms = (uint64_t)(clock_monotonic_ms() - g->started_ms);
    h.now_unix_ms = unix_now_ms();
    h.guestd_version = GUESTD_VERSION;
    GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
    f.stream_id = id;
    f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_HEALTH;
    f.health = &h;
    guestd_send(g, &f);
}

/* Each step returns 0 or an errno and leaves a message naming the step in
 * msg: the single-step requests and SessionInit share them. */
static int set_clock(int64_t unix_ns, char *msg, size_t len)
{
    if (unix_ns <= 0) {
        snprintf(msg, len, "set clock: invalid time %lld ns", (long long)unix_ns);
        return EINVAL;
    }
    struct timespec ts = { .tv_sec = unix_ns / 1000000000, .tv_nsec = unix_ns % 1000000000 };
    if (clock_settime(CLOCK_REALTIME, &ts) < 0) {
        int err = errno;
        snprintf(msg, len, "set clock: %s", strerror(err));
        return err;
    }
    return 0;
}

int entropy_device_open(void)
{
    static int fd = -1;
    if (fd < 0)
        fd = open("/dev/urandom", O_WRONLY | O_CLOEXEC);
    return fd;
}

static int add_entropy(const ProtobufCBinaryData *data, char *msg, size_t len)
{
    if (data->len == 0 || data->len > ENTROPY_MAX_BYTES) {
        snprintf(msg, len, "add entropy: need 1 to %u bytes, got %zu", ENTROPY_MAX_BYTES,
                 data->len);
        return EINVAL;
    }
    int err = 0;
    int fd;
    struct rand_pool_info *info = malloc(sizeof(*info) + data->len);
    if (!info) {
        err = ENOMEM;
        goto out;
    }
    if ((fd = entropy_device_open()) < 0) {
        err = errno;
        goto out;
    }
    /* Writing to /dev/urandom mixes bytes in but credits nothing. */
    info->entropy_count = (int)(data->len * 8);
    info->buf_size = (int)data->len;
    memcpy(info->buf, data->data, data->len);
    /* Crediting alone does not reseed a CRNG that is already initialised:
     * clones restored from one snapshot would keep producing the same bytes
     * until the next timed reseed. */
    if (ioctl(fd, RNDADDENTROPY, info) < 0 || ioctl(fd, RNDRESEEDCRNG) < 0)
        err = errno;
out:
    if (info)
        explicit_bzero(info->buf, data->len);
    free(info);
    if (err)
        snprintf(msg, len, "add entropy: %s", strerror(err));
    return err;
}

static bool hostname_valid(const char *h)
{
    size_t n = strlen(h);
    if (n == 0 || n > 64)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((h[i] >= 'a' && h[i] <= 'z') || (h[i] >= 'A' && h[i] <= 'Z') ||
              (h[i] >= '0' && h[i] <= '9') || h[i] == '-' || h[i] == '_' || h[i] == '.'))
            return false;
    return true;
}

static int set_hostname(const char *hostname, char *msg, size_t len)
{
    if (!hostname_valid(hostname)) {
        snprintf(msg, len, "set hostname: \"%.80s\" is not 1-64 characters of a-z A-Z 0-9 - _ .",
                 hostname);
        return EINVAL;
    }
    if (sethostname(hostname, strlen(hostname)) < 0) {
        int err = errno;
        snprintf(msg, len, "set hostname: %s", strerror(err));
        return err;
    }
    return 0;
}

/* Result{0} or Result{err, msg}. */
static void send_step_result(struct guestd *g, uint32_t id, int err, const char *msg)
{
    if (err)
        guestd_send_result(g, id, err, "%s", msg);
    else
        guestd_send_result(g, id, 0, NULL);
}

void set_clock_request(struct guestd *g, uint32_t id, const GuestFrame *frame)
{
    const Airlock__Guest__V1__SetClock *r = frame->set_clock;
    char msg[STEP_MSG_MAX];
    send_step_result(g, id, set_clock(r->unix_ns, msg, sizeof(msg)), msg);
}

void add_entropy_request(struct guestd *g, uint32_t id, const GuestFrame *frame)
{
    const Airlock__Guest__V1__AddEntropy *r = frame->add_entropy;
    char msg[STEP_MSG_MAX];
    send_step_result(g, id, add_entropy(&r->data, msg, sizeof(msg)), msg);
}

void set_hostname_request(struct guestd *g, uint32_t id, const GuestFrame *frame)
{
    const Airlock__Guest__V1__SetHostname *r = frame->set_hostname;
    char msg[STEP_MSG_MAX];
    send_step_result(g, id, set_hostname(r->hostname, msg, sizeof(msg)), msg);
}

void session_init_request(struct guestd *g, uint32_t id, const GuestFrame *frame)
{
    const Airlock__Guest__V1__SessionInit *r = frame->session_init;
    char msg[STEP_MSG_MAX];
    /* Same order as the separate requests it replaces; the first failure
     * stops the rest, so the host knows exactly which steps took effect. */
    int err = set_clock(r->unix_ns, msg, sizeof(msg));
    if (!err)
        err = add_entropy(&r->entropy, msg, sizeof(msg));
    if (!err)
        err = set_hostname(r->hostname, msg, sizeof(msg));
    if (!err)
        err = trust_store_set_ca(&trust_store_system, r->trusted_ca_pem, msg, sizeof(msg));
    if (err) {
        guestd_send_result(g, id, err, "session init: %s", msg);
        return;
    }
    health_request(g, id, frame);
}
