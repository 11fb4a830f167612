/* One-shot file operations: stat, mkdir, remove, rename, chmod. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bytes.h"
#include "file_request.h"
#include "guest_fs.h"
#include "request_handlers.h"
#include "send.h"

void stat_request(struct guestd *g, uint32_t id, const GuestFrame *frame)
{
    const Airlock__Guest__V1__StatRequest *r = frame->stat;
    char *path = request_path(g, id, "stat", &r->path);
    if (!path)
        return;
    struct stat st;
    if ((r->follow_symlinks ? stat(path, &st) : lstat(path, &st)) < 0) {
        send_path_error(g, id, "stat", path, errno);
        free(path);
        return;
    }
    Airlock__Guest__V1__FileInfo fi = AIRLOCK__GUEST__V1__FILE_INFO__INIT;
    file_info_from_stat(&fi, &st);
    if (S_ISLNK(st.st_mode))
        file_info_read_link(&fi, AT_FDCWD, path, (size_t)st.st_size);
    const char *slash = strrchr(path, '/');
    const char *base = slash[1] ? slash + 1 : "/";
    fi.name.data = (uint8_t *)base;
    fi.name.len = strlen(base);
    GuestFrame f = AIRLOCK__GUEST__V1__GUEST_FRAME__INIT;
    f.stream_id = id;
    f.body_case = AIRLOCK__GUEST__V1__GUEST_FRAME__BODY_FILE_INFO;
    f.file_info = &fi;
    guestd_send(g, &f);
    free(fi.link_target.data);
    free(path);
}

/* Result{0} when rc is not negative, else op's error on path (errno). */
static void send_path_outcome(struct guestd *g, uint32_t id, const char *op, const char *path,
                              int rc)
{
    if (rc < 0)
        send_path_error(g, id, op, path, errno);
    else
        guestd_send_result(g, id, 0, NULL);
}

void mkdir_request(struct guestd *g, uint32_t id, const GuestFrame *frame)
{
    const Airlock__Guest__V1__MkdirRequest *r = frame->mkdir;
    char *path = request_path(g, id, "mkdir", &r->path);
    if (!path)
        return;
    mode_t mode = r->mode ? (mode_t)(r->mode & 07777) : 0755;
    send_path_outcome(g, id, "mkdir", path,
                      r->parents ? mkdir_parents(path, mode) : mkdir(path, mode));
    free(path);
}

void remove_request(struct guestd *g, uint32_t id, const GuestFrame *frame)
{
    const Airlock__Guest__V1__RemoveRequest *r = frame->remove;
    char *path = request_path(g, id, "remove", &r->path);
    if (!path)
        return;
    struct stat st;
    char failed[4096];
    if (strcmp(path, "/") == 0) {
        guestd_send_result(g, id, EBUSY, "remove \"/\": refusing to remove the root");
    } else if (lstat(path, &st) < 0) {
        send_path_error(g, id, "remove", path, errno);
    } else if (S_ISDIR(st.st_mode) && r->recursive) {
        /* failed: the path that could not be removed, filled in by then. */
        send_path_outcome(g, id, "remove", failed, remove_tree(path, failed, sizeof(failed)));
    } else {
        send_path_outcome(g, id, "remove", path, S_ISDIR(st.st_mode) ? rmdir(path) : unlink(path));
    }
    free(path);
}

void rename_request(struct guestd *g, uint32_t id, const GuestFrame *frame)
{
    const Airlock__Guest__V1__RenameRequest *r = frame->rename;
    char *from = request_path(g, id, "rename", &r->from);
    char *to = from ? request_path(g, id, "rename", &r->to) : NULL;
    if (to && rename(from, to) < 0) {
        int err = errno;
        guestd_send_result(g, id, err, "rename %s to %s: %s", quoted(from).s, quoted(to).s,
                           strerror(err));
    } else if (to) {
        guestd_send_result(g, id, 0, NULL);
    }
    free(from);
    free(to);
}

void chmod_request(struct guestd *g, uint32_t id, const GuestFrame *frame)
{
    const Airlock__Guest__V1__ChmodRequest *r = frame->chmod;
    char *path = request_path(g, id, "chmod", &r->path);
    if (!path)
        return;
    send_path_outcome(g, id, "chmod", path, chmod(path, (mode_t)(r->mode & 07777)));
    free(path);
}
