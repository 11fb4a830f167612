#include "proc.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"

char *proc_cmdline(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
    char *cmd = NULL;
    size_t len = 0;
    if (fs_read_file(path, 1 << 20, &cmd, &len, NULL, 0) < 0)
        return NULL;
    for (size_t i = 0; i < len; i++)
        if (cmd[i] == '\0')
            cmd[i] = ' ';
    return cmd;
}

bool proc_cmdline_matches(pid_t pid, const char *a, const char *b)
{
    char *cmd = proc_cmdline(pid);
    if (!cmd)
        return false;
    bool match = strstr(cmd, a) && (!b || strstr(cmd, b));
    free(cmd);
    return match;
}

bool proc_cwd_is(pid_t pid, const char *dir)
{
    /* The directory itself, not its name: a QEMU in a jail has its own
     * root, so /proc shows its cwd by the jail's name for it (/vm). */
    char path[64];
    struct stat cwd, want;
    snprintf(path, sizeof(path), "/proc/%d/cwd", (int)pid);
    return stat(path, &cwd) == 0 && stat(dir, &want) == 0 && cwd.st_dev == want.st_dev &&
           cwd.st_ino == want.st_ino;
}

/* Command line contains a and b (b may be NULL) and, when cwd is
 * set, the working directory is cwd. */
struct proc_match {
    const char *a, *b, *cwd;
};

static size_t find_matching(const struct proc_match *m, pid_t *out, size_t max)
{
    DIR *d = opendir("/proc");
    if (!d)
        return 0;
    size_t count = 0;
    pid_t self = getpid();
    struct dirent *e;
    while ((e = readdir(d))) {
        pid_t pid = (pid_t)atoi(e->d_name);
        if (pid <= 1 || pid == self || !proc_cmdline_matches(pid, m->a, m->b) ||
            (m->cwd && !proc_cwd_is(pid, m->cwd)))
            continue;
        if (count < max && out)
            out[count] = pid;
        count++;
    }
    closedir(d);
    return count;
}

size_t proc_find(const char *a, const char *b, pid_t *out, size_t max)
{
    struct proc_match m = { .a = a, .b = b };
    return find_matching(&m, out, max);
}

size_t proc_find_in_dir(const char *a, const char *dir, pid_t *out, size_t max)
{
    struct proc_match m = { .a = a, .cwd = dir };
    return find_matching(&m, out, max);
}

int proc_start_time(pid_t pid, unsigned long long *ticks)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    char *stat = NULL;
    if (fs_read_file(path, 4096, &stat, NULL, NULL, 0) < 0)
        return -1;
    /* The command name (field 2) may hold spaces and ')': fields 3.. come
     * after the last ')'. */
    const char *rest = strrchr(stat, ')');
    char state = 0;
    int rc = -1;
    if (rest && sscanf(rest + 1,
                       " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d "
                       "%*d %llu",
                       &state, ticks) == 2 &&
        state != 'Z' && state != 'X')
        rc = 0;
    free(stat);
    return rc;
}
