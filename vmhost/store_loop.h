/* Loop-mounting a btrfs image file: the fallback store when the data
 * directory is not on btrfs. */
#ifndef AIRLOCK_STORE_LOOP_H
#define AIRLOCK_STORE_LOOP_H

#include <stddef.h>

/* Creates image (sparse, size_gb) and formats it with mkfs.btrfs. The file
 * is built under a temporary name and renamed, so an image that exists is
 * always formatted. */
int store_loop_create_image(const char *image, unsigned size_gb, char *err, size_t errlen);

/* Attaches image to a free loop device with autoclear (the device detaches
 * when the file system is unmounted) and mounts it on dir as btrfs. */
int store_loop_mount(const char *image, const char *dir, char *err, size_t errlen);

#endif
