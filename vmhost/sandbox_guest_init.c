#include "sandbox_guest_init.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "guest_channel.h"
#include "sandbox_internal.h"

#define GUEST_INIT_TIMEOUT_MS 10000
#define GUEST_INIT_ENTROPY_BYTES 64

/* Sends one request and expects Result{0}, or a ready Health where that is
 * the answer (SessionInit). */
static int guest_init_call(struct guest_channel *ch, GuestFrame *req, const char *what, char *err,
                           size_t errlen)
{
    GuestFrame *ans;
    enum guest_recv_status st = guest_call(ch, req, GUEST_INIT_TIMEOUT_MS, &ans);
    if (st != GUEST_RECV_OK) {
        snprintf(err, errlen, "%s: guest did not answer (%s)", what,
                 st == GUEST_RECV_TIMEOUT ? "timeout" : "channel closed");
        return -1;
    }
    int rc = 0;
    if (ans->body_case == AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_RESULT && ans->result->errno_value) {
        snprintf(err, errlen, "%s: %s", what, ans->result->message);
        rc = -1;
    } else if (ans->body_case == AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_HEALTH &&
               !ans->health->ready) {
        snprintf(err, errlen, "%s: guest daemon reports not ready", what);
        rc = -1;
    }
    frame_free(ans);
    return rc;
}

static int64_t host_now_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

int sandbox_guest_set_clock(struct guest_channel *ch, char *err, size_t errlen)
{
    Airlock__Guest__V1__SetClock clk = AIRLOCK__GUEST__V1__SET_CLOCK__INIT;
    clk.unix_ns = host_now_ns();
    GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
    f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_SET_CLOCK;
    f.set_clock = &clk;
    return guest_init_call(ch, &f, "set guest clock", err, errlen);
}

/* One SessionInit instead of SetClock, AddEntropy, SetHostname and Health:
 * under TCG every round trip costs milliseconds of the hand-out latency.
 * warm_up_ca: sent instead of the sandbox's CA (sandbox_guest_warm_up). */
static int session_init(struct sandbox *sb, struct guest_channel *ch, const char *warm_up_ca,
                        char *err, size_t errlen)
{
    uint8_t seed[GUEST_INIT_ENTROPY_BYTES];
    if (getrandom(seed, sizeof(seed), 0) != (ssize_t)sizeof(seed)) {
        snprintf(err, errlen, "getrandom: %s", strerror(errno));
        return -1;
    }
    Airlock__Guest__V1__SessionInit si = AIRLOCK__GUEST__V1__SESSION_INIT__INIT;
    si.entropy.data = seed;
    si.entropy.len = sizeof(seed);
    si.hostname = sb->id;
    /* egress's sandbox CA (credential injection), put into the guest's
     * trust store at every session: a fork or a restore carries the trust
     * store of another sandbox or time. */
    /* A copy: a re-attach after an egress restart may replace it. */
    pthread_mutex_lock(&sb->net_lock);
    char *ca_pem = sb->egress_ca_pem ? strdup(sb->egress_ca_pem) : NULL;
    pthread_mutex_unlock(&sb->net_lock);
    if (warm_up_ca)
        si.trusted_ca_pem = (char *)warm_up_ca;
    else if (ca_pem)
        si.trusted_ca_pem = ca_pem;
    /* Last, so the time the guest is set to is as fresh as it can be. */
    si.unix_ns = host_now_ns();
    GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
    f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_SESSION_INIT;
    f.session_init = &si;
    int rc = guest_init_call(ch, &f, "guest session init", err, errlen);
    explicit_bzero(seed, sizeof(seed));
    free(ca_pem);
    return rc;
}

int sandbox_guest_init(struct sandbox *sb, struct guest_channel *ch, char *err, size_t errlen)
{
    return session_init(sb, ch, NULL, err, errlen);
}

/* PEM-shaped, not a certificate ("airlock warm-up"): enough for guestd to
 * run its CA install. The SessionInit after it, with the sandbox's own CA
 * or none (which empties the slot), replaces it before anything in the
 * guest can read it. */
#define WARM_UP_CA_PEM \
    "-----BEGIN CERTIFICATE-----\nYWlybG9jayB3YXJtLXVw\n-----END CERTIFICATE-----\n"

int sandbox_guest_warm_up(struct sandbox *sb, struct guest_channel *ch, char *err, size_t errlen)
{
    return session_init(sb, ch, WARM_UP_CA_PEM, err, errlen);
}

int sandbox_guest_run(struct guest_channel *ch, const char *prog, int timeout_ms, char *err,
                      size_t errlen)
{
    ProtobufCBinaryData argv[] = { { strlen(prog), (uint8_t *)prog } };
    Airlock__Guest__V1__ExecRequest ex = AIRLOCK__GUEST__V1__EXEC_REQUEST__INIT;
    ex.n_argv = 1;
    ex.argv = argv;
    GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
    f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_EXEC;
    f.exec = &ex;
    struct guest_stream *s = guest_stream_open(ch);
    if (!s || guest_stream_send(s, &f, timeout_ms) < 0) {
        guest_stream_close(s);
        snprintf(err, errlen, "guest %s: channel closed", prog);
        return -1;
    }
    int rc = -1;
    snprintf(err, errlen, "guest %s: no exit status", prog);
    for (;;) {
        GuestFrame *ans;
        if (guest_stream_recv(s, timeout_ms, &ans) != GUEST_RECV_OK)
            break;
        bool done = true;
        if (ans->body_case == AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_EXEC_EXIT) {
            rc = ans->exec_exit->exit_code == 0 && ans->exec_exit->signal == 0 ? 0 : -1;
            if (rc < 0)
                snprintf(err, errlen, "guest %s: exit code %d, signal %d", prog,
                         ans->exec_exit->exit_code, ans->exec_exit->signal);
        } else if (ans->body_case == AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_RESULT) {
            snprintf(err, errlen, "guest %s: %s", prog, ans->result->message);
        } else {
            done = false; /* ExecStarted, output */
        }
        frame_free(ans);
        if (done)
            break;
    }
    guest_stream_close(s);
    return rc;
}
