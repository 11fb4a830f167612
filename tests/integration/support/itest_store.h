/* The btrfs store a test's vmhost loop-mounts under its data directory:
 * finding (and, for cleanup, removing) mounts and loop devices that belong
 * to one data directory, so no test leaves either behind. */
#ifndef AIRLOCK_ITEST_STORE_H
#define AIRLOCK_ITEST_STORE_H

#include <stdbool.h>
#include <stddef.h>

/* Mount points below dir; with unmount, each is detached (MNT_DETACH). */
size_t itest_mounts_under(const char *dir, bool unmount);

/* Loop devices whose backing file lies below dir; with detach, each is
 * cleared (LOOP_CLR_FD: it goes once its last user lets go). */
size_t itest_loops_under(const char *dir, bool detach);

/* Waits up to timeout_ms for dir's mounts and loop devices to go (loop
 * devices detach asynchronously after the unmount); true if they did. */
bool itest_store_released(const char *dir, int timeout_ms);

#endif
