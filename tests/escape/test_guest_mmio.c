/* Root in a guest writes where the devices QEMU emulates listen
 * (docs/security.md, "Host-side threat model: from the guest"): the
 * virtio-mmio transports through /dev/mem, the firmware's page, the HPET,
 * legacy I/O ports and fw_cfg. The guest-side code is
 * tests/escape/guest/virtio_poke.py and ioport.py. Whatever QEMU makes of
 * it, it may not take the node along: the sandbox answers, falls silent
 * or ends in error alone; vmhost and the witness sandbox answer; deleting
 * a target leaves the node as it was (escape_guest.h).
 *
 * This vmhost cold-boots its sandboxes, the devices' state made by a boot
 * rather than loaded from a snapshot (test_guest_power holds the restored
 * side of the resets; a restored QEMU once died at them, finding F1 in
 * docs/security.md); every attack on the claimed devices starts by
 * unbinding their drivers, which resets them. A cold boot costs
 * seconds under TCG, so the register attacks share one target in turn
 * (a new one when an attack ended the last), and the attempts that leave
 * the guest answering share the program's shared sandbox. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "escape_guest.h"
#include "fsutil.h"
#include "itest_group.h"

#define POKE_WAIT_MS 60000
#define OUT_MAX 4096
/* A guest whose drivers are unbound cannot answer: no long wait for it. */
#define UNBOUND_ANSWER_MS 500

/* /dev/mem maps no page holding a range a driver claimed, nor RAM, nor
 * the local APIC: the guest kernel's CONFIG_(IO_)STRICT_DEVMEM. The pages
 * of the transports without a device are open. */
static void devmem_refuses_claimed_pages(void **state)
{
    (void)state;
    char out[OUT_MAX];
    escape_sh_ok(&escape_shared, "python3 /root/virtio_poke.py probe", out, sizeof(out));
    assert_non_null(strstr(out, "page 0xfeb02000: Operation not permitted"));
    assert_non_null(strstr(out, "page 0x100000: Operation not permitted"));
    assert_non_null(strstr(out, "page 0xfee00000: Operation not permitted"));
    assert_non_null(strstr(out, "page 0xfeb00000: mapped"));
    escape_assert_answers(&escape_shared, ESCAPE_SETTLE_MS);
}

static void empty_transports_take_garbage(void **state)
{
    (void)state;
    char out[OUT_MAX];
    escape_sh_ok(&escape_shared, "python3 /root/virtio_poke.py empty_slots", out, sizeof(out));
    assert_string_equal(out, "empty transports written: 16\n");
    escape_assert_answers(&escape_shared, ESCAPE_SETTLE_MS);
}

static void rom_hash(const struct escape_sandbox *sb, char *out, size_t outlen)
{
    escape_sh_ok(sb, "python3 /root/virtio_poke.py rom_hash", out, outlen);
    assert_non_null(strstr(out, "rom sha256 "));
}

/* The firmware's page at the top of 4 GiB is RAM on microvm (QEMU maps
 * it writable): the guest rewrites its own copy, and no other VM's. */
static void firmware_rewrite_stays_in_the_vm(void **state)
{
    (void)state;
    char before[128], after[128], witness[128], out[OUT_MAX];
    rom_hash(&escape_shared, before, sizeof(before));
    escape_sh_ok(&escape_shared, "python3 /root/virtio_poke.py rom", out, sizeof(out));
    assert_string_equal(out, "rom changed\n");
    rom_hash(&escape_shared, after, sizeof(after));
    assert_string_not_equal(after, before);
    rom_hash(&escape_witness, witness, sizeof(witness));
    assert_string_equal(witness, before);
    escape_assert_answers(&escape_shared, ESCAPE_SETTLE_MS);
}

/* Last of the shared sandbox's attempts: the guest may lose its timers. */
static void hpet_garbage(void **state)
{
    (void)state;
    char out[OUT_MAX];
    escape_sh_ok(&escape_shared, "python3 /root/virtio_poke.py hpet", out, sizeof(out));
    assert_string_equal(out, "hpet written\n");
    escape_assert_answers(&escape_shared, ESCAPE_SETTLE_MS);
}

/* The UART's garbage includes its loopback bit: the guest's console no
 * longer reaches the host (the console checks come before this). */
static void legacy_ports_garbage(void **state)
{
    (void)state;
    char out[OUT_MAX];
    escape_sh_ok(&escape_shared, "python3 /root/ioport.py legacy_garbage", out, sizeof(out));
    assert_string_equal(out, "ports-done legacy_garbage\n");
    escape_assert_answers(&escape_shared, ESCAPE_SETTLE_MS);
}

/* The cold-booted twin of test_guest_power's finding: reset by unbinding
 * its driver, a cold-booted guest's NIC takes no harm. */
static void cold_booted_nic_reset_is_harmless(void **state)
{
    (void)state;
    escape_sh_detached(&escape_shared, "python3 /root/virtio_poke.py reset_nic");
    assert_true(escape_console_wait(&escape_shared, "POKE-DONE reset_nic", POKE_WAIT_MS));
    escape_assert_answers(&escape_shared, ESCAPE_SETTLE_MS);
}

/* fw_cfg: every selector, data writes, DMA into RAM that is not there
 * (the error bit), onto the disk's registers while its driver is bound
 * (done: the disk resets), and an unknown key's zero-fill of 4 GiB from
 * 2^64 - 4 KiB, which wraps round onto the guest's own RAM and devices:
 * the guest wipes itself, its channel closes, it resets (QEMU exits 0).
 * Contained either way; the exec may not come back. */
static void fw_cfg_garbage(void **state)
{
    (void)state;
    escape_target_create("fw-cfg", NULL);
    struct itest_exec_result r;
    itest_sh(&itest_vh, escape_target.id, "python3 /root/ioport.py fw_cfg_garbage", &r);
    if (r.status == GRPC_STATUS_OK && !strstr((char *)r.out, "ports-done"))
        fail_msg("fw_cfg_garbage exited %d: %s%s", r.exit_code, (char *)r.out, (char *)r.err);
    fprintf(stderr, "escape: fw_cfg_garbage: %s %s\n", rpc_status_name(r.status),
            r.details ? r.details : "");
    itest_exec_result_free(&r);
    escape_assert_contained(&escape_target, ESCAPE_SETTLE_MS, ESCAPE_ANSWER_MS, NULL, 0);
}

/* A cold-booted guest's reboot ends its QEMU with exit status 0 (a
 * restored one's: test_guest_power). */
static void cold_booted_reboot_exits_cleanly(void **state)
{
    (void)state;
    escape_target_create("reboot", NULL);
    escape_sh_detached(&escape_target, "python3 /root/power.py reboot");
    char reason[512];
    assert_int_equal(escape_assert_contained(&escape_target, POKE_WAIT_MS, ESCAPE_ANSWER_MS,
                                             reason, sizeof(reason)), ESCAPE_ENDED);
    assert_non_null(strstr(reason, "exited with status 0"));
}

/* The register attacks of virtio_poke.py, in the order one target runs
 * them. */
static const char *const register_attacks[] = {
    "status_garbage", "queue_select_out_of_range", "ring_outside_ram", "buffers_outside_ram",
    "descriptor_loop", "runaway_index", "dma_into_own_registers", "config_garbage",
    "blk_write_past_end",
};
#define N_ATTACKS (sizeof(register_attacks) / sizeof(register_attacks[0]))
static struct escape_sandbox pokes;

/* A new target running the attacks from the i-th on (detached: the first
 * thing they do is unbind the guest's channel). */
static void pokes_start(size_t i)
{
    escape_kept_create(&pokes, "pokes");
    char command[1024] = "python3 /root/virtio_poke.py";
    for (size_t k = i; k < N_ATTACKS; k++)
        snprintf(command + strlen(command), sizeof(command) - strlen(command), " %s",
                 register_attacks[k]);
    escape_sh_detached(&pokes, command);
}

static bool pokes_console(const char *what, const char *attack, int wait_ms)
{
    char marker[96];
    snprintf(marker, sizeof(marker), "%s %s", what, attack);
    return escape_console_wait(&pokes, marker, wait_ms);
}

/* Register attack i: its end in the console, or its sandbox's end while
 * it ran (the next attack gets a new target). The guest gave its channel
 * up: it answers no more. */
static void register_attack(size_t i)
{
    const char *attack = register_attacks[i];
    if (pokes.id && escape_wait_ended(&pokes, 0))
        escape_kept_drop(&pokes);
    if (!pokes.id)
        pokes_start(i);
    bool done = pokes_console("POKE-DONE", attack, POKE_WAIT_MS);
    if (!done && !pokes_console("POKE-START", attack, 0))
        fail_msg("%s never started: the target ended before it", attack);
    enum escape_outcome o = escape_assert_contained(&pokes, done ? ESCAPE_SETTLE_MS / 2 : 0,
                                                    UNBOUND_ANSWER_MS, NULL, 0);
    assert_int_not_equal(o, ESCAPE_ANSWERS);
    if (!done && o != ESCAPE_ENDED)
        fail_msg("%s neither finished nor ended its sandbox", attack);
    if (i == N_ATTACKS - 1)
        escape_kept_drop(&pokes);
}

#define REGISTER_ATTACK(name, i)     \
    static void name(void **state)   \
    {                                \
        (void)state;                 \
        register_attack(i);          \
    }
REGISTER_ATTACK(status_garbage, 0)
REGISTER_ATTACK(queue_select_out_of_range, 1)
REGISTER_ATTACK(ring_outside_ram, 2)
REGISTER_ATTACK(buffers_outside_ram, 3)
REGISTER_ATTACK(descriptor_loop, 4)
REGISTER_ATTACK(runaway_index, 5)
REGISTER_ATTACK(dma_into_own_registers, 6)
REGISTER_ATTACK(config_garbage, 7)

static off_t disk_size(const struct escape_sandbox *sb)
{
    struct stat st;
    escape_disk_stat(sb, &st);
    return st.st_size;
}

/* Forged write requests at and past each disk's end (the last of the
 * sequence): the root disk and the four empty volume slots (capacity 0: no
 * last sector). QEMU refuses each (status 1, VIRTIO_BLK_S_IOERR); the root
 * file on the host keeps the size every sandbox's disk has and each slot's
 * file stays empty. */
#define POKE_BLK_WRITES (4 + 4 * 3)
static void blk_write_past_end(void **state)
{
    (void)state;
    if (!pokes.id || escape_wait_ended(&pokes, 0)) {
        if (pokes.id)
            escape_kept_drop(&pokes);
        pokes_start(N_ATTACKS - 1);
    }
    assert_true(pokes_console("POKE-DONE", "blk_write_past_end", POKE_WAIT_MS));
    char path[PATH_MAX], *log = NULL;
    size_t len = 0;
    escape_sandbox_path(&pokes, "console.log", path, sizeof(path));
    assert_int_equal(fs_read_file(path, 1 << 20, &log, &len, NULL, 0), 0);
    size_t written = 0, refused = 0; /* lines "...: status N" (the console ends them "\r\n") */
    for (const char *at = log; (at = memmem(at, len - (size_t)(at - log), ": status ", 9)); at++) {
        written++;
        refused += at[9] == '1' && (at[10] == '\r' || at[10] == '\n');
    }
    free(log);
    assert_int_equal(written, POKE_BLK_WRITES);
    assert_int_equal(refused, POKE_BLK_WRITES);
    assert_int_equal(disk_size(&pokes), disk_size(&escape_witness));
    for (int slot = 0; slot < 4; slot++) {
        char name[32];
        struct stat st;
        snprintf(name, sizeof(name), "vm/slot%d.img", slot);
        escape_sandbox_path(&pokes, name, path, sizeof(path));
        assert_int_equal(stat(path, &st), 0);
        assert_int_equal(st.st_size, 0);
    }
    register_attack(N_ATTACKS - 1);
}

static int group_setup(void **state)
{
    (void)state;
    const char *const args[] = { "--cold-boot", NULL };
    return escape_guest_start(args, true);
}

static int group_teardown(void **state)
{
    if (pokes.id) /* a failed attack left it */
        itest_delete_sandbox(&itest_vh, pokes.id);
    free(pokes.id);
    pokes.id = NULL;
    return escape_guest_group_teardown(state);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        ESCAPE_ATTEMPT(devmem_refuses_claimed_pages),
        ESCAPE_ATTEMPT(empty_transports_take_garbage),
        ESCAPE_ATTEMPT(firmware_rewrite_stays_in_the_vm),
        ESCAPE_ATTEMPT(cold_booted_nic_reset_is_harmless),
        ESCAPE_ATTEMPT(legacy_ports_garbage),
        ESCAPE_ATTEMPT(hpet_garbage),
        ESCAPE_ATTEMPT(fw_cfg_garbage),
        ESCAPE_ATTEMPT(cold_booted_reboot_exits_cleanly),
        ESCAPE_ATTEMPT(status_garbage),
        ESCAPE_ATTEMPT(queue_select_out_of_range),
        ESCAPE_ATTEMPT(ring_outside_ram),
        ESCAPE_ATTEMPT(buffers_outside_ram),
        ESCAPE_ATTEMPT(descriptor_loop),
        ESCAPE_ATTEMPT(runaway_index),
        ESCAPE_ATTEMPT(dma_into_own_registers),
        ESCAPE_ATTEMPT(config_garbage),
        ESCAPE_ATTEMPT(blk_write_past_end),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
