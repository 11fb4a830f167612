#include "vm_socket.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

int vm_socket_connect(const char *path, char *err, size_t errlen)
{
    int fd = -1, saved = 0;
    int pfd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (pfd < 0 || fstat(pfd, &st) < 0) {
        saved = errno;
        snprintf(err, errlen, "%s: %s", path, strerror(saved));
        goto out;
    }
    if (!S_ISSOCK(st.st_mode)) {
        saved = S_ISLNK(st.st_mode) ? ELOOP : ENOTSOCK;
        snprintf(err, errlen, "%s is a %s, not the socket QEMU made: refused", path,
                 S_ISLNK(st.st_mode) ? "symbolic link" : "file of another kind");
        goto out;
    }
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d", pfd);
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        saved = errno;
        snprintf(err, errlen, "%s: %s", path, strerror(saved));
        if (fd >= 0)
            close(fd);
        fd = -1;
    }
out:
    if (pfd >= 0)
        close(pfd);
    errno = saved;
    return fd;
}
