#include "port.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

#define PORT_SYSFS "/sys/class/virtio-ports"
#define PORT_POLL_MS 50

int port_find(const char *sysfs_dir, const char *name, char *out, size_t outlen)
{
    DIR *d = opendir(sysfs_dir);
    if (!d)
        return -1;
    int rc = -1;
    struct dirent *de;
    while (rc < 0 && (de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        char path[512], got[256];
        snprintf(path, sizeof(path), "%s/%s/name", sysfs_dir, de->d_name);
        FILE *f = fopen(path, "re");
        if (!f)
            continue;
        if (fgets(got, sizeof(got), f)) {
            got[strcspn(got, "\n")] = '\0';
            if (strcmp(got, name) == 0) {
                snprintf(out, outlen, "/dev/%s", de->d_name);
                rc = 0;
            }
        }
        fclose(f);
    }
    closedir(d);
    return rc;
}

int port_open_wait(const char *name)
{
    char dev[300];
    for (unsigned attempt = 0;; attempt++) {
        if (port_find(PORT_SYSFS, name, dev, sizeof(dev)) == 0) {
            int fd = open(dev, O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
            if (fd >= 0) {
                log_info("channel port open", "port=%s dev=%s", name, dev);
                return fd;
            }
            if (attempt % 100 == 0)
                log_warn("cannot open channel port", "dev=%s errno=%d", dev, errno);
        } else if (attempt % 100 == 0) {
            log_warn("waiting for the channel port", "port=%s sysfs=%s", name, PORT_SYSFS);
        }
        usleep(PORT_POLL_MS * 1000);
    }
}
