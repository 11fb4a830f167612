/* Building a named template version from a spec (docs/templates.md):
 *
 *   1. the spec is checked (template_spec.h) and a version number reserved;
 *   2. the rootfs: the node's image, or with packages an image that has
 *      them too (guest_image_ensure with extra packages: mmdebstrap, cached
 *      by the content hash of the package list), imported into the store;
 *   3. the template VM boots from a reflink of it, at the spec's size, its
 *      network attached to egress with the spec's policy;
 *   4. files are written in, the workdir made, run commands run in order
 *      (env, workdir; their output is the build log), start_cmd started in
 *      the background;
 *   5. sync, snapshot (template.h), manifest.json with what execs need
 *      (env, workdir) and the spec minus file contents, renamed into
 *      store/templates/named/<name>/<version>/;
 *   6. with a shared snapshot store, published there (template_shared.h)
 *      before it is registered and answered.
 *
 * Every line of progress goes to the caller's log function. A failure at
 * any step leaves nothing: no build directory, VM, namespace or version. */
#ifndef AIRLOCK_TEMPLATE_NAMED_H
#define AIRLOCK_TEMPLATE_NAMED_H

#include "template_guest.h"
#include "template_registry.h"

/* On success *out holds a reference to the new version. */
int template_build_named(struct vmhost *vh, const Airlock__Vmhost__V1__BuildTemplateRequest *req,
                         template_log_fn log, void *log_arg, struct template_version **out,
                         struct airlock_error *e);

#endif
