/* Writer for "newc" cpio archives, the format the kernel unpacks as an
 * initramfs. Entries are owned by root with mtime 0 (so equal inputs give
 * equal bytes); device nodes are plain entries, so no mknod is needed.
 *
 * Add functions record the first error and later calls do nothing;
 * cpio_writer_close() reports it. Names are relative ("bin/sh"). */
#ifndef AIRLOCK_CPIO_H
#define AIRLOCK_CPIO_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

struct cpio_writer {
    FILE *out;
    const char *path;
    unsigned next_ino;
    char error[256]; /* first error, "" while all is well */
};

int cpio_writer_open(struct cpio_writer *w, const char *path, char *err, size_t errlen);
void cpio_add_dir(struct cpio_writer *w, const char *name, mode_t perm);
void cpio_add_file(struct cpio_writer *w, const char *name, mode_t perm, const void *data,
                   size_t len);
/* Adds the content of the host file src_path. */
void cpio_add_file_from(struct cpio_writer *w, const char *name, mode_t perm,
                        const char *src_path);
void cpio_add_symlink(struct cpio_writer *w, const char *name, const char *target);
void cpio_add_chardev(struct cpio_writer *w, const char *name, mode_t perm, unsigned major,
                      unsigned minor);
/* Writes the trailer, fsyncs and closes. Returns -1 with the first error of
 * any call (the file is then incomplete and the caller removes it). */
int cpio_writer_close(struct cpio_writer *w, char *err, size_t errlen);

#endif
