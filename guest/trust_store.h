/* The sandbox CA in the guest's trust store. egress answers TLS to hosts
 * with a credential binding with certificates signed by a CA of the
 * sandbox's own; the host hands its certificate over in SessionInit and
 * programs in the guest (curl, python, openssl) must trust it.
 *
 * Every create installs a new CA, so the install is on the hand-out path,
 * right after a restore, where under TCG every kernel path run for the
 * first time in that QEMU is translated first: rewriting the ~200 KB
 * bundle cost 120-140 ms; creating a file on tmpfs alone 30-45 ms. So the
 * work is done at boot, before the template snapshot: the bundle gets a
 * fixed-size slot at its end (page-aligned, whole pages), guestd maps it
 * shared and dirties it, and so a copy of the slot on tmpfs. A session
 * copies the CA into both mappings: no system call, no page fault.
 *
 * update-ca-certificates rebuilds the bundle without the slot; its hook
 * (TRUST_STORE_HOOK) appends the tmpfs copy to the new bundle, and the
 * next session finds the mapping stale and maps the new one. */
#ifndef GUESTD_TRUST_STORE_H
#define GUESTD_TRUST_STORE_H

#include <stddef.h>

/* Opens the slot; the slot is the marker line, the sandbox CA of the last
 * session (if any) and newlines, which PEM readers skip. */
#define TRUST_STORE_MARKER "# airlock sandbox CA (replaced at every session)\n"
#define TRUST_STORE_PEM_MAX 16384
#define TRUST_STORE_PAGE 4096
#define TRUST_STORE_SLOT_SIZE (TRUST_STORE_PEM_MAX + TRUST_STORE_PAGE)

struct trust_store_paths {
    const char *bundle; /* the system bundle; ends with the slot */
    const char *copy;   /* the slot's copy, on tmpfs */
    const char *hook;   /* update-ca-certificates' hook (its directory must exist) */
};

/* /etc/ssl/certs/ca-certificates.crt, /run/airlock/trust-slot and
 * /etc/ca-certificates/update.d/airlock-sandbox-ca. */
extern const struct trust_store_paths trust_store_system;

/* At boot: reserves the slot (the bundle is created if missing) unless it
 * is there, maps it and its copy, installs the hook. One store per
 * process. 0, or an errno with msg naming what failed. */
int trust_store_prepare(const struct trust_store_paths *p, char *msg, size_t msglen);

/* Makes pem (one PEM certificate) the sandbox CA: puts it into the
 * bundle's slot and its copy, through the mappings when they are current,
 * else by writing the files (reserving the slot again if the bundle lost
 * it). An empty pem empties a slot that holds a CA (a warm-pool VM's
 * warm-up CA, a fork of a sandbox that had one), at no cost when it holds
 * none. A malformed pem changes nothing. 0, or an errno with msg. */
int trust_store_set_ca(const struct trust_store_paths *p, const char *pem, char *msg,
                       size_t msglen);

/* Dirties the mapped slots again after a writeback cleaned them (the
 * template build syncs the guest, then hangs up before its snapshot), so
 * the next install's copy does not fault. */
void trust_store_keep_writable(void);

/* Unmaps (tests; guestd keeps its store for its life). */
void trust_store_release(void);

#endif
