/* The node's state as text lines, and QEMU's cgroup and /proc values. */
#include "escape_node.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "escape_guest.h"
#include "fsutil.h"
#include "netns.h"
#include "sandbox_netdefs.h"
#include "strbuf.h"

#define NODE_MAX_PIDS 512
#define JAIL_CLAIM_DIR "/run/airlock/jail-uids"
#define JAILS_PARENT "/airlock-jails/"

/* One line per entry of dir (but . and ..) as "<kind> <prefix><name>",
 * for the names keep (may be NULL: all) accepts. */
static void add_dir_entries(struct strbuf *out, const char *kind, const char *dir,
                            const char *prefix, bool (*keep)(const char *, const void *),
                            const void *arg)
{
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && (!keep || keep(e->d_name, arg)))
            strbuf_appendf(out, "%s %s%s\n", kind, prefix, e->d_name);
    if (d)
        closedir(d);
}

/* name is airlock-<id> for one of the scope's ids. */
static bool is_scope_netns(const char *name, const void *arg)
{
    const struct escape_node_scope *scope = arg;
    size_t n = strlen(SANDBOX_NET_NS_PREFIX);
    if (strncmp(name, SANDBOX_NET_NS_PREFIX, n) != 0)
        return false;
    for (size_t i = 0; i < scope->n_ids; i++)
        if (strcmp(name + n, scope->ids[i]) == 0)
            return true;
    return false;
}

/* A jail leaf of the suite's uid range. */
static bool is_scope_leaf(const char *name, const void *arg)
{
    (void)arg;
    unsigned uid;
    return sscanf(name, "vm-%u", &uid) == 1 && uid >= ESCAPE_GUEST_UID_BASE &&
           uid < ESCAPE_GUEST_UID_BASE + ESCAPE_GUEST_UID_COUNT;
}

static pid_t parent_of(pid_t pid)
{
    char path[64], *text = NULL;
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    if (fs_read_file(path, 1 << 16, &text, NULL, NULL, 0) < 0)
        return -1;
    const char *at = strstr(text, "\nPPid:");
    pid_t ppid = at ? (pid_t)strtol(at + 6, NULL, 10) : -1;
    free(text);
    return ppid;
}

static void add_processes(struct strbuf *out, const struct itest_vmhost *vh)
{
    pid_t pids[NODE_MAX_PIDS];
    size_t n = itest_find_qemus(vh->data_dir, pids, NODE_MAX_PIDS);
    for (size_t i = 0; i < n && i < NODE_MAX_PIDS; i++)
        strbuf_appendf(out, "qemu %d\n", (int)pids[i]);
    DIR *d = opendir("/proc");
    for (struct dirent *e; d && (e = readdir(d));) {
        pid_t pid = (pid_t)strtol(e->d_name, NULL, 10);
        if (pid > 0 && parent_of(pid) == vh->pid)
            strbuf_appendf(out, "vmhost-child %d\n", (int)pid);
    }
    if (d)
        closedir(d);
}

/* Mounts under the data directory and of the scope's namespaces. */
static void add_mounts(struct strbuf *out, const struct escape_node_scope *scope)
{
    char *info = NULL;
    if (fs_read_file("/proc/self/mountinfo", 4 << 20, &info, NULL, NULL, 0) < 0)
        return;
    size_t dlen = strlen(scope->vh->data_dir), nlen = strlen(NETNS_RUN_DIR "/");
    for (char *save = NULL, *line = strtok_r(info, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        char point[PATH_MAX];
        if (sscanf(line, "%*s %*s %*s %*s %4095s", point) != 1)
            continue;
        bool ours = strncmp(point, scope->vh->data_dir, dlen) == 0 ||
                    (strncmp(point, NETNS_RUN_DIR "/", nlen) == 0 &&
                     is_scope_netns(point + nlen, scope));
        if (ours)
            strbuf_appendf(out, "mount %s\n", point);
    }
    free(info);
}

/* The directory of a /proc/PID/cgroup line's hierarchy, or -1. */
static int cgroup_mount_dir(const char *controllers, char *out, size_t outlen)
{
    if (controllers[0])
        return fs_path(out, outlen, "/sys/fs/cgroup/%s", controllers);
    /* cgroup v2: the unified mount of a hybrid machine, or the only one */
    if (access("/sys/fs/cgroup/unified", F_OK) == 0)
        return fs_path(out, outlen, "/sys/fs/cgroup/unified");
    return fs_path(out, outlen, "/sys/fs/cgroup");
}

/* Calls fn(controllers, cgroup path) for each line of /proc/pid/cgroup. */
static void for_each_cgroup(pid_t pid, void (*fn)(const char *, const char *, void *), void *arg)
{
    char path[64], *text = NULL;
    snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
    if (fs_read_file(path, 1 << 16, &text, NULL, NULL, 0) < 0)
        return;
    for (char *save = NULL, *line = strtok_r(text, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2)
            continue;
        *c2 = '\0';
        fn(c1 + 1, c2 + 1, arg);
    }
    free(text);
}

static void add_jail_leaves_of(const char *controllers, const char *cgroup, void *arg)
{
    const char *parent = strstr(cgroup, JAILS_PARENT);
    char mnt[PATH_MAX], dir[PATH_MAX], label[PATH_MAX];
    if (!parent || cgroup_mount_dir(controllers, mnt, sizeof(mnt)) < 0 ||
        fs_path(dir, sizeof(dir), "%s%.*s", mnt,
                (int)(parent - cgroup + strlen(JAILS_PARENT) - 1), cgroup) < 0)
        return;
    snprintf(label, sizeof(label), "%s/", controllers[0] ? controllers : "unified");
    add_dir_entries(arg, "cgroup", dir, label, is_scope_leaf, NULL);
}

static void add_claims(struct strbuf *out)
{
    for (unsigned uid = ESCAPE_GUEST_UID_BASE;
         uid < ESCAPE_GUEST_UID_BASE + ESCAPE_GUEST_UID_COUNT; uid++) {
        char path[128];
        snprintf(path, sizeof(path), JAIL_CLAIM_DIR "/%u", uid);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        if (flock(fd, LOCK_EX | LOCK_NB) < 0)
            strbuf_appendf(out, "uid-claim %u\n", uid);
        close(fd); /* drops the lock we may have taken */
    }
}

static int compare_lines(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The lines of text sorted, as a new string. */
static char *sorted(char *text)
{
    size_t n = 0, cap = 0;
    char **lines = NULL;
    for (char *save = NULL, *line = strtok_r(text, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        if (n == cap && !(lines = realloc(lines, (cap = cap ? cap * 2 : 64) * sizeof(*lines))))
            abort();
        lines[n++] = line;
    }
    if (n)
        qsort(lines, n, sizeof(*lines), compare_lines);
    struct strbuf out = { 0 };
    strbuf_append(&out, "");
    for (size_t i = 0; i < n; i++)
        strbuf_appendf(&out, "%s\n", lines[i]);
    free(lines);
    char *copy = strbuf_failed(&out) ? NULL : strdup(strbuf_str(&out));
    strbuf_free(&out);
    if (!copy)
        abort();
    return copy;
}

char *escape_node_state(const struct escape_node_scope *scope)
{
    struct strbuf s = { 0 };
    char dir[PATH_MAX];
    add_processes(&s, scope->vh);
    add_mounts(&s, scope);
    add_dir_entries(&s, "netns", NETNS_RUN_DIR, "", is_scope_netns, scope);
    for_each_cgroup(scope->witness_qemu, add_jail_leaves_of, &s);
    add_claims(&s);
    add_dir_entries(&s, "data-dir", scope->vh->data_dir, "", NULL, NULL);
    if (fs_path(dir, sizeof(dir), "%s/store/sandboxes", scope->vh->data_dir) == 0)
        add_dir_entries(&s, "sandbox", dir, "", NULL, NULL);
    if (strbuf_failed(&s))
        abort();
    char *text = strdup(strbuf_str(&s));
    strbuf_free(&s);
    char *out = sorted(text);
    free(text);
    return out;
}

/* The length of the line at p (without its newline). */
static size_t line_len(const char *p)
{
    return strcspn(p, "\n");
}

static const char *next_line(const char *p)
{
    p += line_len(p);
    return *p ? p + 1 : p;
}

/* Both states are sorted: one merge walk prints every line only one of
 * them has (a line held twice by one and once by the other counts too). */
bool escape_node_same(const char *before, const char *after)
{
    if (strcmp(before, after) == 0)
        return true;
    fprintf(stderr, "escape: the node changed (- gone, + new):\n");
    for (const char *a = before, *b = after; *a || *b;) {
        size_t la = line_len(a), lb = line_len(b);
        int cmp = !*a ? 1 : !*b ? -1 : strncmp(a, b, la < lb ? la : lb);
        if (cmp == 0 && la != lb)
            cmp = la < lb ? -1 : 1;
        if (cmp < 0)
            fprintf(stderr, "  - %.*s\n", (int)la, a);
        else if (cmp > 0)
            fprintf(stderr, "  + %.*s\n", (int)lb, b);
        a = cmp <= 0 ? next_line(a) : a;
        b = cmp >= 0 ? next_line(b) : b;
    }
    return false;
}

struct cgroup_find {
    const char *controller;
    char dir[PATH_MAX];
};

static void find_controller_dir(const char *controllers, const char *cgroup, void *arg)
{
    struct cgroup_find *f = arg;
    char mnt[PATH_MAX];
    size_t n = strlen(f->controller);
    bool match = !controllers[0] && !f->dir[0];
    for (const char *p = controllers; *p && !match; p += strcspn(p, ","), p += *p == ',')
        match = strncmp(p, f->controller, n) == 0 && (p[n] == ',' || p[n] == '\0');
    if (match && cgroup_mount_dir(controllers, mnt, sizeof(mnt)) == 0)
        fs_path(f->dir, sizeof(f->dir), "%s%s", mnt, cgroup);
}

/* The text of a file of qemu's cgroup (malloc'd), or NULL. */
static char *qemu_cgroup_text(pid_t qemu, const char *controller, const char *file)
{
    struct cgroup_find f = { .controller = controller };
    for_each_cgroup(qemu, find_controller_dir, &f);
    char path[PATH_MAX + 64], *text = NULL;
    if (!f.dir[0] || fs_path(path, sizeof(path), "%s/%s", f.dir, file) < 0 ||
        fs_read_file(path, 1 << 16, &text, NULL, NULL, 0) < 0)
        return NULL;
    return text;
}

long long escape_qemu_cgroup_value(pid_t qemu, const char *controller, const char *file)
{
    char *text = qemu_cgroup_text(qemu, controller, file);
    if (!text)
        return -1;
    long long v = strncmp(text, "max", 3) == 0 ? LLONG_MAX : strtoll(text, NULL, 10);
    free(text);
    return v;
}

long long escape_qemu_cgroup_field(pid_t qemu, const char *controller, const char *file,
                                   const char *key)
{
    char *text = qemu_cgroup_text(qemu, controller, file);
    long long v = -1;
    size_t n = strlen(key);
    for (const char *line = text; line && *line; line += strcspn(line, "\n"), line += !!*line)
        if (strncmp(line, key, n) == 0 && line[n] == ' ')
            v = strtoll(line + n + 1, NULL, 10);
    free(text);
    return v;
}

long long escape_proc_status_value(pid_t pid, const char *key)
{
    char path[64], want[64], *text = NULL;
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    snprintf(want, sizeof(want), "\n%s:", key);
    if (fs_read_file(path, 1 << 16, &text, NULL, NULL, 0) < 0)
        return -1;
    const char *at = strstr(text, want);
    long long v = at ? strtoll(at + strlen(want), NULL, 10) : -1;
    free(text);
    return v;
}

long long escape_qemu_memory_limit(pid_t qemu)
{
    long long v1 = escape_qemu_cgroup_value(qemu, "memory", "memory.limit_in_bytes");
    return v1 >= 0 ? v1 : escape_qemu_cgroup_value(qemu, "memory", "memory.max");
}
