/* Root in a guest tampers with its clock and its entropy (docs/security.md,
 * "Host-side threat model: from the guest"): settimeofday, its RTC, the
 * kernel's frequency and a clock step, an RTC interrupt storm; writes and
 * ioctls on /dev/random. QEMU emulates the RTC and holds no right to the
 * host's clock (its jail: no capability, seccomp); no device carries the
 * guest's entropy out. So the host's CLOCK_REALTIME stays where it was,
 * other sandboxes keep their own clocks and random streams, and vmhost
 * sets the tampered guest's clock again at a resume. The guest-side code
 * is tests/escape/guest/clock_entropy.py. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "escape_guest.h"
#include "fsutil.h"
#include "itest_assert.h"
#include "itest_group.h"

#define OUT_MAX 1024
/* NTP may slew the host's clock while the tests run; a guest's step
 * would move it by years. */
#define HOST_CLOCK_SLACK_MS 1000
/* A clock vmhost set moments ago (an exec under TCG takes a while). */
#define GUEST_CLOCK_SLACK_S 30

static int64_t host_clock_offset_ms(void)
{
    return clock_realtime_ms() - clock_monotonic_ms();
}

static void assert_host_clock_kept(int64_t before)
{
    int64_t moved = host_clock_offset_ms() - before;
    if (moved > HOST_CLOCK_SLACK_MS || moved < -HOST_CLOCK_SLACK_MS)
        fail_msg("the host's clock moved by %lld ms", (long long)moved);
}

static long long guest_seconds(const struct escape_sandbox *sb)
{
    char out[64];
    escape_sh_ok(sb, "date +%s", out, sizeof(out));
    return atoll(out);
}

static void assert_clock_near_host(const struct escape_sandbox *sb)
{
    long long d = guest_seconds(sb) - clock_realtime_ms() / 1000;
    if (d > GUEST_CLOCK_SLACK_S || d < -GUEST_CLOCK_SLACK_S)
        fail_msg("sandbox %s's clock is %lld s off the host's", sb->id, d);
}

/* script in the shared sandbox must print want; the host's clock must
 * not move, the witness's clock stays the host's. */
static void shared_clock_attempt(const char *script, const char *want)
{
    int64_t before = host_clock_offset_ms();
    char out[OUT_MAX];
    escape_sh_ok(&escape_shared, script, out, sizeof(out));
    assert_string_equal(out, want);
    assert_host_clock_kept(before);
    assert_clock_near_host(&escape_witness);
    escape_assert_answers(&escape_shared, 0);
}

static void settimeofday_stays_in_the_guest(void **state)
{
    (void)state;
    shared_clock_attempt("date -s '2001-01-01 00:00:00' >/dev/null && date +%Y", "2001\n");
}

/* hwclock --systohc (its clock is 2001 now), then RTC_SET_TIME to 2060
 * (near the end of the CMOS clock's range without a century register). */
static void rtc_writes_stay_in_the_guest(void **state)
{
    (void)state;
    shared_clock_attempt("hwclock --systohc && python3 /root/clock_entropy.py rtc_set 2060 && "
                         "python3 /root/clock_entropy.py rtc_year",
                         "rtc set\nrtc year 2060\n");
    char out[OUT_MAX], want[32];
    escape_sh_ok(&escape_witness, "date +%Y", want, sizeof(want));
    escape_sh_ok(&escape_witness, "python3 /root/clock_entropy.py rtc_year", out, sizeof(out));
    assert_int_equal(atoi(out + strlen("rtc year ")), atoi(want));
}

/* The kernel's clock frequency +500 ppm, its tick +10 %, a step of a
 * million seconds. */
static void adjtimex_stays_in_the_guest(void **state)
{
    (void)state;
    shared_clock_attempt("python3 /root/clock_entropy.py adjtimex", "adjtimex ok ok\n");
}

/* Periodic RTC interrupts at 8192 Hz for three seconds: QEMU's timers
 * work for the guest, the host's clock is untouched. */
static void rtc_interrupt_storm(void **state)
{
    (void)state;
    int64_t before = host_clock_offset_ms();
    char out[OUT_MAX];
    escape_sh_ok(&escape_shared, "python3 /root/clock_entropy.py rtc_irq 3", out, sizeof(out));
    assert_non_null(strstr(out, "rtc interrupts "));
    assert_true(atoi(out + strlen("rtc interrupts ")) > 0);
    assert_host_clock_kept(before);
    escape_assert_answers(&escape_shared, 0);
}

/* After all of the above, a pause and resume: vmhost sets the guest's
 * clock from the host's again. */
static void resume_sets_the_clock_again(void **state)
{
    (void)state;
    long long off = guest_seconds(&escape_shared) - clock_realtime_ms() / 1000;
    assert_true(off > GUEST_CLOCK_SLACK_S || off < -GUEST_CLOCK_SLACK_S); /* tampered */
    itest_assert_transition(&itest_vh, ITEST_METHOD("PauseSandbox"), escape_shared.id,
                            AIRLOCK__VMHOST__V1__SANDBOX_STATE__SANDBOX_STATE_PAUSED);
    itest_assert_transition(&itest_vh, ITEST_METHOD("ResumeSandbox"), escape_shared.id,
                            AIRLOCK__VMHOST__V1__SANDBOX_STATE__SANDBOX_STATE_RUNNING);
    assert_clock_near_host(&escape_shared);
}

static void random_hex(const struct escape_sandbox *sb, char *out, size_t outlen)
{
    escape_sh_ok(sb, "python3 /root/clock_entropy.py random", out, outlen);
    assert_int_equal(strlen(out), 65);
}

static long long host_entropy_avail(void)
{
    char *text = NULL;
    assert_int_equal(fs_read_file("/proc/sys/kernel/random/entropy_avail", 64, &text, NULL,
                                  NULL, 0), 0);
    long long v = atoll(text);
    free(text);
    return v;
}

/* Zeros credited as 4096 bits, the count zapped, the pool "cleared", a
 * MiB of zeros written into /dev/random and /dev/urandom: the guest's own
 * stream goes on, and the sandboxes made from the same snapshot (a new
 * one, the witness) each read their own bytes (vmhost seeds each at its
 * start); the host's entropy count is as it was. */
static void entropy_tampering_stays_in_the_guest(void **state)
{
    (void)state;
    long long host_before = host_entropy_avail();
    char out[OUT_MAX], a[80], b[80], fresh[80], witness[80];
    escape_sh_ok(&escape_shared, "python3 /root/clock_entropy.py tamper", out, sizeof(out));
    assert_string_equal(out, "tampered\n");
    random_hex(&escape_shared, a, sizeof(a));
    random_hex(&escape_shared, b, sizeof(b));
    assert_string_not_equal(a, b);
    escape_target_create("entropy-fresh", NULL);
    random_hex(&escape_target, fresh, sizeof(fresh));
    random_hex(&escape_witness, witness, sizeof(witness));
    assert_string_not_equal(fresh, witness);
    assert_string_not_equal(fresh, a);
    assert_int_equal(host_entropy_avail(), host_before);
    escape_assert_answers(&escape_shared, 0);
}

/* ForkSandbox of the shared sandbox; the fork as an escape_sandbox. */
static void fork_shared(struct escape_sandbox *out)
{
    Airlock__Vmhost__V1__ForkSandboxRequest req = AIRLOCK__VMHOST__V1__FORK_SANDBOX_REQUEST__INIT;
    req.sandbox_id = escape_shared.id;
    req.count = 1;
    Airlock__Vmhost__V1__ForkSandboxResponse *resp = NULL;
    char *details = NULL;
    grpc_status_code st = rpc_unary(itest_vh.ch, ITEST_METHOD("ForkSandbox"), &req.base,
                                    &airlock__vmhost__v1__fork_sandbox_response__descriptor,
                                    (ProtobufCMessage **)&resp, &details, ITEST_CALL_TIMEOUT_MS);
    if (st != GRPC_STATUS_OK || !resp || resp->n_sandboxes != 1)
        fail_msg("ForkSandbox: %s: %s", rpc_status_name(st), details ? details : "");
    out->id = strdup(resp->sandboxes[0]->id);
    escape_note_id(out->id);
    out->qemu = resp->sandboxes[0]->qemu_pid;
    protobuf_c_message_free_unpacked(&resp->base, NULL);
    free(details);
}

/* A fork of the tampered guest carries its memory, RNG state included,
 * and is seeded anew: parent and fork read different bytes. */
static void fork_of_a_tampered_guest_is_reseeded(void **state)
{
    (void)state;
    escape_sh_ok(&escape_shared, "python3 /root/clock_entropy.py tamper", NULL, 0);
    fork_shared(&escape_target); /* the attempt's target: deleted by its teardown */
    char parent[80], child[80];
    random_hex(&escape_shared, parent, sizeof(parent));
    random_hex(&escape_target, child, sizeof(child));
    assert_string_not_equal(parent, child);
    escape_assert_answers(&escape_target, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        ESCAPE_ATTEMPT(settimeofday_stays_in_the_guest),
        ESCAPE_ATTEMPT(rtc_writes_stay_in_the_guest),
        ESCAPE_ATTEMPT(adjtimex_stays_in_the_guest),
        ESCAPE_ATTEMPT(rtc_interrupt_storm),
        ESCAPE_ATTEMPT(resume_sets_the_clock_again),
        ESCAPE_ATTEMPT(entropy_tampering_stays_in_the_guest),
        ESCAPE_ATTEMPT(fork_of_a_tampered_guest_is_reseeded),
    };
    return cmocka_run_group_tests(tests, escape_guest_group_setup, escape_guest_group_teardown);
}
