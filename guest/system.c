/* Health, clock, entropy and hostname: what the host refreshes after a
 * restore. */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <linux/random.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "guestd.h"
#include "guestd_internal.h"
#include "handlers.h"

#define ENTROPY_MAX_BYTES (64u << 10)

void health_request(struct guestd *g, uint32_t id)
{
    Airlock__Guest__V1__Health h = AIRLOCK__GUEST__V1__HEALTH__INIT;
    h.ready = true;
    h.last_activity_unix_ms = g->last_activity_unix_ms;
    h.uptime_ms = (uint64_t)(loop_now_ms() - g->started_ms);
    h.now_unix_ms = unix_now_ms();
    h.guestd_version = GUESTD_VERSION;
    GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
    f.stream_id = id;
    f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_HEALTH;
    f.health = &h;
    guestd_send(g, &f);
}

void set_clock_request(struct guestd *g, uint32_t id, const Airlock__Guest__V1__SetClock *r)
{
    if (r->unix_ns <= 0) {
        guestd_send_result(g, id, EINVAL, "set clock: invalid time %lld ns", (long long)r->unix_ns);
        return;
    }
    struct timespec ts = { .tv_sec = r->unix_ns / 1000000000, .tv_nsec = r->unix_ns % 1000000000 };
    if (clock_settime(CLOCK_REALTIME, &ts) < 0) {
        int err = errno;
        guestd_send_result(g, id, err, "set clock: %s", strerror(err));
        return;
    }
    guestd_send_result(g, id, 0, NULL);
}

void add_entropy_request(struct guestd *g, uint32_t id, const Airlock__Guest__V1__AddEntropy *r)
{
    if (r->data.len == 0 || r->data.len > ENTROPY_MAX_BYTES) {
        guestd_send_result(g, id, EINVAL, "add entropy: need 1 to %u bytes, got %zu",
                           ENTROPY_MAX_BYTES, r->data.len);
        return;
    }
    struct rand_pool_info *info = malloc(sizeof(*info) + r->data.len);
    int fd = open("/dev/urandom", O_WRONLY | O_CLOEXEC);
    int err = 0;
    if (!info)
        err = ENOMEM;
    else if (fd < 0)
        err = errno;
    if (!err) {
        /* Writing to /dev/urandom mixes bytes in but credits nothing. */
        info->entropy_count = (int)(r->data.len * 8);
        info->buf_size = (int)r->data.len;
        memcpy(info->buf, r->data.data, r->data.len);
        /* Crediting alone does not reseed a CRNG that is already
         * initialised: clones restored from one snapshot would keep
         * producing the same bytes until the next timed reseed. */
        if (ioctl(fd, RNDADDENTROPY, info) < 0 || ioctl(fd, RNDRESEEDCRNG) < 0)
            err = errno;
    }
    if (fd >= 0)
        close(fd);
    free(info);
    if (err)
        guestd_send_result(g, id, err, "add entropy: %s", strerror(err));
    else
        guestd_send_result(g, id, 0, NULL);
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

void set_hostname_request(struct guestd *g, uint32_t id, const Airlock__Guest__V1__SetHostname *r)
{
    if (!hostname_valid(r->hostname)) {
        guestd_send_result(g, id, EINVAL,
                           "set hostname: \"%.80s\" is not 1-64 characters of a-z A-Z 0-9 - _ .",
                           r->hostname);
        return;
    }
    if (sethostname(r->hostname, strlen(r->hostname)) < 0) {
        int err = errno;
        guestd_send_result(g, id, err, "set hostname: %s", strerror(err));
        return;
    }
    guestd_send_result(g, id, 0, NULL);
}
