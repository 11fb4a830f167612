/* Root in a guest looks for a way to the host's side of its devices
 * (docs/security.md, "Host-side threat model: from the guest"): a second
 * opener of the host channel's port, another virtio-serial port (a QEMU
 * guest agent, a monitor), a shared filesystem (9p, virtiofs), the host's
 * names and paths in what the guest can read, QEMU's mux and monitor
 * escapes and QMP on the serial console, and QMP written into the host
 * channel through PID 1's own descriptor. QEMU's QMP and the channel's
 * sockets live in the jail's /vm on the host; nothing in the guest leads
 * there but the channel, which vmhost reads as frames (docs/guest-protocol.md).
 * The guest-side code is tests/escape/guest/channels.py. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "escape_guest.h"
#include "itest_group.h"

#define OUT_MAX 4096
#define CONSOLE_WAIT_MS 30000

static void shared_says(const char *verb, char *out, size_t outlen)
{
    char command[PATH_MAX + 256];
    snprintf(command, sizeof(command), "python3 /root/channels.py %s", verb);
    escape_sh_ok(&escape_shared, command, out, outlen);
}

/* guestd holds the port; virtio_console admits one opener. */
static void agent_port_cannot_be_opened_twice(void **state)
{
    (void)state;
    char out[OUT_MAX];
    shared_says("open_agent", out, sizeof(out));
    assert_string_equal(out, "agent port: Device or resource busy\n");
    escape_assert_answers(&escape_shared, 0);
}

/* One port, the agent's: no QEMU guest agent, no monitor on a port. */
static void no_port_but_the_agent(void **state)
{
    (void)state;
    char out[OUT_MAX];
    shared_says("ports", out, sizeof(out));
    assert_int_equal(strncmp(out, "agent /dev/vport", 16), 0);
    const char *eol = strchr(out, '\n');
    assert_non_null(eol);
    assert_string_equal(eol, "\n"); /* one line */
    escape_assert_answers(&escape_shared, 0);
}

/* Network, disk, console (ids 1, 2, 3): no 9p (9) or virtio-fs (26)
 * device, no module for either, no mount. */
static void no_shared_filesystem(void **state)
{
    (void)state;
    char out[OUT_MAX];
    shared_says("devices", out, sizeof(out));
    assert_string_equal(out, "virtio devices 1,2,3\n");
    shared_says("filesystems", out, sizeof(out));
    assert_string_equal(out, "9p known False\nvirtiofs known False\n"
                             "mount 9p: refused\nmount virtiofs: refused\n");
    escape_assert_answers(&escape_shared, 0);
}

/* The host's paths (the data directory, the image cache, the jail's
 * socket names, the namespace directory) appear nowhere the guest reads:
 * its command line, PID 1's environment and files, DMI, firmware tables,
 * /etc, the kernel log. */
static void host_paths_stay_out_of_the_guest(void **state)
{
    (void)state;
    char command[PATH_MAX + 256], out[OUT_MAX];
    snprintf(command, sizeof(command),
             "python3 /root/channels.py search '%s' '%s' qmp.sock agent.sock console.sock "
             "/run/netns airlock-itest",
             itest_vh.data_dir, itest_image_dir());
    escape_sh_ok(&escape_shared, command, out, sizeof(out));
    assert_non_null(strstr(out, "found nothing"));
    escape_assert_answers(&escape_shared, 0);
}

/* Ctrl-A c / x / s / b (QEMU's mux: monitor, quit, ...), monitor commands,
 * QMP, terminal controls and every byte value on ttyS0: the console is a
 * plain socket chardev, QEMU takes it all as data. */
/* How long vmhost may take to reap a QEMU it killed. */
#define QEMU_GONE_MS 10000

static void console_escapes_reach_no_monitor(void **state)
{
    (void)state;
    char out[OUT_MAX];
    shared_says("console_escapes", out, sizeof(out));
    assert_string_equal(out, "console escapes written\n");
    assert_true(escape_console_wait(&escape_shared, "console-escapes-end", CONSOLE_WAIT_MS));
    assert_int_equal(kill(escape_shared.qemu, 0), 0);
    escape_assert_answers(&escape_shared, 0);
}

/* QMP's quit, written into the host channel with PID 1's descriptor:
 * vmhost reads a frame length, not a command; it cuts the guest off, puts
 * the sandbox into error with the reason and kills its QEMU (a guest that
 * lies does not run on: security.md G10), which vmhost reaps. */
static void qmp_into_the_host_channel(void **state)
{
    (void)state;
    escape_target_create("steal-agent", NULL);
    escape_sh_detached(&escape_target, "python3 /root/channels.py steal_agent");
    char reason[512];
    assert_int_equal(escape_assert_contained(&escape_target, CONSOLE_WAIT_MS, ESCAPE_ANSWER_MS,
                                             reason, sizeof(reason)), ESCAPE_ENDED);
    assert_non_null(strstr(reason, "frame"));
    int waited_ms = 0;
    while (kill(escape_target.qemu, 0) == 0 && waited_ms < QEMU_GONE_MS) {
        usleep(50 * 1000);
        waited_ms += 50;
    }
    assert_int_equal(kill(escape_target.qemu, 0), -1);
    assert_int_equal(errno, ESRCH);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        ESCAPE_ATTEMPT(agent_port_cannot_be_opened_twice),
        ESCAPE_ATTEMPT(no_port_but_the_agent),
        ESCAPE_ATTEMPT(no_shared_filesystem),
        ESCAPE_ATTEMPT(host_paths_stay_out_of_the_guest),
        ESCAPE_ATTEMPT(console_escapes_reach_no_monitor),
        ESCAPE_ATTEMPT(qmp_into_the_host_channel),
    };
    return cmocka_run_group_tests(tests, escape_guest_group_setup, escape_guest_group_teardown);
}
