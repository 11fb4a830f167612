#include "sandbox_adopt.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "fsutil.h"
#include "log.h"
#include "sandbox_internal.h"
#include "sandbox_guest_init.h"
#include "sandbox_net.h"
#include "sandbox_network.h"
#include "sandbox_record.h"
#include "template_registry.h"

/* A suspend's migration runs on in QEMU after vmhost died: time to cancel. */
#define ADOPT_MIGRATION_SETTLE_MS 60000

static bool is_temporary(const char *name)
{
    return strstr(name, ".tmp.") != NULL; /* fs_write_file_atomic's */
}

static bool is_checkpoint_leftover(const char *name)
{
    return strncmp(name, ".tmp-", 5) == 0 || strncmp(name, ".del-", 5) == 0;
}

/* Removes the entries of dir whose names match. */
static void remove_matching(const char *dir, bool (*match)(const char *name))
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        char path[PATH_MAX], err[256];
        if (!match(e->d_name) || fs_path(path, sizeof(path), "%s/%s", dir, e->d_name) < 0)
            continue;
        if (fs_remove_tree(path, err, sizeof(err)) < 0)
            log_warn("cannot remove a leftover", "path=%s error=\"%s\"", path, err);
        else
            log_info("removed a leftover of an operation cut short", "path=%s", path);
    }
    closedir(d);
}

static void remove_temporaries(const struct sandbox *sb)
{
    char path[PATH_MAX], err[256];
    remove_matching(sb->dir, is_temporary);
    if (fs_path(path, sizeof(path), "%s/checkpoints", sb->dir) == 0)
        remove_matching(path, is_checkpoint_leftover);
    if (fs_path(path, sizeof(path), "%s/suspend.tmp", sb->dir) == 0 && access(path, F_OK) == 0 &&
        fs_remove_tree(path, err, sizeof(err)) == 0)
        log_info("removed a leftover of an operation cut short", "path=%s", path);
}

/* DIR/suspend with both files: a rename made it, so it is complete. */
static bool has_snapshot(const struct sandbox *sb)
{
    char state[PATH_MAX], disk[PATH_MAX];
    return fs_path(state, sizeof(state), "%s/suspend/state", sb->dir) == 0 &&
           fs_path(disk, sizeof(disk), "%s/suspend/disk.ext4", sb->dir) == 0 &&
           access(state, F_OK) == 0 && access(disk, F_OK) == 0;
}

/* Takes over the live QEMU and brings VM and guest to the recorded state. */
static int adopt_vm(struct sandbox *sb, const struct sandbox_record *r, char *err, size_t errlen)
{
    struct vm *vm;
    if (vm_adopt(sb->dir, r->qemu_pid, r->qemu_start_time, sb->vh->jailer,
                 sb->vh->cfg.console_max_bytes, sandbox_on_vm_exit, sb, &vm, err, errlen) < 0)
        return -1;
    pthread_mutex_lock(&sb->lock);
    sb->vm = vm;
    pthread_mutex_unlock(&sb->lock);
    /* It holds what it holds, whether the node's budget was lowered meanwhile or not. */
    node_budget_hold(sb->vh->budget, &sb->claim, sb->vcpus, sb->memory_mb);
    char run_state[32];
    if (vm_settle_migration(vm, ADOPT_MIGRATION_SETTLE_MS, err, errlen) < 0 ||
        vm_run_state(vm, run_state, sizeof(run_state), err, errlen) < 0)
        return -1;
    /* Stopped by a suspend or checkpoint the crash cut short, or paused:
     * the guest must run to answer the new session. */
    if (strcmp(run_state, "running") != 0 && vm_qmp_command(vm, "cont", NULL, err, errlen) < 0)
        return -1;
    if (sandbox_connect_guest(sb, err, errlen) < 0 ||
        sandbox_guest_init(sb, sb->channel, err, errlen) < 0)
        return -1;
    if (r->state == SB_PAUSED && vm_qmp_command(vm, "stop", NULL, err, errlen) < 0)
        return -1;
    return 0;
}

/* What becomes of the sandbox: its state, and why when error. */
static enum sb_state settle(struct sandbox *sb, const struct sandbox_record *r, bool alive,
                            char *why, size_t whylen)
{
    char err[3072];
    bool live_state = r->state == SB_RUNNING || r->state == SB_PAUSED;
    if (alive) {
        if (adopt_vm(sb, r, err, sizeof(err)) == 0) {
            char snap[PATH_MAX];
            /* A suspend the crash cut after its rename: the VM is the truth. */
            if (fs_path(snap, sizeof(snap), "%s/suspend", sb->dir) == 0)
                fs_remove_tree(snap, NULL, 0);
            return r->state;
        }
        sandbox_drop_vm(sb); /* QEMU goes: nothing can use it */
        snprintf(why, whylen, "re-adopting its VM after a vmhost restart failed: %s", err);
    } else if (live_state) {
        snprintf(why, whylen,
                 "its QEMU (pid %d) was gone when vmhost restarted (a host reboot, or it died "
                 "meanwhile): the VM's memory is lost; its disk and checkpoints remain — restore "
                 "a checkpoint or delete the sandbox",
                 (int)r->qemu_pid);
    } else if (r->state == SB_SUSPENDED) {
        if (has_snapshot(sb))
            return SB_SUSPENDED;
        /* precision: a whole path plus the words would not fit why */
        snprintf(why, whylen, "its suspend snapshot %.3800s/suspend is missing", sb->dir);
        return SB_ERROR;
    } else {
        snprintf(why, whylen, "%s", r->error);
        return SB_ERROR;
    }
    /* A crash between a suspend's rename and its record left a whole
     * snapshot: better than the error. */
    return has_snapshot(sb) ? SB_SUSPENDED : SB_ERROR;
}

static void adopt_one(struct vmhost *vh, const struct sandbox_record *r)
{
    struct sandbox_create_params p = { .id = r->id, .vcpus = r->vcpus, .memory_mb = r->memory_mb };
    struct sandbox *sb;
    struct airlock_error e = { 0 };
    char why[sizeof(sb->error)] = "";
    if (sandbox_reserve(vh, &p, false, &sb, &e) < 0) {
        log_error("sandbox not adopted: its directory is left as it is", "sandbox=%s error=\"%s\"",
                  r->id, e.message);
        return;
    }
    snprintf(sb->template_name, sizeof(sb->template_name), "%s", r->template_name);
    snprintf(sb->project_id, sizeof(sb->project_id), "%s", r->project_id);
    snprintf(sb->store_object, sizeof(sb->store_object), "%s", r->store_object);
    memcpy(sb->volumes, r->volumes, sizeof(sb->volumes));
    sandbox_volumes_adopt(sb);
    /* The version it was restored from: its resumes, restores and forks
     * map that memory file. */
    struct airlock_error tmpl_e = { 0 };
    if (r->restored &&
        template_acquire(vh, r->template_name, r->vcpus, r->memory_mb, &sb->tmpl, &tmpl_e) < 0)
        log_error("the template of an adopted sandbox is gone: it cannot be resumed, restored "
                  "or forked",
                  "sandbox=%s template=%s error=\"%s\"", sb->id, r->template_name, tmpl_e.message);
    sb->restored = r->restored;
    sb->from_pool = r->from_pool;
    sb->created_unix_ms = r->created_unix_ms;
    sb->recorded_state = r->state;
    char ns[256];
    sb->net_up = sandbox_net_netns_path(sb->id, ns, sizeof(ns)) == 0 && access(ns, F_OK) == 0;

    bool alive = (r->state == SB_RUNNING || r->state == SB_PAUSED) && r->qemu_pid &&
                 vm_process_is(r->qemu_pid, r->qemu_start_time, sb->dir);
    size_t strays = vm_kill_strays(sb->dir, alive ? r->qemu_pid : 0);
    remove_temporaries(sb);
    /* Before the guest's new session, which installs egress's CA. Also
     * for suspended and failed sandboxes: a resume or restore needs it. */
    if (sb->net_up && sandbox_network_reattach(sb, &e) < 0)
        log_error("cannot attach an adopted sandbox to egress: it reaches nothing",
                  "sandbox=%s error=\"%s\"", sb->id, e.message);
    enum sb_state state = settle(sb, r, alive, why, sizeof(why));
    if (state == SB_SUSPENDED && airlock_error_is_set(&tmpl_e)) {
        airlock_error_prefix(&tmpl_e, "its suspend snapshot needs template %s: ", r->template_name);
        snprintf(why, sizeof(why), "%s", tmpl_e.message);
        state = SB_ERROR;
    }

    pthread_mutex_lock(&sb->lock);
    sandbox_transition(sb, state);
    sb->stop_suspended_from = state == r->state ? r->stop_suspended_from : 0;
    if (state == SB_ERROR)
        snprintf(sb->error, sizeof(sb->error), "%s", why);
    pthread_mutex_unlock(&sb->lock);
    if (sandbox_record_save(sb, AIRLOCK_ERROR_MSG(&e)) < 0)
        log_error("cannot record an adopted sandbox", "sandbox=%s error=\"%s\"", sb->id, e.message);
    log_info("sandbox adopted",
             "sandbox=%s state=%s recorded=%s vm=%s strays_killed=%zu reason=\"%.300s\"", sb->id,
             sb_state_name(state), sb_state_name(r->state), sb->vm ? "adopted" : "none",
             strays, state == SB_ERROR ? why : "");
    sandbox_put(sb);
}

void sandbox_adopt_all(struct vmhost *vh)
{
    DIR *d = opendir(vh->sandboxes_dir);
    if (!d)
        return;
    int64_t started = clock_monotonic_ms();
    unsigned n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        char dir[PATH_MAX], err[1024];
        if (e->d_name[0] == '.' ||
            fs_path(dir, sizeof(dir), "%s/%s", vh->sandboxes_dir, e->d_name) < 0 ||
            !sandbox_record_exists(dir))
            continue;
        struct sandbox_record r;
        if (sandbox_record_read(dir, &r, err, sizeof(err)) < 0) {
            log_error("sandbox not adopted: its directory is left as it is", "dir=%s error=\"%s\"",
                      dir, err);
            continue;
        }
        adopt_one(vh, &r);
        n++;
    }
    closedir(d);
    if (n)
        log_info("sandboxes adopted", "count=%u ms=%lld", n,
                 (long long)(clock_monotonic_ms() - started));
}
