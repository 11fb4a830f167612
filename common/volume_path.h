/* Where a volume may be mounted in a guest (docs/volumes.md): one check,
 * so vmhost refuses a create up front and guestd refuses again what
 * reaches it (the host and the guest each trust only their own check). */
#ifndef AIRLOCK_VOLUME_PATH_H
#define AIRLOCK_VOLUME_PATH_H

#include <stddef.h>

/* 0 when path is absolute, shorter than max, has no empty, "." or ".."
 * component and is not a system path (/, /proc, /sys, /dev or below them);
 * else -1 with why in msg (naming the path). */
int volume_path_check(const char *path, size_t max, char *msg, size_t len);

#endif
