#include "itest_store.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <unistd.h>

#include "clock.h"

static bool path_below(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    return strncmp(path, dir, n) == 0 && path[n] == '/';
}

size_t itest_mounts_under(const char *dir, bool unmount)
{
    FILE *f = fopen("/proc/self/mountinfo", "re");
    if (!f)
        return 0;
    char points[64][PATH_MAX];
    size_t n = 0;
    char line[8192];
    while (fgets(line, sizeof(line), f)) {
        /* id parent major:minor root mount-point ... */
        char point[PATH_MAX];
        if (sscanf(line, "%*s %*s %*s %*s %4095s", point) == 1 && path_below(point, dir) &&
            n < 64)
            snprintf(points[n++], PATH_MAX, "%s", point);
    }
    fclose(f);
    /* Innermost first. */
    for (size_t i = n; unmount && i-- > 0;) {
        fprintf(stderr, "itest: unmounting leftover %s\n", points[i]);
        umount2(points[i], MNT_DETACH);
    }
    return n;
}

size_t itest_loops_under(const char *dir, bool detach)
{
    DIR *d = opendir("/sys/block");
    if (!d)
        return 0;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, "loop", 4) != 0)
            continue;
        char path[PATH_MAX], backing[PATH_MAX] = "";
        snprintf(path, sizeof(path), "/sys/block/%s/loop/backing_file", e->d_name);
        FILE *f = fopen(path, "re");
        if (!f)
            continue; /* not bound */
        if (fgets(backing, sizeof(backing), f))
            backing[strcspn(backing, "\n")] = '\0';
        fclose(f);
        if (!path_below(backing, dir))
            continue;
        n++;
        if (!detach)
            continue;
        snprintf(path, sizeof(path), "/dev/%s", e->d_name);
        fprintf(stderr, "itest: detaching leftover %s (%s)\n", path, backing);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
            ioctl(fd, LOOP_CLR_FD, 0);
            close(fd);
        }
    }
    closedir(d);
    return n;
}

bool itest_store_released(const char *dir, int timeout_ms)
{
    int64_t deadline = clock_monotonic_ms() + timeout_ms;
    for (;;) {
        bool released = itest_mounts_under(dir, false) == 0 && itest_loops_under(dir, false) == 0;
        if (released || clock_monotonic_ms() > deadline)
            return released;
        usleep(20 * 1000);
    }
}
