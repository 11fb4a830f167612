/* Accelerator choice: KVM only when a standard guest really boots under it. */
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "content_hash.h"
#include "fsutil.h"
#include "initramfs.h"
#include "log.h"
#include "vm.h"

#define PROBE_TIMEOUT_MS 10000
#define PROBE_MEMORY_MB 256
#define PROBE_STOP_TIMEOUT_MS 2000

const char *vm_accel_name(enum vm_accel a)
{
    switch (a) {
    case VM_ACCEL_KVM:
        return "kvm";
    case VM_ACCEL_TCG:
        return "tcg";
    case VM_ACCEL_AUTO:
        break;
    }
    return "auto";
}

int vm_accel_parse(const char *s, enum vm_accel *out)
{
    static const enum vm_accel all[] = { VM_ACCEL_AUTO, VM_ACCEL_KVM, VM_ACCEL_TCG };
    for (size_t i = 0; s && i < sizeof(all) / sizeof(all[0]); i++) {
        if (strcmp(s, vm_accel_name(all[i])) == 0) {
            *out = all[i];
            return 0;
        }
    }
    return -1;
}

/* One warning per process, however often the probe result is consulted. */
static void warn_tcg(const char *why)
{
    static atomic_bool warned;
    if (!atomic_exchange(&warned, true))
        log_warn("using TCG: VMs will be ~10x slower", "reason=\"%s\"", why);
}

struct probe_exit {
    atomic_bool exited;
};

static void probe_on_exit(void *arg, int wait_status, const char *reason)
{
    (void)wait_status;
    (void)reason;
    atomic_store(&((struct probe_exit *)arg)->exited, true);
}

/* Boots kernel+initrd under KVM with airlock.probe=1. Returns 0 when the
 * init script reported in, else -1 with why in err. */
static int probe_kvm(struct jailer *jailer, const char *qemu_binary, const char *kernel,
                     const char *initrd, char *err, size_t errlen)
{
    char run_dir[] = "/tmp/airlock-accel-probe-XXXXXX";
    if (!mkdtemp(run_dir)) {
        snprintf(err, errlen, "mkdtemp %s: %s", run_dir, strerror(errno));
        return -1;
    }
    struct vm_config cfg = { .qemu_binary = qemu_binary,
                             .accel = VM_ACCEL_KVM,
                             .kernel = kernel,
                             .initrd = initrd,
                             .disk = NULL, /* the probe branch of /init runs before the disk */
                             .vcpus = 1,
                             .memory_mb = PROBE_MEMORY_MB,
                             .run_dir = run_dir,
                             .extra_cmdline = "airlock.probe=1",
                             .jailer = jailer };
    struct probe_exit ex = { 0 };
    struct vm *vm = NULL;
    int rc = -1;
    char start_err[2048];
    if (vm_start(&cfg, probe_on_exit, &ex, &vm, start_err, sizeof(start_err)) < 0) {
        snprintf(err, errlen, "KVM present but a standard guest fails to start under it "
                              "(nested PVM?): %.1200s",
                 start_err);
        goto out;
    }
    char tail[4096];
    for (int waited = 0; waited < PROBE_TIMEOUT_MS; waited += 50) {
        vm_console_tail(vm_console_log(vm), tail, sizeof(tail));
        if (strstr(tail, INITRAMFS_PROBE_MARKER)) {
            rc = 0;
            goto out;
        }
        if (atomic_load(&ex.exited))
            break;
        usleep(50 * 1000);
    }
    vm_console_tail(vm_console_log(vm), tail, sizeof(tail));
    snprintf(err, errlen,
             "KVM present but a standard guest %s (nested PVM hypervisor?); console: %.300s",
             atomic_load(&ex.exited) ? "exits before its init runs"
                                     : "does not reach its init within 10 s",
             tail[0] ? tail : "(empty)");
out:
    vm_free(vm);
    fs_remove_tree(run_dir, NULL, 0);
    return rc;
}

static int probe_cache_path(const char *qemu_binary, const char *kernel, const char *initrd,
                            const char *cache_dir, char *path, size_t pathlen)
{
    const char *qemu = qemu_binary ? qemu_binary : "qemu-system-x86_64";
    char hex[65], ignored[256];
    char *version = vm_qemu_version(qemu_binary, ignored, sizeof(ignored));
    struct content_hash h;
    if (!version || content_hash_init(&h, ignored, sizeof(ignored)) < 0) {
        free(version);
        return -1;
    }
    content_hash_add_str(&h, "qemu", qemu);
    content_hash_add_str(&h, "qemu-version", version);
    free(version);
    if (content_hash_add_file(&h, "kernel", kernel, ignored, sizeof(ignored)) < 0 ||
        content_hash_add_file(&h, "initrd", initrd, ignored, sizeof(ignored)) < 0) {
        content_hash_free(&h);
        return -1;
    }
    content_hash_final(&h, hex);
    return fs_path(path, pathlen, "%s/accel-probe-%s", cache_dir, hex);
}

enum vm_accel vm_accel_probe(enum vm_accel requested, struct jailer *jailer,
                             const char *qemu_binary, const char *kernel,
                             const char *initrd, const char *cache_dir)
{
    if (requested != VM_ACCEL_AUTO)
        return requested;
    if (access("/dev/kvm", R_OK | W_OK) < 0) {
        warn_tcg("no usable /dev/kvm");
        return VM_ACCEL_TCG;
    }
    char cache[PATH_MAX];
    bool cacheable = cache_dir && probe_cache_path(qemu_binary, kernel, initrd, cache_dir, cache,
                                                   sizeof(cache)) == 0;
    char *cached = NULL;
    if (cacheable && fs_read_file(cache, 8192, &cached, NULL, NULL, 0) == 0) {
        cached[strcspn(cached, "\n")] = '\0';
        enum vm_accel result = strncmp(cached, "kvm", 3) == 0 ? VM_ACCEL_KVM : VM_ACCEL_TCG;
        if (result == VM_ACCEL_TCG)
            warn_tcg(strlen(cached) > 4 ? cached + 4 : "an earlier probe failed");
        free(cached);
        return result;
    }

    char why[1536];
    enum vm_accel result = VM_ACCEL_TCG;
    if (probe_kvm(jailer, qemu_binary, kernel, initrd, why, sizeof(why)) == 0) {
        result = VM_ACCEL_KVM;
        log_info("KVM works: a standard guest booted under it", "accel=kvm");
    } else {
        for (char *p = why; *p; p++) /* one log line, one cache line */
            if (*p == '\n' || *p == '"')
                *p = ' ';
        warn_tcg(why);
    }
    if (cacheable) {
        char line[1600];
        int n = snprintf(line, sizeof(line), "%s %s\n", vm_accel_name(result),
                         result == VM_ACCEL_KVM ? "probe booted" : why);
        fs_write_file_atomic(cache, line, n < (int)sizeof(line) ? (size_t)n : sizeof(line) - 1,
                             0644, NULL, 0);
    }
    return result;
}
