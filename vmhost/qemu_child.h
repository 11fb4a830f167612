/* What every QEMU child does between fork (or the jail's clone3) and exec,
 * jailed (jail_child.c) or not (vm.c). The child is a copy of a
 * multithreaded vmhost: system calls only. */
#ifndef AIRLOCK_QEMU_CHILD_H
#define AIRLOCK_QEMU_CHILD_H

/* A session of its own (a Ctrl-C or a signal to vmhost's process group
 * must not reach it, and it outlives a vmhost that is killed), nice more
 * than vmhost, no transparent huge pages. 0, or -1 with errno. */
int qemu_child_begin(int nice);

/* Default signal mask and SIGPIPE, stdin from /dev/null, stdout and
 * stderr to log_fd. 0, or -1 with errno. */
int qemu_child_stdio(int log_fd);

#endif
