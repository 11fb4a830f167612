/* Template specs (docs/templates.md): the JSON form a REST client sends,
 * read into vmhost.proto's TemplateSpec, and the one set of rules a spec
 * must follow, checked by the scheduler before it places a build and by
 * vmhost before it starts one. Every error names the field
 * ("files[2].path: must be absolute"). */
#ifndef AIRLOCK_TEMPLATE_SPEC_H
#define AIRLOCK_TEMPLATE_SPEC_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "vmhost.pb-c.h"

#define TEMPLATE_NAME_MAX 128
#define TEMPLATE_REF_SIZE (TEMPLATE_NAME_MAX + 12) /* "name:version" and its NUL */
#define TEMPLATE_DEFAULT_NAME "default"
#define TEMPLATE_MAX_PACKAGES 64
#define TEMPLATE_MAX_FILES 64
#define TEMPLATE_MAX_FILE_BYTES (256u << 10)
/* The spec travels in one NATS message (1 MiB by default) to the node. */
#define TEMPLATE_MAX_FILES_TOTAL (512u << 10)
#define TEMPLATE_MAX_RUN 64
#define TEMPLATE_MAX_COMMAND 16384
#define TEMPLATE_MAX_ENV 256
#define TEMPLATE_MAX_ENV_VALUE 4096
#define TEMPLATE_MAX_CPUS 16
#define TEMPLATE_MIN_MEMORY_MB 128
#define TEMPLATE_MAX_MEMORY_MB 65536
#define TEMPLATE_MAX_WARM_POOL 16
#define TEMPLATE_DEFAULT_CPUS 1
#define TEMPLATE_DEFAULT_MEMORY_MB 512

/* 1-128 characters of a-z, 0-9, '_', '.', '-', starting with a letter or
 * digit: also a directory name on the node. */
bool template_name_valid(const char *name);

/* Splits "name" or "name:version" (version > 0). false when malformed;
 * *version is 0 without one. name gets at most namelen - 1 bytes. */
bool template_ref_parse(const char *ref, char *name, size_t namelen, unsigned *version);

/* Checks every rule (names, sizes, paths, counts, limits): 0, or -1 with
 * err naming the field. network is shape only here; egress judges it. */
int template_spec_check(const Airlock__Vmhost__V1__TemplateSpec *spec, char *err, size_t errlen);

/* A spec read from JSON. The message's strings point into json and its
 * arrays are owned here: free with template_spec_json_free. */
struct template_spec_json {
    Airlock__Vmhost__V1__TemplateSpec msg;
    json_t *json;
};

/* Parses and checks text: 0, or -1 with err naming the field (unknown
 * fields and wrong types included) and nothing to free. */
int template_spec_from_json(const char *text, size_t len, struct template_spec_json *out,
                            char *err, size_t errlen);
void template_spec_json_free(struct template_spec_json *s);

#endif
