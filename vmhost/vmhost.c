#include "vmhost.h"
#include "volume_store.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "build_gate.h"
#include "checkpoint.h"
#include "egress_client.h"
#include "egress_watch.h"
#include "fsutil.h"
#include "log.h"
#include "pool_demand.h"
#include "proc.h"
#include "sandbox.h"
#include "sandbox_net.h"
#include "sandbox_record.h"
#include "sandbox_stop.h"
#include "snapshot_store.h"
#include "template_build.h"
#include "template_registry.h"
#include "warm_pool.h"

#ifndef AIRLOCK_GUESTD_BUILD_PATH
#define AIRLOCK_GUESTD_BUILD_PATH "/usr/lib/airlock/airlock-guestd"
#endif

/* The network of a leftover sandbox or template build: detached from
 * egress (which may have outlived the old vmhost) and deleted. */
static void vmhost_clean_leftover_network(struct vmhost *vh, const char *net_id)
{
    char path[256], err[1024];
    if (sandbox_net_netns_path(net_id, path, sizeof(path)) < 0 || access(path, F_OK) < 0)
        return;
    if (vh->egress)
        egress_client_detach(vh->egress, net_id, err, sizeof(err));
    if (sandbox_net_delete(net_id, err, sizeof(err)) < 0)
        log_error("cannot delete leftover network", "netns=%s error=\"%s\"", path, err);
    else
        log_warn("deleted leftover network", "netns=%s", path);
}

/* Run directories (sandboxes, template builds) left by a vmhost that died
 * that are not sandboxes with a record (those are adopted:
 * sandbox_adopt.h): a create or delete cut short, a pooled VM, a template
 * build. Stop their VMs (only QEMUs started for that directory) and remove
 * them and their networks, so nothing leaks across restarts. Entries
 * starting with '.' are skipped unless they start with only_prefix
 * (template builds). */
static void vmhost_clean_leftovers(struct vmhost *vh, const char *parent, const char *only_prefix)
{
    DIR *d = opendir(parent);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        bool wanted = only_prefix ? strncmp(e->d_name, only_prefix, strlen(only_prefix)) == 0
                                  : e->d_name[0] != '.';
        if (!wanted)
            continue;
        char dir[PATH_MAX], pidfile[PATH_MAX];
        if (fs_path(dir, sizeof(dir), "%s/%s", parent, e->d_name) < 0 ||
            fs_path(pidfile, sizeof(pidfile), "%s/qemu.pid", dir) < 0 ||
            sandbox_record_exists(dir))
            continue;
        char *text = NULL;
        if (fs_read_file(pidfile, 64, &text, NULL, NULL, 0) == 0) {
            pid_t pid = (pid_t)atoi(text);
            if (pid > 1 && proc_cmdline_matches(pid, "qemu-system", NULL) &&
                vm_runs_in(pid, dir)) {
                kill(pid, SIGKILL);
                log_warn("stopped leftover VM", "dir=%s pid=%d", dir, (int)pid);
            }
            free(text);
        }
        char err[256], net_id[128];
        if (fs_remove_tree(dir, err, sizeof(err)) < 0)
            log_error("cannot remove leftover run directory", "dir=%s error=\"%s\"", dir, err);
        if (only_prefix ? template_build_net_id(dir, net_id, sizeof(net_id)) == 0
                        : snprintf(net_id, sizeof(net_id), "%s", e->d_name) < (int)sizeof(net_id))
            vmhost_clean_leftover_network(vh, net_id);
    }
    closedir(d);
}

/* The default template's snapshot, which sandbox creation restores. */
static int vmhost_prepare_template(struct vmhost *vh, char *err, size_t errlen)
{
    char name[128];
    snprintf(name, sizeof(name), "image-%s.ext4", vh->image.hash);
    if (store_import_file(&vh->store, vh->image.rootfs, name, vh->base_disk,
                          sizeof(vh->base_disk), err, errlen) < 0)
        return -1;
    if (vh->cfg.cold_boot) {
        log_info("template snapshots disabled: sandboxes cold-boot", "template=default");
        return 0;
    }
    struct template_spec spec;
    template_default_spec(vh, VMHOST_TEMPLATE_VCPUS, VMHOST_TEMPLATE_MEMORY_MB, &spec);
    char why[3072];
    if (template_snapshot_ensure(&spec, &vh->tmpl, why, sizeof(why)) < 0) {
        snprintf(err, errlen, "template snapshot of \"default\" failed (start with --cold-boot "
                              "to run without snapshots): %s", why);
        return -1;
    }
    vh->have_template = true;
    return 0;
}

/* QEMU does not treat bugs in TCG as security bugs: a guest under TCG has
 * no hardware boundary between it and QEMU, so a node without working KVM
 * takes untrusted guests only when the operator says so. */
static int check_accel(const struct vmhost *vh, char *err, size_t errlen)
{
    if (vh->accel != VM_ACCEL_TCG)
        return 0;
    if (!vh->cfg.allow_tcg) {
        snprintf(err, errlen, "no working KVM on this node (accelerator tcg): TCG is not a "
                              "security boundary (QEMU does not treat TCG bugs as security "
                              "bugs), so untrusted guests are refused; start with --allow-tcg "
                              "to run them anyway (docs/operations.md)");
        return -1;
    }
    log_warn("guests run under TCG (--allow-tcg): TCG is not a security boundary, the QEMU "
             "jail is the only wall (docs/jail.md)");
    return 0;
}

/* Every QEMU's jail (jail.h): its root is mounted on DATA_DIR/jail-root
 * (inside each jail's own mount namespace), the uid claims are the
 * machine's (shared by every vmhost on it). */
static int open_jailer(struct vmhost *vh, char *err, size_t errlen)
{
    if (vh->cfg.no_jail) {
        log_warn("QEMU runs unjailed (--no-jail): only for measuring what the jail costs");
        return 0;
    }
    char scratch[PATH_MAX];
    if (fs_path(scratch, sizeof(scratch), "%s/jail-root", vh->cfg.data_dir) < 0) {
        snprintf(err, errlen, "data dir %s: path too long", vh->cfg.data_dir);
        return -1;
    }
    struct jailer_config jc = vh->cfg.jail;
    jc.scratch_dir = scratch;
    return jailer_create(&jc, &vh->jailer, err, errlen);
}

int vmhost_init(struct vmhost *vh, const struct vmhost_config *cfg, char *err, size_t errlen)
{
    memset(vh, 0, sizeof(*vh));
    vh->cfg = *cfg;
    if (!vh->cfg.sandbox_max_vcpus)
        vh->cfg.sandbox_max_vcpus = VMHOST_DEFAULT_SANDBOX_MAX_VCPUS;
    if (!vh->cfg.sandbox_max_memory_mb)
        vh->cfg.sandbox_max_memory_mb = VMHOST_DEFAULT_SANDBOX_MAX_MEMORY_MB;
    if (!vh->cfg.template_sizes_max)
        vh->cfg.template_sizes_max = VMHOST_DEFAULT_TEMPLATE_SIZES_MAX;
    if (!vh->cfg.pool_memory_mib)
        vh->cfg.pool_memory_mib = VMHOST_DEFAULT_POOL_MEMORY_MIB;
    /* A default pool that cannot be held is refused before anything is
     * made (warm_pool_set_limits checks every pool again). */
    struct pool_limits pool = { .min = cfg->warm_pool,
                                .max = template_pool_ceiling(vh, cfg->warm_pool),
                                .vm_memory_mb = TEMPLATE_DEFAULT_MEMORY_MB,
                                .memory_mb = vh->cfg.pool_memory_mib };
    if (!cfg->cold_boot && pool_limits_check(&pool, err, errlen) < 0)
        return -1;
    pthread_mutex_init(&vh->lock, NULL);
    if (cfg->netns_prefix && sandbox_net_set_prefix(cfg->netns_prefix, err, errlen) < 0)
        return -1;
    if (node_budget_new(&cfg->budget, &vh->budget, err, errlen) < 0)
        goto fail_budget;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned slots = cfg->parallel_creates >= 0 ? (unsigned)cfg->parallel_creates
                                                : cpus > 0 ? (unsigned)cpus : 1;
    if (!(vh->build_gate = build_gate_new(slots))) {
        snprintf(err, errlen, "out of memory");
        node_budget_free(vh->budget);
        goto fail_budget;
    }
    if (store_open(&vh->store, cfg->data_dir, cfg->store_size_gb, err, errlen) < 0)
        goto fail_store;
    snprintf(vh->sandboxes_dir, sizeof(vh->sandboxes_dir), "%s", vh->store.sandboxes_dir);
    if (volume_store_open(&vh->store, &vh->volumes, err, errlen) < 0) {
        store_close(&vh->store);
        goto fail_store;
    }
    pthread_mutex_init(&vh->snapshots_lock, NULL);
    struct airlock_error store_e;
    struct snapshot_store_config store_cfg = { .location = cfg->snapshot_store,
                                               .endpoint = cfg->snapshot_store_endpoint,
                                               .region = cfg->snapshot_store_region,
                                               .credentials_file = cfg->snapshot_store_credentials,
                                               .spool_dir = vh->store.root };
    if (cfg->snapshot_store && snapshot_store_open(&store_cfg, &vh->snapshots, &store_e) < 0) {
        snprintf(err, errlen, "%s", store_e.message);
        goto fail;
    }
    /* With mutual TLS this node's egress is egress:<the node in our own
     * certificate>. */
    char egress_identity[PEER_IDENTITY_TEXT_MAX] = "";
    if (cfg->internal_tls)
        snprintf(egress_identity, sizeof(egress_identity), "egress:%s",
                 tls_credentials_identity(cfg->internal_tls)->node);
    struct rpc_channel_auth egress_auth = { .bearer_token = cfg->internal_token,
                                            .tls = cfg->internal_tls,
                                            .server = egress_identity };
    if (cfg->egress_addr && !(vh->egress = egress_client_open(cfg->egress_addr, &egress_auth))) {
        snprintf(err, errlen, "egress client for %s: out of memory", cfg->egress_addr);
        goto fail;
    }
    if (open_jailer(vh, err, errlen) < 0)
        goto fail;
    vmhost_clean_leftovers(vh, vh->sandboxes_dir, NULL);
    vmhost_clean_leftovers(vh, vh->sandboxes_dir, CHECKPOINT_PIN_PREFIX); /* a crashed restore/fork's */
    vmhost_clean_leftovers(vh, vh->store.templates_dir, ".build-");
    char fetched[PATH_MAX]; /* templates fetched from the snapshot store */
    if (fs_path(fetched, sizeof(fetched), "%s/shared", vh->store.templates_dir) == 0)
        vmhost_clean_leftovers(vh, fetched, ".fetch-");

    struct image_build_options io = {
        .cache_dir = cfg->image_dir,
        .guestd_path = cfg->guestd_path ? cfg->guestd_path : AIRLOCK_GUESTD_BUILD_PATH,
        .cache_keep = cfg->image_cache_keep,
        .progress = stderr,
    };
    if (guest_image_ensure(&io, &vh->image, err, errlen) < 0)
        goto fail;
    vh->accel = vm_accel_probe(cfg->accel, vh->jailer, cfg->qemu_binary, vh->image.kernel,
                               vh->image.initrd, cfg->image_dir);
    if (check_accel(vh, err, errlen) < 0)
        goto fail_image;
    if (vmhost_prepare_template(vh, err, errlen) < 0)
        goto fail_image;
    /* Every template version and its warm pool (vh->pool: the default's). */
    if (template_registry_open(vh, err, errlen) < 0)
        goto fail_image;
    if (vh->egress && !(vh->egress_watch = egress_watch_start(vh, err, errlen))) {
        template_registry_close(vh);
        goto fail_image;
    }
    struct node_budget_stats nb;
    node_budget_get(vh->budget, &nb);
    log_info("vmhost ready",
             "accel=%s image=%s store=%s template=%.16s max_sandboxes=%u vcpus_limit=%u "
             "memory_limit_mb=%llu egress=%s snapshot_store=%s",
             vm_accel_name(vh->accel), vh->image.hash, vh->store.root,
             vh->have_template ? vh->tmpl.key : "none", cfg->max_sandboxes, nb.vcpus_limit,
             nb.memory_limit_mb, cfg->egress_addr ? cfg->egress_addr : "none",
             cfg->snapshot_store ? cfg->snapshot_store : "none");
    return 0;
fail_image:
    guest_image_release(&vh->image);
fail:
    jailer_free(vh->jailer);
    egress_client_close(vh->egress);
    snapshot_store_close(vh->snapshots);
    volume_store_free(vh->volumes);
    store_close(&vh->store);
fail_store:
    build_gate_free(vh->build_gate);
    node_budget_free(vh->budget);
fail_budget:
    pthread_mutex_destroy(&vh->lock);
    return -1;
}

void vmhost_shutdown(struct vmhost *vh)
{
    egress_watch_stop(vh->egress_watch);
    warm_pool_stop(vh->pool);
    sandbox_stop_all(vh);
    template_registry_close(vh);
    egress_client_close(vh->egress);
    snapshot_store_close(vh->snapshots);
    volume_store_free(vh->volumes);
    store_close(&vh->store);
    guest_image_release(&vh->image);
    jailer_free(vh->jailer);
    build_gate_free(vh->build_gate);
    node_budget_free(vh->budget);
    pthread_mutex_destroy(&vh->lock);
}
