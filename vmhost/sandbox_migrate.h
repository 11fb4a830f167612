/* Live migration of a running sandbox to another node (a drain; docs/
 * snapshot-store.md "Live migration"). The scheduler drives both nodes,
 * one step at a time, so either side can be told to give up:
 *
 *   source  begin    the disk as it is now (a reflink: the first pass)
 *                    and the policy go to the shared store; the guest runs
 *   target  prepare  that set becomes the sandbox's disk, a QEMU waits for
 *                    the stream, a port for the source (migration_channel.h)
 *   source  send     the guest's memory streams while it runs; once QEMU
 *                    stopped it, what the disk changed since the first pass
 *                    follows, then the rest of the memory; the VM here stays
 *                    stopped (postmigrate) until deleted or aborted
 *   target  finish   the stream complete and the disk applied: the guest
 *                    runs here (new egress session and CA, as a resume)
 *   either  abort    source: the guest runs here again; target: its copy goes
 *
 * The guest is stopped from the source's switchover to the target's
 * finish: the disk's last changes, the last memory pages and the control
 * plane's two calls. */
#ifndef AIRLOCK_SANDBOX_MIGRATE_H
#define AIRLOCK_SANDBOX_MIGRATE_H

#include <stdint.h>

#include "airlock_error.h"
#include "migration_channel.h"

struct sandbox;
struct vmhost;

/* Source. set gets the first pass's object set (SANDBOX_STORE_OBJECT_SIZE).
 * Only a running sandbox of a template, on a node with a shared store. */
int sandbox_migrate_begin(struct sandbox *sb, char *set, size_t setlen, struct airlock_error *e);
/* Target. Sandbox id from set, sent by vmhost:source_node: *out (the
 * caller's reference), addr and token for the source. */
int sandbox_migrate_prepare(struct vmhost *vh, const char *id, const char *set,
                            const char *source_node, struct sandbox **out,
                            char addr[MIGRATION_ADDR_SIZE], char token[MIGRATION_TOKEN_SIZE],
                            struct airlock_error *e);
/* Source. On failure the guest runs here again (running, the first pass
 * gone). stopped_ms: how long the guest was stopped here. */
int sandbox_migrate_send(struct sandbox *sb, const char *addr, const char *token,
                         const char *target_node, int64_t *stopped_ms, struct airlock_error *e);
/* Target. On failure its copy is gone. */
int sandbox_migrate_finish(struct sandbox *sb, struct airlock_error *e);
/* Either side; a sandbox not migrating is left alone (0). */
int sandbox_migrate_abort(struct sandbox *sb, struct airlock_error *e);

/* Whether a step is using the sandbox's VM now (delete waits). Caller
 * holds sb->lock. */
bool sandbox_migrate_busy_locked(const struct sandbox *sb);
/* A deleted sandbox's migration state (sandbox_teardown). */
void sandbox_migrate_drop(struct sandbox *sb);

#endif
