#include "jail_cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"

#define JAIL_CGROUP_PARENT "airlock-jails"
#define JAIL_CGROUP_PERIOD_US 100000

/* v1 controllers the limits need; blkio is optional (io weight). */
static const char *const v1_controllers[] = { "memory", "cpu", "pids", "blkio" };

/* word is one of list's comma-separated words (mount options "rw,cpu,cpuacct",
 * a /proc/self/cgroup line's "cpu,cpuacct"). */
static bool in_list(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; *p; p += strcspn(p, ","), p += *p == ',')
        if (strncmp(p, word, n) == 0 && (p[n] == ',' || p[n] == '\0'))
            return true;
    return false;
}

/* The mount point of the hierarchy holding controller ("" for cgroup2)
 * from /proc/self/mountinfo. */
static int find_mount(const char *controller, char *mnt, size_t mntlen)
{
    FILE *f = fopen("/proc/self/mountinfo", "re");
    if (!f)
        return -1;
    char line[1024];
    int found = -1;
    while (found < 0 && fgets(line, sizeof(line), f)) {
        char point[512], fstype[32], super[256];
        /* id parent maj:min root point opts [optional...] - fstype source super */
        const char *sep = strstr(line, " - ");
        if (!sep || sscanf(line, "%*s %*s %*s %*s %511s", point) != 1 ||
            sscanf(sep + 3, "%31s %*s %255s", fstype, super) != 2)
            continue;
        bool match = controller[0]
                         ? strcmp(fstype, "cgroup") == 0 && in_list(super, controller)
                         : strcmp(fstype, "cgroup2") == 0;
        if (match)
            found = snprintf(mnt, mntlen, "%s", point) < (int)mntlen ? 0 : -1;
    }
    fclose(f);
    return found;
}

/* This process's cgroup in the hierarchy holding controller ("" for the
 * unified one), from /proc/self/cgroup ("" for the root). */
static int own_cgroup(const char *controller, char *path, size_t pathlen)
{
    FILE *f = fopen("/proc/self/cgroup", "re");
    if (!f)
        return -1;
    char line[1024];
    int found = -1;
    while (found < 0 && fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\n")] = '\0';
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2)
            continue;
        *c2 = '\0';
        const char *list = c1 + 1;
        if (controller[0] ? in_list(list, controller) : list[0] == '\0')
            found = snprintf(path, pathlen, "%s", strcmp(c2 + 1, "/") == 0 ? "" : c2 + 1) <
                            (int)pathlen ? 0 : -1;
    }
    fclose(f);
    return found;
}

static int write_value(const char *dir, const char *file, const char *value, char *err,
                       size_t errlen)
{
    char path[512];
    if (fs_path(path, sizeof(path), "%s/%s", dir, file) < 0) {
        snprintf(err, errlen, "cgroup path %s/%s is too long", dir, file);
        return -1;
    }
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0 || fs_write_all(fd, value, strlen(value)) < 0) {
        snprintf(err, errlen, "cgroup: write %s to %s: %s", value, path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    close(fd);
    return 0;
}

static bool has_file(const char *dir, const char *file)
{
    char path[512];
    return fs_path(path, sizeof(path), "%s/%s", dir, file) == 0 && access(path, F_OK) == 0;
}

/* cgroup v2: vmhost's own cgroup holds processes, and a cgroup with
 * processes cannot hand controllers to children (the "no internal
 * processes" rule): the jails' parent goes beside it, under its parent,
 * which must delegate memory, cpu and pids (systemd's Delegate=yes on the
 * service, or a container's own cgroup namespace root). */
static int init_v2(struct jail_cgroups *cg, const char *mnt, char *err, size_t errlen)
{
    char own[256], base[512];
    if (own_cgroup("", own, sizeof(own)) < 0) {
        snprintf(err, errlen, "cgroup v2: vmhost's own cgroup is not in /proc/self/cgroup");
        return -1;
    }
    char *slash = strrchr(own, '/');
    if (slash)
        *slash = '\0'; /* the parent of vmhost's cgroup; "" = the root */
    if (fs_path(base, sizeof(base), "%s%s", mnt, own) < 0 ||
        fs_path(cg->parents[0], sizeof(cg->parents[0]), "%s/" JAIL_CGROUP_PARENT, base) < 0) {
        snprintf(err, errlen, "cgroup v2: path too long");
        return -1;
    }
    if (write_value(base, "cgroup.subtree_control", "+memory +cpu +pids", err, errlen) < 0)
        return -1;
    if (mkdir(cg->parents[0], 0755) < 0 && errno != EEXIST) {
        snprintf(err, errlen, "cgroup v2: mkdir %s: %s", cg->parents[0], strerror(errno));
        return -1;
    }
    if (write_value(cg->parents[0], "cgroup.subtree_control", "+memory +cpu +pids", err, errlen) <
        0)
        return -1;
    if (has_file(base, "io.weight")) /* io is optional: not every kernel delegates it */
        write_value(cg->parents[0], "cgroup.subtree_control", "+io", err, errlen);
    cg->version = 2;
    cg->n_parents = 1;
    cg->controllers[0][0] = '\0';
    return 0;
}

/* cgroup v1: the parent goes under vmhost's own cgroup in each hierarchy
 * (v1 allows processes beside child cgroups), so the jails stay inside
 * whatever limits vmhost itself runs under. */
static int init_v1(struct jail_cgroups *cg, char *err, size_t errlen)
{
    cg->version = 1;
    cg->n_parents = 0;
    for (size_t i = 0; i < sizeof(v1_controllers) / sizeof(v1_controllers[0]); i++) {
        const char *c = v1_controllers[i];
        bool optional = strcmp(c, "blkio") == 0;
        char mnt[256], own[256];
        if (find_mount(c, mnt, sizeof(mnt)) < 0 || own_cgroup(c, own, sizeof(own)) < 0) {
            if (optional)
                continue;
            snprintf(err, errlen, "no cgroup hierarchy has the %s controller (neither cgroup v2 "
                                  "with it nor a v1 hierarchy is mounted): the jail's limits "
                                  "cannot be set", c);
            return -1;
        }
        char *parent = cg->parents[cg->n_parents];
        if (fs_path(parent, sizeof(cg->parents[0]), "%s%s/" JAIL_CGROUP_PARENT, mnt, own) < 0) {
            snprintf(err, errlen, "cgroup v1: path too long");
            return -1;
        }
        if (mkdir(parent, 0755) < 0 && errno != EEXIST) {
            snprintf(err, errlen, "cgroup v1: mkdir %s: %s", parent, strerror(errno));
            return -1;
        }
        snprintf(cg->controllers[cg->n_parents], sizeof(cg->controllers[0]), "%s", c);
        cg->n_parents++;
    }
    return 0;
}

int jail_cgroups_init(struct jail_cgroups *cg, char *err, size_t errlen)
{
    memset(cg, 0, sizeof(*cg));
    char mnt[256];
    /* Unified: cgroup2 mounted with the controllers (a hybrid host has a
     * cgroup2 mount too, with none of them). */
    if (find_mount("", mnt, sizeof(mnt)) == 0) {
        char controllers[512] = "", path[512];
        char *text = NULL;
        if (fs_path(path, sizeof(path), "%s/cgroup.controllers", mnt) == 0 &&
            fs_read_file(path, 4096, &text, NULL, NULL, 0) == 0)
            snprintf(controllers, sizeof(controllers), " %s ", text);
        free(text);
        for (char *p = controllers; *p; p++)
            if (*p == '\n')
                *p = ' ';
        if (strstr(controllers, " memory ") && strstr(controllers, " pids ") &&
            strstr(controllers, " cpu "))
            return init_v2(cg, mnt, err, errlen);
    }
    return init_v1(cg, err, errlen);
}

static int set_limits(const struct jail_cgroups *cg, size_t i, const char *dir,
                      const struct jail_limits *l, char *err, size_t errlen)
{
    char mem[32], cpu[48], pids[16];
    snprintf(mem, sizeof(mem), "%llu", l->memory_bytes);
    snprintf(pids, sizeof(pids), "%u", l->pids);
    if (cg->version == 2) {
        snprintf(cpu, sizeof(cpu), "%u %u", l->cpu_quota_us, JAIL_CGROUP_PERIOD_US);
        return write_value(dir, "memory.max", mem, err, errlen) < 0 ||
                       write_value(dir, "memory.swap.max", "0", err, errlen) < 0 ||
                       write_value(dir, "cpu.max", cpu, err, errlen) < 0 ||
                       write_value(dir, "pids.max", pids, err, errlen) < 0 ||
                       (has_file(dir, "io.weight") &&
                        write_value(dir, "io.weight", "default 100", err, errlen) < 0)
                   ? -1
                   : 0;
    }
    const char *c = cg->controllers[i];
    if (strcmp(c, "memory") == 0) {
        /* memsw (memory + swap) may never be below the memory limit: open
         * it first, so a leaf taken over with smaller limits can grow. */
        bool memsw = has_file(dir, "memory.memsw.limit_in_bytes");
        return (memsw && write_value(dir, "memory.memsw.limit_in_bytes", "-1", err, errlen) < 0) ||
                       write_value(dir, "memory.limit_in_bytes", mem, err, errlen) < 0 ||
                       (memsw && write_value(dir, "memory.memsw.limit_in_bytes", mem, err,
                                             errlen) < 0)
                   ? -1
                   : 0;
    }
    if (strcmp(c, "cpu") == 0) {
        snprintf(cpu, sizeof(cpu), "%u", l->cpu_quota_us);
        char period[16];
        snprintf(period, sizeof(period), "%u", JAIL_CGROUP_PERIOD_US);
        return write_value(dir, "cpu.cfs_period_us", period, err, errlen) < 0 ||
                       write_value(dir, "cpu.cfs_quota_us", cpu, err, errlen) < 0
                   ? -1
                   : 0;
    }
    if (strcmp(c, "pids") == 0)
        return write_value(dir, "pids.max", pids, err, errlen);
    /* blkio: a weight only where the I/O scheduler has one. */
    if (has_file(dir, "blkio.weight"))
        return write_value(dir, "blkio.weight", "100", err, errlen);
    return 0;
}

int jail_cgroups_make_leaf(const struct jail_cgroups *cg, const char *leaf,
                           const struct jail_limits *limits, int procs_fds[JAIL_CGROUP_MAX_DIRS],
                           char *err, size_t errlen)
{
    size_t made = 0;
    for (; made < cg->n_parents; made++) {
        char dir[512], procs[560];
        procs_fds[made] = -1;
        if (fs_path(dir, sizeof(dir), "%s/%s", cg->parents[made], leaf) < 0 ||
            fs_path(procs, sizeof(procs), "%s/cgroup.procs", dir) < 0) {
            snprintf(err, errlen, "cgroup leaf path too long");
            goto fail;
        }
        /* A leftover leaf of the same uid (its QEMU gone, a vmhost killed
         * before it could clean up) is empty and taken over. */
        if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
            snprintf(err, errlen, "cgroup: mkdir %s: %s", dir, strerror(errno));
            goto fail;
        }
        if (set_limits(cg, made, dir, limits, err, errlen) < 0) {
            rmdir(dir);
            goto fail;
        }
        procs_fds[made] = open(procs, O_WRONLY); /* inherited by the jail's child */
        if (procs_fds[made] < 0) {
            snprintf(err, errlen, "cgroup: open %s: %s", procs, strerror(errno));
            rmdir(dir);
            goto fail;
        }
    }
    return (int)made;

fail:
    for (size_t i = 0; i < made; i++)
        close(procs_fds[i]);
    jail_cgroups_remove_leaf(cg, leaf);
    return -1;
}

unsigned long long jail_cgroups_oom_kills(const struct jail_cgroups *cg, const char *leaf)
{
    for (size_t i = 0; i < cg->n_parents; i++) {
        if (cg->version == 1 && strcmp(cg->controllers[i], "memory") != 0)
            continue;
        char path[600];
        char *text = NULL;
        if (fs_path(path, sizeof(path), "%s/%s/%s", cg->parents[i], leaf,
                    cg->version == 2 ? "memory.events" : "memory.oom_control") < 0 ||
            fs_read_file(path, 4096, &text, NULL, NULL, 0) < 0)
            return 0;
        const char *at = strstr(text, "oom_kill ");
        unsigned long long n = at ? strtoull(at + strlen("oom_kill "), NULL, 10) : 0;
        free(text);
        return n;
    }
    return 0;
}

void jail_cgroups_remove_leaf(const struct jail_cgroups *cg, const char *leaf)
{
    for (size_t i = 0; i < cg->n_parents; i++) {
        char dir[512];
        if (fs_path(dir, sizeof(dir), "%s/%s", cg->parents[i], leaf) == 0)
            rmdir(dir);
    }
}
