/* Named template versions in the shared snapshot store (docs/templates.md
 * "Across nodes", docs/snapshot-store.md): a build on a node with
 * --snapshot-store publishes its version as the content-addressed set
 * templates/<key>-<build> (snapshot_template.h), whose manifest carries
 * the version's own manifest as "named" (name, version, spec without file
 * contents, env, workdir, start_cmd, size, key, image); a node asked to
 * create a sandbox of a version it lacks, given that set, fetches it (each
 * file checked), registers it as a version of its own (warm pool 0,
 * deleted like any other) and creates from it. */
#ifndef AIRLOCK_TEMPLATE_SHARED_H
#define AIRLOCK_TEMPLATE_SHARED_H

#include "airlock_error.h"
#include "template_version.h"

struct vmhost;

/* "templates/" + a 64-digit key + "-" + a 16-digit build, and its NUL. */
#define TEMPLATE_SET_SIZE 96

/* Publishes the named version just built in dir (not yet registered):
 * its set's name into set, also recorded as "store_object" in dir's
 * manifest.json. Nothing is left in the store on failure. */
int template_shared_publish(struct vmhost *vh, const char *dir, char set[TEMPLATE_SET_SIZE],
                            struct airlock_error *e);

/* template_acquire (template_registry.h), but a named version this node
 * lacks is fetched from set first when set is not empty and the node has
 * a store. Creates of one missing version fetch it once (the others wait
 * and find it registered). A fetch that fails leaves nothing on the node:
 * NOT_FOUND naming the set when the store lacks it, DATA_LOSS naming the
 * object that fails its checksum, INVALID_ARGUMENT when the set holds
 * another template, FAILED_PRECONDITION when it was built for another
 * QEMU, accelerator or host. */
int template_acquire_shared(struct vmhost *vh, const char *ref, unsigned vcpus,
                            unsigned memory_mb, const char *set, struct template_version **out,
                            struct airlock_error *e);

/* Removes a template's set from the store (a deleted template): only a
 * "templates/<key>-<build>" name; nothing there is not an error. */
int template_shared_forget(struct vmhost *vh, const char *set, struct airlock_error *e);

#endif
