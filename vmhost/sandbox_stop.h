/* What vmhost's stop does with its sandboxes, and how they come back.
 *
 * By default (docs/vm-driver.md "Durability") a stop keeps every sandbox:
 * a running or paused one is suspended to disk like a SuspendSandbox, but
 * remembers that the control plane still believes it running or paused;
 * then every sandbox's network goes (egress detached, namespace deleted),
 * so a stopped vmhost leaves no QEMU and no namespace behind, only files.
 * The next vmhost lists them (sandbox_adopt.h). The first request that
 * needs such a sandbox's VM (exec, files, processes, pause, checkpoint,
 * restore) resumes it first — network, QEMU, state, guest — and puts a
 * paused one back to paused; a SuspendSandbox makes it an ordinary
 * suspended sandbox instead. With --delete-on-stop the stop deletes every
 * sandbox, as vmhost did before. */
#ifndef AIRLOCK_SANDBOX_STOP_H
#define AIRLOCK_SANDBOX_STOP_H

#include <stddef.h>

#include "sandbox.h"

/* Suspends, unregisters and frees every sandbox (or deletes each with
 * --delete-on-stop). A sandbox that cannot be suspended (a full store)
 * keeps running and stays registered, for the next vmhost to adopt. */
void sandbox_stop_all(struct vmhost *vh);

/* sandbox_suspend() on behalf of vmhost's stop (sandbox_suspend.c):
 * records the state it came from in stop_suspended_from. */
int sandbox_suspend_for_stop(struct sandbox *sb, struct airlock_error *e);

/* For a sandbox vmhost's stop suspended: resumes it (and pauses it again
 * if it was paused). Anything else: 0 at once. (sandbox_pause.c) */
int sandbox_wake(struct sandbox *sb, struct airlock_error *e);

#endif
