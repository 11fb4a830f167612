/* Filesystem helpers shared by the file operations. */
#ifndef GUESTD_GUEST_FS_H
#define GUESTD_GUEST_FS_H

#include <stddef.h>
#include <sys/stat.h>

#include "frame.h"

/* mkdir -p: creates missing parents (0755) and path itself with mode; an
 * existing directory is fine. Returns 0 or -1 with errno. */
int mkdir_parents(const char *path, mode_t mode);

/* rm -r without following symlinks. Returns 0, or -1 with errno and the
 * path that failed in failed_path. */
int remove_tree(const char *path, char *failed_path, size_t failed_len);

/* Fills type, size, mode, mtime, uid, gid of fi from st. */
void file_info_from_stat(Airlock__Guest__V1__FileInfo *fi, const struct stat *st);
/* For a symlink: reads its target (relative to dirfd) into a malloc'd
 * fi->link_target. Returns 0 or -1 (target left empty). */
int file_info_read_link(Airlock__Guest__V1__FileInfo *fi, int dirfd, const char *path,
                        size_t size_hint);

#endif
