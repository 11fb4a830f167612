/* A sandbox's QEMU and its guest channel: started, connected, ended. */
#include "sandbox_internal.h"

#include <limits.h>
#include <stdio.h>
#include <unistd.h>

#include "log.h"
#include "sandbox_net.h"
#include "sandbox_record.h"
#include "template_version.h"

int sandbox_start_vm(struct sandbox *sb, bool incoming, int nice, char *err, size_t errlen)
{
    struct vmhost *vh = sb->vh;
    int tap_fd;
    char netns[PATH_MAX];
    if (sandbox_net_netns_path(sb->id, netns, sizeof(netns)) < 0) {
        snprintf(err, errlen, "sandbox %s: network namespace path too long", sb->id);
        return -1;
    }
    if (sandbox_net_open_tap(sb->id, &tap_fd, err, errlen) < 0)
        return -1;
    struct vm_config vc = {
        .qemu_binary = vh->cfg.qemu_binary,
        .accel = vh->accel,
        .kernel = vh->image.kernel,
        .initrd = vh->image.initrd,
        .disk = sb->disk,
        .vcpus = sb->vcpus,
        .memory_mb = sb->memory_mb,
        .run_dir = sb->dir,
        .mem_path = sb->tmpl ? sb->tmpl->snap.mem : NULL,
        .mem_shared = false,
        .incoming = incoming,
        .has_nic = true,
        .tap_fd = tap_fd,
        .nice = nice,
        .jailer = vh->jailer,
        .netns = netns,
        .console_max_bytes = vh->cfg.console_max_bytes,
    };
    sandbox_volume_images(sb, vc.volumes);
    struct vm *vm;
    int started_rc = vm_start(&vc, sandbox_on_vm_exit, sb, &vm, err, errlen);
    close(tap_fd); /* QEMU has its own copy */
    if (started_rc < 0)
        return -1;
    pthread_mutex_lock(&sb->lock);
    sb->vm = vm;
    pthread_mutex_unlock(&sb->lock);
    return 0;
}

/* The sandbox failed on its own (not by a request): error, with reason.
 * The first failure is the cause: what follows it (QEMU killed after the
 * guest was cut off) keeps its reason. */
static void sandbox_fail(struct sandbox *sb, const char *reason)
{
    pthread_mutex_lock(&sb->lock);
    /* Being torn down, the VM's end is expected. */
    if (sb->state != SB_DELETING && sb->state != SB_DELETED && sb->state != SB_ERROR &&
        sandbox_transition(sb, SB_ERROR))
        snprintf(sb->error, sizeof(sb->error), "%s", reason);
    pthread_mutex_unlock(&sb->lock);
    char err[512];
    if (sandbox_record_save(sb, err, sizeof(err)) < 0)
        log_error("cannot record the sandbox's error", "sandbox=%s error=\"%s\"", sb->id, err);
}

/* Runs on the channel's reader thread when the guest broke the protocol;
 * the channel logged it. A guest that lies is not let run on, burning its
 * CPU share and memory unseen: its QEMU is killed (the sandbox stays in
 * error, with this reason, until deleted or restored from a checkpoint).
 * Whoever frees the VM closes the channel first, which joins this
 * thread, so the VM is still there. */
static void sandbox_on_guest_violation(void *arg, const char *reason)
{
    struct sandbox *sb = arg;
    sandbox_fail(sb, reason);
    pthread_mutex_lock(&sb->lock);
    if (sb->state == SB_ERROR && sb->vm)
        vm_kill(sb->vm);
    pthread_mutex_unlock(&sb->lock);
}

int sandbox_connect_guest(struct sandbox *sb, char *err, size_t errlen)
{
    struct vm *vm = sb->vm;
    struct guest_channel *ch;
    char cerr[512];
    if (guest_channel_connect(&guest_transport_virtio_serial, vm_agent_socket(vm),
                              sb->vh->cfg.guest_ready_timeout_ms, &ch, cerr, sizeof(cerr)) < 0) {
        char tail[2048];
        vm_console_tail(vm_console_log(vm), tail, sizeof(tail));
        snprintf(err, errlen, "sandbox %s did not become ready: %s; console tail:\n%s", sb->id, cerr,
                 tail);
        return -1;
    }
    pthread_mutex_lock(&sb->lock);
    sb->channel = ch;
    pthread_mutex_unlock(&sb->lock);
    guest_channel_on_violation(ch, sandbox_on_guest_violation, sb);
    return 0;
}

/* Runs on QEMU's monitor thread when the VM dies on its own. */
void sandbox_on_vm_exit(void *arg, int wait_status, const char *reason)
{
    struct sandbox *sb = arg;
    (void)wait_status;
    log_warn("sandbox vm exited unexpectedly", "sandbox=%s", sb->id);
    sandbox_fail(sb, reason);
    sandbox_vm_gone(sb);
}

void sandbox_vm_gone(struct sandbox *sb)
{
    node_budget_release(sb->vh->budget, &sb->claim);
}

/* Stops what runs and removes what exists; used by delete and by failed
 * creates. The sandbox must already be out of the registry. */
void sandbox_drop_vm(struct sandbox *sb)
{
    pthread_mutex_lock(&sb->lock);
    struct vm *vm = sb->vm;
    struct guest_channel *ch = sb->channel;
    sb->vm = NULL;
    sb->channel = NULL;
    pthread_mutex_unlock(&sb->lock);
    if (ch)
        guest_channel_close(ch);
    vm_free(vm);
    sandbox_vm_gone(sb);
}
