/* Template snapshots in the shared snapshot store (snapshot_store.h):
 * published as templates/<key>-<build>/ — key as the node names its
 * template (what a restore must match), build the first 16 hex digits of
 * the sha256 of its device state (two builds of one key differ in their
 * memory, so a suspend names the build its deltas were made against) —
 * and fetched by a node that lacks that build into
 * store/templates/shared/<key>-<build>/, checked, then kept. */
#ifndef AIRLOCK_SNAPSHOT_TEMPLATE_H
#define AIRLOCK_SNAPSHOT_TEMPLATE_H

#include <jansson.h>

#include "airlock_error.h"
#include "template.h"

struct vmhost;

#define SNAPSHOT_BUILD_ID_LEN 16

/* t's build id (SNAPSHOT_BUILD_ID_LEN hex digits + NUL). */
int snapshot_template_build_id(const struct template_snapshot *t, char build[17],
                               struct airlock_error *e);

/* Makes sure t is in the store (a no-op when its manifest is there).
 * named (NULL for the default template) is a named version's own
 * manifest (template_shared.h), kept in the set's as "named". */
int snapshot_template_publish(struct vmhost *vh, const struct template_snapshot *t,
                              const char *build, json_t *named, struct airlock_error *e);

/* The three files of the store's template set (its manifest m) into the
 * existing directory dir, each checked against m's checksum; DATA_LOSS
 * naming the object that fails. The caller removes dir on failure. */
int snapshot_template_fetch_files(struct vmhost *vh, const char *set, const json_t *m,
                                  const char *dir, struct airlock_error *e);

/* The local copy of the store's key-build: disk and mem get its paths
 * (fetched and checked first when this node has none). NOT_FOUND when the
 * store has no such template; DATA_LOSS when a file fails its checksum. */
int snapshot_template_fetch(struct vmhost *vh, const char *key, const char *build,
                            char disk[PATH_MAX], char mem[PATH_MAX], struct airlock_error *e);

#endif
