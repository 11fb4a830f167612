/* fopencookie (the image builder's progress as log lines) needs
 * _GNU_SOURCE, which the build defines. */
#include "template_named.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "fsutil.h"
#include "log.h"
#include "strbuf.h"
#include "template_shared.h"
#include "vmhost.h"

/* A run command may install things for a while; the guest kills it after. */
#define TEMPLATE_RUN_TIMEOUT_MS (30 * 60 * 1000)

typedef Airlock__Vmhost__V1__TemplateSpec TemplateSpec;

struct named_build {
    const TemplateSpec *spec;
    template_log_fn log;
    void *log_arg;
    ProtobufCBinaryData *env;      /* the spec's env as "K=V" */
    size_t n_env;
    struct strbuf env_storage;
    char line[1024];               /* the image builder's partial line */
    size_t line_len;
    bool spec_failed;              /* a file, run or start_cmd step failed in the guest */
};

static void logf_line(struct named_build *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void logf_line(struct named_build *b, const char *fmt, ...)
{
    char raw[2048], clean[2048];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(raw, sizeof(raw), fmt, ap);
    va_end(ap);
    size_t len = n < 0 ? 0 : (size_t)n < sizeof(raw) ? (size_t)n : sizeof(raw) - 1;
    template_log_line_clean(raw, len, clean, sizeof(clean));
    b->log(b->log_arg, clean);
}

/* fopencookie's write: whole lines to the log. */
static ssize_t progress_write(void *cookie, const char *data, size_t len)
{
    struct named_build *b = cookie;
    for (size_t i = 0; i < len; i++) {
        if (data[i] != '\n' && b->line_len < sizeof(b->line) - 1) {
            b->line[b->line_len++] = data[i];
            continue;
        }
        logf_line(b, "%.*s", (int)b->line_len, b->line);
        b->line_len = 0;
        if (data[i] != '\n')
            b->line[b->line_len++] = data[i];
    }
    return (ssize_t)len;
}

static int build_env(struct named_build *b, char *err, size_t errlen)
{
    const TemplateSpec *spec = b->spec;
    size_t *offsets = calloc(spec->n_env ? spec->n_env : 1, sizeof(*offsets));
    b->env = calloc(spec->n_env ? spec->n_env : 1, sizeof(*b->env));
    for (size_t i = 0; offsets && i < spec->n_env; i++) {
        offsets[i] = b->env_storage.len;
        strbuf_appendf(&b->env_storage, "%s=%s", spec->env[i]->key, spec->env[i]->value);
        strbuf_append_n(&b->env_storage, "", 1); /* the NUL between entries */
    }
    if (!offsets || !b->env || strbuf_failed(&b->env_storage)) {
        free(offsets);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < spec->n_env; i++) {
        b->env[i].data = (uint8_t *)b->env_storage.data + offsets[i];
        b->env[i].len = strlen((const char *)b->env[i].data);
    }
    b->n_env = spec->n_env;
    free(offsets);
    return 0;
}

/* Step 4, inside the booted template VM. A step the guest refused (a
 * command that failed, a path that cannot be written) is the spec's fault
 * and marked so. */
static int customize(void *arg, struct guest_channel *ch, char *err, size_t errlen)
{
    struct named_build *b = arg;
    const TemplateSpec *spec = b->spec;
    char why[1536];
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < spec->n_files; i++) {
        const Airlock__Vmhost__V1__TemplateFile *f = spec->files[i];
        logf_line(b, "file %s (%zu bytes)", f->path, f->content.len);
        rc = template_guest_write_file(ch, f->path, f->content.data, f->content.len, f->mode, why,
                                       sizeof(why));
        if (rc)
            snprintf(err, errlen, "files[%zu]: %s", i, why);
    }
    if (rc == 0 && *spec->workdir) {
        rc = template_guest_mkdir(ch, spec->workdir, why, sizeof(why));
        if (rc)
            snprintf(err, errlen, "workdir: %s", why);
    }
    struct template_guest_exec how = { .env = b->env,
                                       .n_env = b->n_env,
                                       .cwd = spec->workdir,
                                       .timeout_ms = TEMPLATE_RUN_TIMEOUT_MS };
    for (size_t i = 0; rc == 0 && i < spec->n_run; i++) {
        logf_line(b, "run[%zu]: %s", i, spec->run[i]);
        rc = template_guest_run(ch, spec->run[i], &how, b->log, b->log_arg, why, sizeof(why));
        if (rc)
            snprintf(err, errlen, "run[%zu] (%.200s): %s", i, spec->run[i], why);
    }
    if (rc == 0 && *spec->start_cmd) {
        int pid;
        rc = template_guest_start(ch, spec->start_cmd, &how, &pid, why, sizeof(why));
        if (rc)
            snprintf(err, errlen, "start_cmd: %s", why);
        else
            logf_line(b, "start_cmd running (pid %d): %s", pid, spec->start_cmd);
    }
    if (rc == 0)
        logf_line(b, "snapshot: sync, stop, save state");
    b->spec_failed = rc > 0;
    return rc ? -1 : 0;
}

/* The sorted, de-duplicated package list as mmdebstrap's --include wants it. */
static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *package_list(const TemplateSpec *spec)
{
    char **sorted = malloc(spec->n_packages * sizeof(*sorted));
    if (!sorted)
        return NULL;
    memcpy(sorted, spec->packages, spec->n_packages * sizeof(*sorted));
    qsort(sorted, spec->n_packages, sizeof(*sorted), cmp_str);
    struct strbuf list = { 0 };
    for (size_t i = 0; i < spec->n_packages; i++)
        if (i == 0 || strcmp(sorted[i], sorted[i - 1]) != 0)
            strbuf_appendf(&list, "%s%s", list.len ? "," : "", sorted[i]);
    free(sorted);
    if (strbuf_failed(&list)) {
        strbuf_free(&list);
        return NULL;
    }
    return list.data;
}

/* Step 2: the rootfs with the spec's packages, imported into the store. */
static int image_with_packages(struct vmhost *vh, struct named_build *b, struct guest_image *img,
                               char *base_disk, size_t base_len, char *err, size_t errlen)
{
    char *packages = package_list(b->spec);
    cookie_io_functions_t io = { .write = progress_write };
    FILE *progress = packages ? fopencookie(b, "w", io) : NULL;
    int rc = -1;
    if (!progress) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    setvbuf(progress, NULL, _IOLBF, 0);
    logf_line(b, "rootfs: the default image's packages and %s", packages);
    struct image_build_options opts = { .cache_dir = vh->cfg.image_dir,
                                        .guestd_path = vh->cfg.guestd_path,
                                        .extra_packages = packages,
                                        .cache_keep = vh->cfg.image_cache_keep,
                                        .progress = progress };
    char why[3072], name[128];
    if (guest_image_ensure(&opts, img, why, sizeof(why)) < 0) {
        snprintf(err, errlen, "packages: %s", why);
        goto out;
    }
    snprintf(name, sizeof(name), "image-%s.ext4", img->hash);
    rc = store_import_file(&vh->store, img->rootfs, name, base_disk, base_len, err, errlen);
out:
    if (progress)
        fclose(progress);
    free(packages);
    return rc;
}

/* Step 5's extra manifest: what a restart needs to serve the version. */
static json_t *named_manifest(const TemplateSpec *spec, unsigned version, int64_t started_ms)
{
    json_t *env = json_object(), *packages = json_array(), *run = json_array(),
           *files = json_array();
    for (size_t i = 0; i < spec->n_env; i++)
        json_object_set_new(env, spec->env[i]->key, json_string(spec->env[i]->value));
    for (size_t i = 0; i < spec->n_packages; i++)
        json_array_append_new(packages, json_string(spec->packages[i]));
    for (size_t i = 0; i < spec->n_run; i++)
        json_array_append_new(run, json_string(spec->run[i]));
    for (size_t i = 0; i < spec->n_files; i++)
        json_array_append_new(files, json_pack("{s:s, s:i, s:I}", "path", spec->files[i]->path,
                                               "mode", (int)spec->files[i]->mode, "bytes",
                                               (json_int_t)spec->files[i]->content.len));
    return json_pack("{s:{s:s, s:i, s:o, s:s, s:s, s:o, s:o, s:o, s:i, s:I}}", "template", "name",
                     spec->name, "version", (int)version, "env", env, "workdir", spec->workdir,
                     "start_cmd", spec->start_cmd, "packages", packages, "run", run, "files",
                     files, "warm_pool", (int)spec->warm_pool, "build_started_unix_ms",
                     (json_int_t)started_ms);
}

/* Steps 3-5 into store/templates/named/<name>/<version>. */
static int snapshot_named(struct vmhost *vh, struct named_build *b, unsigned version,
                          const struct guest_image *img, const char *base_disk,
                          int64_t started_ms, char *final_dir, size_t final_len, char *err,
                          size_t errlen)
{
    const TemplateSpec *spec = b->spec;
    char name_dir[PATH_MAX], ref[TEMPLATE_REF_SIZE];
    snprintf(ref, sizeof(ref), "%s:%u", spec->name, version);
    if (fs_path(name_dir, sizeof(name_dir), "%s/%s/%s", vh->store.templates_dir,
                TEMPLATE_NAMED_DIR, spec->name) < 0 ||
        fs_path(final_dir, final_len, "%s/%u", name_dir, version) < 0) {
        snprintf(err, errlen, "templates directory path too long");
        return -1;
    }
    if (fs_mkdir_p(name_dir, 0755, err, errlen) < 0)
        return -1;
    struct template_spec ts;
    template_default_spec(vh, spec->cpus ? spec->cpus : TEMPLATE_DEFAULT_CPUS,
                          spec->memory_mb ? spec->memory_mb : TEMPLATE_DEFAULT_MEMORY_MB, &ts);
    ts.name = ref;
    ts.image = img;
    ts.base_disk = base_disk;
    ts.customize = customize;
    ts.customize_arg = b;
    ts.egress = vh->egress;
    ts.network = spec->network;
    ts.manifest_extra = named_manifest(spec, version, started_ms);
    logf_line(b, "boot: %u vCPU, %u MiB", ts.vcpus, ts.memory_mb);
    struct template_snapshot snap;
    int64_t ms;
    int rc = ts.manifest_extra ? template_snapshot_build(&ts, final_dir, &snap, &ms, err, errlen)
                               : -1;
    if (!ts.manifest_extra)
        snprintf(err, errlen, "out of memory");
    json_decref(ts.manifest_extra);
    if (rc == 0 && fs_fsync_dir(name_dir, err, errlen) < 0) {
        fs_remove_tree(final_dir, NULL, 0);
        rc = -1;
    }
    if (rc < 0)
        rmdir(name_dir); /* only if this was its first version */
    return rc;
}

int template_build_named(struct vmhost *vh, const Airlock__Vmhost__V1__BuildTemplateRequest *req,
                         template_log_fn log, void *log_arg, struct template_version **out,
                         struct airlock_error *e)
{
    const TemplateSpec *spec = req->spec;
    if (!spec)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID, "spec: required");
    if (template_spec_check(spec, AIRLOCK_ERROR_MSG(e)) < 0)
        return airlock_error_classify(e, AIRLOCK_ERR_INVALID);
    if (!vh->have_template)
        return airlock_error_set(e, AIRLOCK_ERR_STATE,
                                 "this node runs with --cold-boot: it keeps no template snapshots");
    unsigned version;
    if (template_reserve(vh, spec->name, req->version, &version, e) < 0)
        return -1;
    int64_t started_ms = clock_realtime_ms(), t0 = clock_monotonic_ms();
    struct named_build b = { .spec = spec, .log = log, .log_arg = log_arg };
    bool store_failed = false; /* the store's error keeps its class (full, unreachable) */
    struct guest_image img = vh->image;
    img.hold_fd = -1; /* borrows vh's hold; image_with_packages takes its own */
    char base_disk[PATH_MAX], final_dir[PATH_MAX];
    snprintf(base_disk, sizeof(base_disk), "%s", vh->base_disk);
    log_info("template build started", "template=%s:%u", spec->name, version);
    logf_line(&b, "building %s:%u", spec->name, version);
    if (build_env(&b, AIRLOCK_ERROR_MSG(e)) < 0 ||
        (spec->n_packages && image_with_packages(vh, &b, &img, base_disk, sizeof(base_disk),
                                                 AIRLOCK_ERROR_MSG(e)) < 0) ||
        snapshot_named(vh, &b, version, &img, base_disk, started_ms, final_dir, sizeof(final_dir),
                       AIRLOCK_ERROR_MSG(e)) < 0)
        goto fail;
    guest_image_release(&img); /* the store's copy of its rootfs is all the version reads */
    /* In the shared store before anyone hears of it: a node that lacks
     * it can fetch it as soon as the build is answered. */
    char set[TEMPLATE_SET_SIZE];
    if (vh->snapshots) {
        if (template_shared_publish(vh, final_dir, set, e) < 0) {
            fs_remove_tree(final_dir, NULL, 0);
            store_failed = true;
            goto fail;
        }
        logf_line(&b, "published to the snapshot store: %s", set);
    }
    if (template_publish(vh, final_dir, spec->warm_pool, out, e) < 0) {
        fs_remove_tree(final_dir, NULL, 0);
        goto fail;
    }
    log_info("template built", "template=%s ms=%lld", (*out)->ref,
             (long long)(clock_monotonic_ms() - t0));
    logf_line(&b, "ready: %s in %.1f s", (*out)->ref, (double)(clock_monotonic_ms() - t0) / 1000);
    free(b.env);
    strbuf_free(&b.env_storage);
    return 0;
fail:
    /* A spec the build could not follow is the caller's; the rest is ours. */
    if (!store_failed)
        airlock_error_classify(e, b.spec_failed ? AIRLOCK_ERR_INVALID : AIRLOCK_ERR_INTERNAL);
    log_warn("template build failed", "template=%s:%u error=\"%s\"", spec->name, version,
             e->message);
    guest_image_release(&img);
    template_unreserve(vh, spec->name, version);
    free(b.env);
    strbuf_free(&b.env_storage);
    return -1;
}
