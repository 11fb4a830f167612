/* Root in a guest ends, stops or resets its own machine (docs/security.md,
 * "Host-side threat model: from the guest"): reboot(2), power off, halt,
 * a kernel panic, the PC's reset ports, suspend to RAM, killing PID 1, a
 * reset of the NIC. The guest-side code is tests/escape/guest/power.py,
 * ioport.py and virtio_poke.py. QEMU runs with -no-reboot: a guest that
 * resets ends its VM, and vmhost must put that sandbox alone into error
 * with the reason; one that halts keeps an idle QEMU. Either way vmhost
 * and the witness sandbox answer, and the node is as it was once the
 * target is deleted (escape_guest.h).
 *
 * A restored sandbox resets its devices on the way down as a cold-booted
 * one does: with QEMU 7.2 that once crashed it (finding F1,
 * docs/security.md); these tests hold that it now exits cleanly. */
#include <stdio.h>
#include <string.h>

#include "escape_guest.h"

/* A guest that ends its VM does so within this (TCG on shared cores). */
#define END_WAIT_MS 30000

/* script run detached in a new target; the outcome, the end's reason. */
static enum escape_outcome detached(const char *name, const char *script, int settle_ms,
                                    char *reason, size_t reasonlen)
{
    escape_target_create(name, NULL);
    escape_sh_detached(&escape_target, script);
    return escape_assert_contained(&escape_target, settle_ms, ESCAPE_ANSWER_MS, reason,
                                   reasonlen);
}

/* The guest's shutdown ended its VM (-no-reboot): QEMU exited 0 and the
 * reason says so (F1 was a SIGSEGV here). */
static void assert_guest_ended_it(const char *name, const char *script)
{
    char reason[512];
    assert_int_equal(detached(name, script, END_WAIT_MS, reason, sizeof(reason)),
                     ESCAPE_ENDED);
    assert_non_null(strstr(reason, "QEMU (pid "));
    assert_non_null(strstr(reason, ") exited with status 0"));
}

static void reboot_ends_the_vm(void **state)
{
    (void)state;
    assert_guest_ended_it("reboot", "python3 /root/power.py reboot");
}

static void poweroff_ends_the_vm(void **state)
{
    (void)state;
    assert_guest_ended_it("poweroff", "python3 /root/power.py poweroff");
}

/* panic=-1 on the guest's command line: the panic reboots at once. */
static void kernel_panic_ends_the_vm(void **state)
{
    (void)state;
    assert_guest_ended_it("panic", "python3 /root/power.py panic");
}

/* A halt keeps an idle QEMU: the guest answers no more, the sandbox is
 * still running (its owner deletes it). */
static void halt_stops_the_guest(void **state)
{
    (void)state;
    assert_int_equal(detached("halt", "python3 /root/power.py halt", ESCAPE_SETTLE_MS, NULL, 0),
                     ESCAPE_SILENT);
}

/* The keyboard controller's reset, 0xcf9 and port 0x92: microvm has none
 * of the three, the guest goes on. */
static void reset_ports_do_nothing(void **state)
{
    (void)state;
    escape_target_create("reset-ports", NULL);
    char out[256];
    escape_sh_ok(&escape_target, "python3 /root/ioport.py reset_ports", out, sizeof(out));
    assert_string_equal(out, "ports-done reset_ports\n");
    escape_assert_answers(&escape_target, ESCAPE_SETTLE_MS);
}

/* PID 1 (guestd) cannot be killed from inside its own namespace. */
static void pid1_survives_sigkill(void **state)
{
    (void)state;
    escape_target_create("kill-init", NULL);
    char out[64];
    escape_sh_ok(&escape_target, "kill -9 1; sleep 1; echo alive", out, sizeof(out));
    assert_string_equal(out, "alive\n");
    escape_assert_answers(&escape_target, ESCAPE_SETTLE_MS);
}

/* The reset that crashed a restored QEMU (F1): now harmless, as it is
 * cold-booted (E-G4). */
static void nic_reset(void **state)
{
    (void)state;
    assert_int_equal(detached("nic-reset", "python3 /root/virtio_poke.py reset_nic",
                              END_WAIT_MS / 6, NULL, 0),
                     ESCAPE_ANSWERS);
}

/* virtio's freeze resets every device (F1's trigger too); microvm has no
 * wake-up source, so the guest sleeps on with its QEMU idle. */
static void suspend_to_ram(void **state)
{
    (void)state;
    assert_int_equal(detached("suspend", "python3 /root/power.py suspend", END_WAIT_MS / 6, NULL,
                              0),
                     ESCAPE_SILENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        ESCAPE_ATTEMPT(reboot_ends_the_vm),
        ESCAPE_ATTEMPT(poweroff_ends_the_vm),
        ESCAPE_ATTEMPT(kernel_panic_ends_the_vm),
        ESCAPE_ATTEMPT(halt_stops_the_guest),
        ESCAPE_ATTEMPT(reset_ports_do_nothing),
        ESCAPE_ATTEMPT(pid1_survives_sigkill),
        ESCAPE_ATTEMPT(nic_reset),
        ESCAPE_ATTEMPT(suspend_to_ram),
    };
    return cmocka_run_group_tests(tests, escape_guest_group_setup, escape_guest_group_teardown);
}
