#include "template_build.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "egress_client.h"
#include "fsutil.h"
#include "guest_channel.h"
#include "log.h"
#include "sandbox_guest_init.h"
#include "sandbox_net.h"
#include "sandbox_netdefs.h"
#include "store.h"

#define TEMPLATE_GUEST_TIMEOUT_MS 30000
#define TEMPLATE_SAVE_TIMEOUT_MS 60000
#define TEMPLATE_QUIT_TIMEOUT_MS 10000
#define TEMPLATE_BUILD_DIR_PREFIX ".build-"
#define TEMPLATE_SETTLE_MS 1000

/* Guest ready, its writes flushed to the disk image. */
static int template_guest_settle(const struct template_spec *spec, struct vm *vm, char *err,
                                 size_t errlen)
{
    struct guest_channel *ch;
    char cerr[512];
    if (guest_channel_connect(&guest_transport_virtio_serial, vm_agent_socket(vm),
                              spec->ready_timeout_ms, &ch, cerr, sizeof(cerr)) < 0) {
        char tail[2048];
        vm_console_tail(vm_console_log(vm), tail, sizeof(tail));
        snprintf(err, errlen, "template VM did not become ready: %s; console tail:\n%s", cerr,
                 tail);
        return -1;
    }
    int rc = spec->customize ? spec->customize(spec->customize_arg, ch, err, errlen) : 0;
    if (rc == 0)
        rc = sandbox_guest_run(ch, "sync", TEMPLATE_GUEST_TIMEOUT_MS, err, errlen);
    /* The restored sandboxes connect anew; guestd treats that as a new
     * session, as it does after any host disconnect. */
    guest_channel_close(ch);
    /* Let the guest go idle before the snapshot: what it is still doing
     * then (the hangup, the last command's exit, kernel timers due soon)
     * every restored sandbox would do first, through QEMU's translator from
     * a cold cache — measured here, the restored guest's first answer takes
     * ~50 ms after a 1 s pause and ~90 ms without. */
    if (rc == 0)
        usleep(TEMPLATE_SETTLE_MS * 1000);
    return rc;
}

static int write_manifest(const struct template_spec *spec, const struct template_snapshot *t,
                          char *err, size_t errlen)
{
    json_t *m = json_pack("{s:s, s:s, s:s, s:s, s:i, s:i, s:I, s:I, s:I}", "name", spec->name,
                          "key", t->key, "image", spec->image->hash, "accel",
                          vm_accel_name(spec->accel), "vcpus", (int)spec->vcpus, "memory_mb",
                          (int)spec->memory_mb, "built_unix_ms", (json_int_t)clock_realtime_ms(),
                          "state_bytes", (json_int_t)fs_disk_usage(t->state), "mem_bytes",
                          (json_int_t)fs_disk_usage(t->mem));
    if (m && spec->manifest_extra)
        json_object_update(m, spec->manifest_extra);
    char *text = m ? json_dumps(m, JSON_INDENT(2)) : NULL;
    json_decref(m);
    if (!text) {
        snprintf(err, errlen, "template manifest: out of memory");
        return -1;
    }
    char path[PATH_MAX];
    int rc = fs_path(path, sizeof(path), "%s/manifest.json", t->dir);
    if (rc == 0)
        rc = fs_write_file_atomic(path, text, strlen(text), 0644, err, errlen);
    free(text);
    return rc;
}

int template_build_net_id(const char *build_dir, char *out, size_t outlen)
{
    const char *base = strrchr(build_dir, '/');
    base = base ? base + 1 : build_dir;
    size_t pl = strlen(TEMPLATE_BUILD_DIR_PREFIX);
    if (strncmp(base, TEMPLATE_BUILD_DIR_PREFIX, pl) != 0)
        return -1;
    int n = snprintf(out, outlen, "template-%s", base + pl);
    return n < 0 || (size_t)n >= outlen ? -1 : 0;
}

/* Boots the template VM (in net_id's namespace, its NIC on tap_fd) and
 * freezes it into t. */
static int template_build_vm(const struct template_spec *spec, const struct template_snapshot *t,
                             const char *net_id, int tap_fd, char *err, size_t errlen)
{
    char netns[256];
    if (sandbox_net_netns_path(net_id, netns, sizeof(netns)) < 0) {
        snprintf(err, errlen, "namespace path of %s too long", net_id);
        return -1;
    }
    struct vm_config vc = {
        .qemu_binary = spec->qemu_binary,
        .accel = spec->accel,
        .kernel = spec->image->kernel,
        .initrd = spec->image->initrd,
        .disk = t->disk,
        .vcpus = spec->vcpus,
        .memory_mb = spec->memory_mb,
        .run_dir = t->dir,
        .mem_path = t->mem,
        .mem_shared = true,
        .has_nic = true,
        .tap_fd = tap_fd,
        .jailer = spec->jailer,
        .netns = netns,
    };
    struct vm *vm;
    if (vm_start(&vc, NULL, NULL, &vm, err, errlen) < 0)
        return -1;
    int rc = -1;
    if (template_guest_settle(spec, vm, err, errlen) < 0 ||
        vm_qmp_command(vm, "stop", NULL, err, errlen) < 0 ||
        vm_save_state(vm, t->state, TEMPLATE_SAVE_TIMEOUT_MS, err, errlen) < 0)
        goto out;
    rc = 0;
out:
    /* The disk and memory are final only once QEMU is gone. */
    vm_stop(vm, TEMPLATE_QUIT_TIMEOUT_MS);
    vm_free(vm);
    return rc;
}

int template_build(const struct template_spec *spec, const struct template_snapshot *t,
                   int64_t *ms, char *err, size_t errlen)
{
    int64_t started = clock_monotonic_ms();
    char net_id[64];
    int tap_fd = -1, rc = -1;
    bool net_up = false, egress_attached = false;
    if (template_build_net_id(t->dir, net_id, sizeof(net_id)) < 0) {
        snprintf(err, errlen, "template build directory %s is not named %sXXXXXX", t->dir,
                 TEMPLATE_BUILD_DIR_PREFIX);
        goto out;
    }
    if (store_clone_file(spec->base_disk, t->disk, err, errlen) < 0 ||
        sandbox_net_create(net_id, err, errlen) < 0)
        goto out;
    net_up = true;
    if (spec->egress && spec->network) {
        char ns_path[256];
        if (sandbox_net_netns_path(net_id, ns_path, sizeof(ns_path)) < 0) {
            snprintf(err, errlen, "namespace path of %s too long", net_id);
            goto out;
        }
        if (egress_client_attach(spec->egress, net_id, ns_path, spec->network, NULL, NULL, err,
                                 errlen) !=
            GRPC_STATUS_OK)
            goto out;
        egress_attached = true;
    }
    if (sandbox_net_open_tap(net_id, &tap_fd, err, errlen) < 0 ||
        template_build_vm(spec, t, net_id, tap_fd, err, errlen) < 0)
        goto out;
    if (fs_fsync_file(t->disk, err, errlen) < 0 || fs_fsync_file(t->mem, err, errlen) < 0 ||
        fs_fsync_file(t->state, err, errlen) < 0 || write_manifest(spec, t, err, errlen) < 0)
        goto out;
    rc = 0;
out:
    if (tap_fd >= 0)
        close(tap_fd);
    char net_err[512];
    if (egress_attached &&
        egress_client_detach(spec->egress, net_id, net_err, sizeof(net_err)) != GRPC_STATUS_OK)
        log_error("cannot detach the template build from egress", "netns=%s%s error=\"%s\"",
                  SANDBOX_NET_NS_PREFIX, net_id, net_err);
    if (net_up && sandbox_net_delete(net_id, net_err, sizeof(net_err)) < 0)
        log_error("cannot delete the template build's network", "netns=%s%s error=\"%s\"",
                  SANDBOX_NET_NS_PREFIX, net_id, net_err);
    *ms = clock_monotonic_ms() - started;
    return rc;
}
