/* The node's jailer and each QEMU's jail: uid claims, the cgroup leaf,
 * the files handed to the uid, and the mount plan jail_child.c follows. */
#include "jail_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/sched.h>
#include <pwd.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fsutil.h"
#include "log.h"

/* Guest RAM is the bulk; QEMU's own threads get half a core beyond the
 * vCPUs (its main loop does the virtio work a busy vCPU waits for). */
#define JAIL_CPU_EXTRA_US 50000
#define JAIL_CPU_PER_VCPU_US 100000
/* QEMU's threads: vCPUs, main loop, RCU, and a pool of up to 64 I/O
 * workers; it may not start processes at all (seccomp spawn=deny). */
#define JAIL_PIDS_MAX 128

static int check_range(const struct jailer_config *cfg, char *err, size_t errlen)
{
    if (cfg->uid_count == 0 || cfg->uid_base == 0 ||
        (uint64_t)cfg->uid_base + cfg->uid_count > (uint64_t)UINT32_MAX - 1) {
        snprintf(err, errlen, "jail uid range %u+%u is not usable: it must be non-empty, "
                              "above 0 and below 2^32-1", (unsigned)cfg->uid_base,
                 cfg->uid_count);
        return -1;
    }
    /* A user or group of the system inside the range would share files
     * and signals with a jail. */
    int rc = 0;
    setpwent();
    for (struct passwd *p; rc == 0 && (p = getpwent());)
        if (p->pw_uid >= cfg->uid_base && p->pw_uid - cfg->uid_base < cfg->uid_count) {
            snprintf(err, errlen, "jail uid range %u-%u holds the system user %s (uid %u): "
                                  "choose another --jail-uid-base",
                     (unsigned)cfg->uid_base, (unsigned)(cfg->uid_base + cfg->uid_count - 1),
                     p->pw_name, (unsigned)p->pw_uid);
            rc = -1;
        }
    endpwent();
    setgrent();
    for (struct group *g; rc == 0 && (g = getgrent());)
        if (g->gr_gid >= cfg->uid_base && g->gr_gid - cfg->uid_base < cfg->uid_count) {
            snprintf(err, errlen, "jail gid range %u-%u holds the system group %s (gid %u): "
                                  "choose another --jail-uid-base",
                     (unsigned)cfg->uid_base, (unsigned)(cfg->uid_base + cfg->uid_count - 1),
                     g->gr_name, (unsigned)g->gr_gid);
            rc = -1;
        }
    endgrent();
    return rc;
}

static int add_system(struct jailer *j, enum jail_mount_kind kind, const char *source,
                      const char *inside)
{
    struct jail_mount *m = &j->system[j->n_system];
    *m = (struct jail_mount){ .kind = kind, .inside = inside };
    if (fs_path(m->source, sizeof(m->source), "%s", source) < 0 ||
        fs_path(m->target, sizeof(m->target), "%s%s", j->scratch_dir, inside) < 0)
        return -1;
    j->n_system++;
    return 0;
}

/* What every jail holds of the system: /usr (QEMU, its libraries and
 * firmware) read-only, the loader's cache, and /lib, /lib64, /bin as the
 * host has them (links into /usr on a merged-/usr system like Debian 12). */
static int plan_system(struct jailer *j, char *err, size_t errlen)
{
    static const char *const links[] = { "/lib", "/lib64", "/bin" };
    int rc = add_system(j, JAIL_BIND_DIR, "/usr", "/usr");
    for (size_t i = 0; rc == 0 && i < sizeof(links) / sizeof(links[0]); i++) {
        char target[PATH_MAX];
        ssize_t n = readlink(links[i], target, sizeof(target) - 1);
        struct stat st;
        if (n > 0) {
            target[n] = '\0';
            rc = add_system(j, JAIL_SYMLINK, target, links[i]);
        } else if (stat(links[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            rc = add_system(j, JAIL_BIND_DIR, links[i], links[i]);
        }
    }
    if (rc == 0 && access("/etc/ld.so.cache", R_OK) == 0)
        rc = add_system(j, JAIL_BIND_FILE, "/etc/ld.so.cache", "/etc/ld.so.cache");
    if (rc == 0)
        rc = add_system(j, JAIL_BIND_FILE, j->preload, "/jail-preload.so");
    if (rc < 0)
        snprintf(err, errlen, "jail: a system path is too long under %s", j->scratch_dir);
    return rc;
}

int jailer_create(const struct jailer_config *cfg, struct jailer **out, char *err, size_t errlen)
{
    *out = NULL;
    if (check_range(cfg, err, errlen) < 0)
        return -1;
    struct jailer *j = calloc(1, sizeof(*j));
    if (!j) {
        snprintf(err, errlen, "jailer: out of memory");
        return -1;
    }
    j->cfg = *cfg;
    pthread_mutex_init(&j->lock, NULL);
    if (fs_path(j->lock_dir, sizeof(j->lock_dir), "%s", cfg->lock_dir) < 0 ||
        fs_path(j->scratch_dir, sizeof(j->scratch_dir), "%s", cfg->scratch_dir) < 0 ||
        !realpath(cfg->preload, j->preload)) {
        snprintf(err, errlen, "jail: the QEMU preload library %s: %s (it is built beside "
                              "airlock-vmhost; --jail-preload names another)",
                 cfg->preload, strerror(errno));
        goto fail;
    }
    if (fs_mkdir_p(j->lock_dir, 0700, err, errlen) < 0 ||
        fs_mkdir_p(j->scratch_dir, 0700, err, errlen) < 0)
        goto fail;
    char *text = NULL;
    if (fs_read_file("/proc/sys/kernel/cap_last_cap", 64, &text, NULL, err, errlen) < 0)
        goto fail;
    j->cap_last = atoi(text);
    free(text);
    if (plan_system(j, err, errlen) < 0 || jail_cgroups_init(&j->cgroups, err, errlen) < 0 ||
        jail_filter_build(&j->filter, err, errlen) < 0)
        goto fail;
    *out = j;
    return 0;
fail:
    jailer_free(j);
    return -1;
}

void jailer_free(struct jailer *j)
{
    if (!j)
        return;
    pthread_mutex_destroy(&j->lock);
    jail_filter_free(&j->filter);
    free(j);
}

static struct jail *jail_alloc(struct jailer *j)
{
    struct jail *jl = calloc(1, sizeof(*jl));
    if (!jl)
        return NULL;
    jl->jailer = j;
    jl->lock_fd = -1;
    jl->netns_fd = -1;
    return jl;
}

/* The claim is an flock on lock_dir/<uid>, held by vmhost until
 * jail_close and by QEMU (fd 4) for its whole life: a uid in use by a
 * running QEMU, of this vmhost, an earlier one or another on the
 * machine, is never handed out twice. */
/* uid's claim taken: its open, locked file; -1 when another holds it
 * (errno EWOULDBLOCK) or the file cannot be had (errno says why). */
static int try_claim(const struct jailer *j, uid_t uid)
{
    char path[PATH_MAX];
    if (fs_path(path, sizeof(path), "%s/%u", j->lock_dir, (unsigned)uid) < 0)
        return -1;
    int fd = open(path, O_RDONLY | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) == 0)
        return fd;
    int saved = errno;
    close(fd);
    errno = saved;
    return -1;
}

static int claim_uid(struct jail *jl, char *err, size_t errlen)
{
    struct jailer *j = jl->jailer;
    pthread_mutex_lock(&j->lock);
    unsigned start = j->next_slot;
    j->next_slot = (j->next_slot + 1) % j->cfg.uid_count;
    pthread_mutex_unlock(&j->lock);
    for (unsigned i = 0; i < j->cfg.uid_count; i++) {
        uid_t uid = j->cfg.uid_base + (start + i) % j->cfg.uid_count;
        int fd = try_claim(j, uid);
        if (fd >= 0) {
            jl->uid = uid;
            jl->lock_fd = fd;
            snprintf(jl->leaf, sizeof(jl->leaf), "vm-%u", (unsigned)uid);
            return 0;
        }
        if (errno != EWOULDBLOCK) {
            snprintf(err, errlen, "jail: claim uid %u in %s: %s", (unsigned)uid, j->lock_dir,
                     strerror(errno));
            return -1;
        }
    }
    snprintf(err, errlen, "jail: every uid of the range %u-%u is in use by a running QEMU "
                          "(--jail-uid-count %u)", (unsigned)j->cfg.uid_base,
             (unsigned)(j->cfg.uid_base + j->cfg.uid_count - 1), j->cfg.uid_count);
    return -1;
}

static int add_mount(struct jail *jl, enum jail_mount_kind kind, const char *source,
                     const char *inside, bool writable, char *err, size_t errlen)
{
    struct jail_mount *m = &jl->mounts[jl->n_mounts];
    *m = (struct jail_mount){ .kind = kind, .inside = inside, .writable = writable };
    if (jl->n_mounts == JAIL_MAX_MOUNTS ||
        fs_path(m->source, sizeof(m->source), "%s", source ? source : "") < 0 ||
        fs_path(m->target, sizeof(m->target), "%s%s", jl->jailer->scratch_dir, inside) < 0) {
        snprintf(err, errlen, "jail: too many mounts or a path too long (%s)", inside);
        return -1;
    }
    jl->n_mounts++;
    return 0;
}

static int add_dev(struct jail *jl, const char *inside, unsigned major_nr, unsigned minor_nr,
                   mode_t mode, char *err, size_t errlen)
{
    if (add_mount(jl, JAIL_DEV_NODE, NULL, inside, false, err, errlen) < 0)
        return -1;
    jl->mounts[jl->n_mounts - 1].dev = makedev(major_nr, minor_nr);
    jl->mounts[jl->n_mounts - 1].mode = mode;
    return 0;
}

/* Hands path to the jail's uid (QEMU writes it); back to root at close. */
static int own(struct jail *jl, const char *path, char *err, size_t errlen)
{
    if (jl->n_owned == JAIL_MAX_OWNED ||
        fs_path(jl->owned[jl->n_owned], sizeof(jl->owned[0]), "%s", path) < 0) {
        snprintf(err, errlen, "jail: too many files to hand over (%s)", path);
        return -1;
    }
    if (chown(path, jl->uid, (gid_t)jl->uid) < 0) {
        snprintf(err, errlen, "jail: chown %s to uid %u: %s", path, (unsigned)jl->uid,
                 strerror(errno));
        return -1;
    }
    jl->n_owned++;
    return 0;
}

/* A file the jail binds must exist: a template's memory file does not
 * before its first QEMU creates it (0644: every jail of the template reads
 * it later, as its own uid). */
static int ensure_file(const char *path, char *err, size_t errlen)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        snprintf(err, errlen, "jail: create %s: %s", path, strerror(errno));
        return -1;
    }
    close(fd);
    return 0;
}

static int plan(struct jail *jl, const struct jail_spec *s, char *err, size_t errlen)
{
    if (strncmp(s->qemu_binary, "/usr/", 5) != 0) {
        snprintf(err, errlen, "jail: QEMU at %s is outside /usr, the only programs a jail "
                              "holds", s->qemu_binary);
        return -1;
    }
    if (add_mount(jl, JAIL_BIND_DIR, s->dir, "/vm", true, err, errlen) < 0 ||
        own(jl, s->dir, err, errlen) < 0)
        return -1;
    if (s->disk && (add_mount(jl, JAIL_BIND_FILE, s->disk, "/disk", true, err, errlen) < 0 ||
                    own(jl, s->disk, err, errlen) < 0))
        return -1;
    for (unsigned i = 0; i < JAIL_VOLUMES; i++) {
        if (!s->volumes[i])
            continue;
        /* Kept by the mount plan: string constants. */
        static const char *const inside[JAIL_VOLUMES] = { "/vol0", "/vol1", "/vol2", "/vol3" };
        if (add_mount(jl, JAIL_BIND_FILE, s->volumes[i], inside[i], true, err, errlen) < 0 ||
            own(jl, s->volumes[i], err, errlen) < 0)
            return -1;
    }
    if (s->mem) {
        if (s->mem_writable && (ensure_file(s->mem, err, errlen) < 0 ||
                                own(jl, s->mem, err, errlen) < 0))
            return -1;
        if (add_mount(jl, JAIL_BIND_FILE, s->mem, "/mem", s->mem_writable, err, errlen) < 0)
            return -1;
        jl->mem_readonly = !s->mem_writable;
    }
    if (s->kernel && (add_mount(jl, JAIL_BIND_FILE, s->kernel, "/kernel", false, err, errlen) < 0 ||
                      add_mount(jl, JAIL_BIND_FILE, s->initrd, "/initrd", false, err, errlen) < 0))
        return -1;
    if (add_dev(jl, "/dev/null", 1, 3, 0666, err, errlen) < 0 ||
        add_dev(jl, "/dev/zero", 1, 5, 0666, err, errlen) < 0 ||
        add_dev(jl, "/dev/urandom", 1, 9, 0666, err, errlen) < 0)
        return -1;
    if (s->kvm && add_dev(jl, "/dev/kvm", 10, 232, 0600, err, errlen) < 0)
        return -1;
    return 0;
}

/* Files given back to root, so a later jail with the same uid (another
 * sandbox) could not open them even if it could reach them. */
static void give_back(struct jail *jl)
{
    for (size_t i = 0; i < jl->n_owned; i++)
        if (chown(jl->owned[i], 0, 0) < 0 && errno != ENOENT) /* ENOENT: gone with its sandbox */
            log_warn("jail: cannot give a file back to root", "path=%s error=\"%s\"",
                     jl->owned[i], strerror(errno));
    jl->n_owned = 0;
}

int jail_open(struct jailer *j, const struct jail_spec *spec, struct jail **out, char *err,
              size_t errlen)
{
    *out = NULL;
    struct jail *jl = jail_alloc(j);
    if (!jl) {
        snprintf(err, errlen, "jail: out of memory");
        return -1;
    }
    if (claim_uid(jl, err, errlen) < 0 || plan(jl, spec, err, errlen) < 0)
        goto fail;
    struct jail_limits limits = {
        .memory_bytes = ((unsigned long long)spec->memory_mb + j->cfg.mem_overhead_mb) << 20,
        .cpu_quota_us = spec->vcpus * JAIL_CPU_PER_VCPU_US + JAIL_CPU_EXTRA_US,
        .pids = JAIL_PIDS_MAX,
    };
    int n = jail_cgroups_make_leaf(&j->cgroups, jl->leaf, &limits, jl->procs_fds, err, errlen);
    if (n < 0)
        goto fail;
    jl->n_procs_fds = (size_t)n;
    if (spec->netns && (jl->netns_fd = open(spec->netns, O_RDONLY | O_CLOEXEC)) < 0) {
        snprintf(err, errlen, "jail: network namespace %s: %s", spec->netns, strerror(errno));
        goto fail;
    }
    jl->max_file_bytes = spec->max_file_bytes;
    *out = jl;
    return 0;
fail:
    jail_close(jl);
    return -1;
}

const char *jail_inside_path(const struct jail *jl, const char *host_path)
{
    for (size_t i = 0; i < jl->n_mounts; i++)
        if (jl->mounts[i].kind != JAIL_DEV_NODE && strcmp(jl->mounts[i].source, host_path) == 0)
            return jl->mounts[i].inside;
    return NULL;
}

pid_t jail_spawn(struct jail *jl, char *const argv[], int log_fd, int tap_fd, int nice, char *err,
                 size_t errlen)
{
    /* QEMU's environment is only this: the preload (jail_preload.c) and
     * the file it opens read-only, if any. */
    char *envp[] = { "LD_PRELOAD=/jail-preload.so",
                     jl->mem_readonly ? "AIRLOCK_JAIL_READONLY=/mem" : NULL, NULL };
    struct clone_args args = {
        .flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS,
        .exit_signal = SIGCHLD,
    };
    /* fork() semantics without glibc's atfork handlers: the child only
     * makes system calls until it execs (jail_child.c). */
    long pid = syscall(SYS_clone3, &args, sizeof(args));
    if (pid < 0) {
        snprintf(err, errlen, "jail: clone3 with new namespaces: %s", strerror(errno));
        return -1;
    }
    if (pid == 0)
        jail_child_main(jl, argv, envp, log_fd, tap_fd, nice);
    /* The child has joined or will: vmhost's copies are not needed. */
    for (size_t i = 0; i < jl->n_procs_fds; i++)
        close(jl->procs_fds[i]);
    jl->n_procs_fds = 0;
    if (jl->netns_fd >= 0)
        close(jl->netns_fd);
    jl->netns_fd = -1;
    return (pid_t)pid;
}

/* uid from /proc/PID/status's "Uid:" line (real uid first). */
static int proc_uid(pid_t pid, uid_t *out)
{
    char path[64], *text = NULL;
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    if (fs_read_file(path, 1 << 16, &text, NULL, NULL, 0) < 0)
        return -1;
    const char *at = strstr(text, "\nUid:");
    int rc = at && sscanf(at + 5, "%u", out) == 1 ? 0 : -1;
    free(text);
    return rc;
}

int jail_adopt(struct jailer *j, pid_t pid, const char *dir, struct jail **out, char *err,
               size_t errlen)
{
    *out = NULL;
    uid_t uid;
    if (proc_uid(pid, &uid) < 0) {
        snprintf(err, errlen, "jail: the uid of QEMU (pid %d) cannot be read", (int)pid);
        return -1;
    }
    if (uid < j->cfg.uid_base || uid - j->cfg.uid_base >= j->cfg.uid_count) {
        snprintf(err, errlen, "jail: QEMU (pid %d) runs as uid %u, outside the jail range "
                              "%u-%u", (int)pid, (unsigned)uid, (unsigned)j->cfg.uid_base,
                 (unsigned)(j->cfg.uid_base + j->cfg.uid_count - 1));
        return -1;
    }
    struct jail *jl = jail_alloc(j);
    if (!jl) {
        snprintf(err, errlen, "jail: out of memory");
        return -1;
    }
    jl->uid = uid;
    jl->adopted = true;
    snprintf(jl->leaf, sizeof(jl->leaf), "vm-%u", (unsigned)uid);
    /* Only what every jail owns is known again; the disk is given back by
     * the next jail of its sandbox. */
    snprintf(jl->owned[0], sizeof(jl->owned[0]), "%s", dir);
    jl->n_owned = 1;
    *out = jl;
    return 0;
}

void jail_limit_reason(const struct jail *jl, char *buf, size_t buflen)
{
    unsigned long long kills = jail_cgroups_oom_kills(&jl->jailer->cgroups, jl->leaf);
    if (kills)
        snprintf(buf, buflen, "the sandbox's memory limit (guest RAM + %u MiB) was reached",
                 jl->jailer->cfg.mem_overhead_mb);
    else if (buflen)
        buf[0] = '\0';
}

/* An adopted jail's claim was its QEMU's alone, and ended with it: take
 * it again before cleaning up, or leave the uid to whoever has it now (a
 * new jail of that uid takes its leaf and files over). */
static bool reclaim(struct jail *jl)
{
    jl->lock_fd = try_claim(jl->jailer, jl->uid);
    return jl->lock_fd >= 0;
}

void jail_close(struct jail *jl)
{
    if (!jl)
        return;
    if (jl->adopted && !reclaim(jl)) {
        free(jl);
        return;
    }
    for (size_t i = 0; i < jl->n_procs_fds; i++)
        close(jl->procs_fds[i]);
    if (jl->netns_fd >= 0)
        close(jl->netns_fd);
    if (jl->leaf[0])
        jail_cgroups_remove_leaf(&jl->jailer->cgroups, jl->leaf);
    give_back(jl);
    /* Last: until here the uid, its leaf and its files are ours. */
    if (jl->lock_fd >= 0)
        close(jl->lock_fd);
    free(jl);
}
