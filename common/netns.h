/* Named network namespaces as `ip netns` makes them: /run/netns/NAME is a
 * bind mount of a namespace's nsfs file, so the namespace lives without any
 * process in it and every tool (ip netns exec, nsenter) can find it.
 *
 * setns() switches only the calling thread. Work that must happen inside a
 * namespace (creating devices or sockets, which stay in the namespace they
 * were created in) runs on a short-lived thread of its own via netns_run(),
 * so no caller's thread is ever left in the wrong namespace. */
#ifndef AIRLOCK_NETNS_H
#define AIRLOCK_NETNS_H

#include <stddef.h>

#define NETNS_RUN_DIR "/run/netns"

/* Creates an empty namespace (only a loopback device, down) bound at
 * /run/netns/<name>. Fails with EEXIST when the name is taken. */
int netns_create(const char *name, char *err, size_t errlen);

/* Unmounts and removes /run/netns/<name>. The namespace itself goes when
 * nothing (process, socket, open fd) refers to it any more. A missing name
 * is not an error. */
int netns_delete(const char *name, char *err, size_t errlen);

/* Gives the namespace bound at /run/netns/<from> the name <to> (a bind
 * mount of the same namespace at the new path, then the old one goes):
 * what lives in it (devices, rules, sockets) is untouched. Fails with
 * EEXIST when <to> is taken; on failure <from> is left as it was. */
int netns_rename(const char *from, const char *to, char *err, size_t errlen);

/* /run/netns/<name> into buf; -1 (ENAMETOOLONG) when it does not fit. */
int netns_path(const char *name, char *buf, size_t buflen);

/* Runs fn(arg) on a new thread that has entered the namespace at ns_path
 * (NULL: the caller's own namespace) and returns what fn returned. -1 with
 * err set when the namespace cannot be entered or the thread not started;
 * fn reports its own errors through arg. */
int netns_run(const char *ns_path, int (*fn)(void *arg), void *arg, char *err, size_t errlen);

/* Moves the calling thread into the namespace at ns_path for good; for
 * threads that exist to live there. */
int netns_enter(const char *ns_path, char *err, size_t errlen);

#endif
