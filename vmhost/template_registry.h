/* The templates this node can restore sandboxes from (docs/templates.md):
 * the default template, one snapshot per size (the 1 vCPU / 512 MiB one
 * made at start, others built on first use), and every ready version of
 * every named template (template_named.c), loaded from the store at start.
 *
 * Each version is reference-counted (template_version.h): a sandbox holds
 * one for its life (its restores, resumes and forks map the version's
 * memory file), as does a create or build in flight. Deleting a version
 * takes it out of the registry; its directory goes with the last
 * reference. Named versions each have a warm pool (target from the spec,
 * or set_pool). */
#ifndef AIRLOCK_TEMPLATE_REGISTRY_H
#define AIRLOCK_TEMPLATE_REGISTRY_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "sandbox.h"
#include "template.h"
#include "template_version.h"

/* Named versions live in store/templates/named/<name>/<version>/. */
#define TEMPLATE_NAMED_DIR "named"

struct template_registry;

/* Registers the default template (vh->tmpl, unless --cold-boot) and loads
 * the named ones under store/templates/named/; one that no longer fits
 * this host (another QEMU, accelerator or image) is skipped with a
 * warning. Named versions get their warm pools. */
int template_registry_open(struct vmhost *vh, char *err, size_t errlen);
/* After the sandboxes an earlier vmhost left are adopted (each holds its
 * size): removes the default template's snapshots in the store that no
 * version is registered for (sizes no sandbox holds, another image's or
 * QEMU's), so --template-sizes-max bounds the store across restarts too. */
void template_registry_sweep(struct vmhost *vh);

/* Stops the pools and frees every version no sandbox holds. */
void template_registry_close(struct vmhost *vh);

/* The version a create restores from, with a reference: ref "" or
 * "default" = the default template at vcpus/memory_mb (0 = its defaults;
 * a size seen for the first time is built now, ~5 s under TCG); "name" =
 * the newest version, "name:N" = version N, whose size a non-zero
 * vcpus/memory_mb must match. *out is NULL under --cold-boot (the create
 * boots its kernel). NOT_FOUND naming an unknown template. */
int template_acquire(struct vmhost *vh, const char *ref, unsigned vcpus, unsigned memory_mb,
                     struct template_version **out, struct airlock_error *e);
/* A named version by ref with a reference, or NULL (NOT_FOUND in e). */
struct template_version *template_lookup(struct vmhost *vh, const char *ref,
                                         struct airlock_error *e);

/* References to every version (named ones by name, then version), for
 * listing; free the array and release each. */
struct template_version **template_list(struct vmhost *vh, size_t *n);

/* How many registered sandboxes hold t. */
unsigned template_sandboxes(struct vmhost *vh, const struct template_version *t);

/* Deletes "name" (every version) or "name:N": FAILED_PRECONDITION naming a
 * sandbox made from it, NOT_FOUND naming it. Its pools are emptied. */
int template_delete(struct vmhost *vh, const char *ref, struct airlock_error *e);

/* New warm-pool limits for ref ("default" = the first default size's
 * pool; a name = its newest version's): at least min VMs, at most max
 * (0: the node's own ceiling, template_pool_ceiling). NOT_FOUND naming it,
 * INVALID naming a value that cannot be held (warm_pool_set_limits). */
int template_set_pool(struct vmhost *vh, const char *ref, unsigned min, unsigned max,
                      struct airlock_error *e);

/* The ceiling of a pool with floor min that nobody set one for:
 * --warm-pool-max, at least min. */
unsigned template_pool_ceiling(const struct vmhost *vh, unsigned min);

/* The default template's spec at a size (vmhost.c builds the first). */
void template_default_spec(struct vmhost *vh, unsigned vcpus, unsigned memory_mb,
                           struct template_spec *out);

/* A build's version number: version (0 = one more than any of name's on
 * this node, built or being built) is held until template_publish or
 * template_unreserve. ALREADY_EXISTS when taken. */
int template_reserve(struct vmhost *vh, const char *name, unsigned version, unsigned *out,
                     struct airlock_error *e);
void template_unreserve(struct vmhost *vh, const char *name, unsigned version);

/* Whether a snapshot of key (made from image hash `image` at that size)
 * can be restored on this host as it is today; else -1 with err saying so
 * ("another QEMU, accelerator or host"). */
int template_key_fits(struct vmhost *vh, const char *image, unsigned vcpus, unsigned memory_mb,
                      const char *key, char *err, size_t errlen);

/* Loads the version built in dir (store/templates/named/<name>/<version>),
 * registers it (its reservation ends), starts its pool with warm_pool VMs
 * as its floor and returns it with a reference. */
int template_publish(struct vmhost *vh, const char *dir, unsigned warm_pool,
                     struct template_version **out, struct airlock_error *e);

#endif
