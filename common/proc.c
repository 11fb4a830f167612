#include "proc.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

size_t proc_find(const char *a, const char *b, pid_t *out, size_t max)
{
    DIR *d = opendir("/proc");
    if (!d)
        return 0;
    size_t count = 0;
    pid_t self = getpid();
    struct dirent *e;
    while ((e = readdir(d))) {
        pid_t pid = (pid_t)atoi(e->d_name);
        if (pid <= 1 || pid == self || !proc_cmdline_matches(pid, a, b))
            continue;
        if (count < max && out)
            out[count] = pid;
        count++;
    }
    closedir(d);
    return count;
}
