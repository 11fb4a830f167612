/* The jail's system call filter (docs/jail.md, "The filter"): installed by
 * the jail's child just before exec, so it holds for QEMU from its first
 * instruction and for anything that takes QEMU over. QEMU's own -sandbox
 * filter stacks on it later; this one is what a QEMU that never installs
 * its own, or one exploited before it does, still runs under. It denies
 * what a VMM with its devices already open never needs and what makes the
 * kernel's attack surface larger: new namespaces, mounts, other processes'
 * memory, modules and kexec, bpf, perf, userfaultfd, keys, io_uring,
 * handles to files outside the root, and sockets other than AF_UNIX.
 * libseccomp builds it (the BPF for x86-64 and the check of the calling
 * convention, which a hand-written program gets wrong easily). */
#ifndef AIRLOCK_JAIL_FILTER_H
#define AIRLOCK_JAIL_FILTER_H

#include <stddef.h>
#include <linux/filter.h>

struct jail_filter {
    struct sock_filter *insns;
    unsigned short len;
};

/* Builds the filter into f (in the parent: the child may not allocate).
 * -1 with a message. */
int jail_filter_build(struct jail_filter *f, char *err, size_t errlen);
void jail_filter_free(struct jail_filter *f);

/* Installs f on the calling thread; no_new_privs must be set. Only a
 * system call: safe in the jail's child. -1 with errno. */
int jail_filter_install(const struct jail_filter *f);

#endif
