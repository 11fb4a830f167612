/* What the daemon does as the VM's init (PID 1). Everything is best
 * effort: PID 1 must never exit, so failures are logged and skipped. */
#ifndef GUESTD_PID1_H
#define GUESTD_PID1_H

/* Console on stdout/stderr, mounts, /dev symlinks, hostname, limits. */
void pid1_setup(void);

/* Opens /dev/null on any of fds 0-2 that is closed, so later pipes never
 * land there. */
void stdio_ensure_open(void);

#endif
