#include "image.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fsutil.h"
#include "image_apt.h"
#include "content_hash.h"
#include "image_cache.h"
#include "image_progress.h"
#include "image_sources.h"
#include "initramfs.h"
#include "initramfs_modules.h"
#include "kernel_fetch.h"
#include "rootfs.h"
#include "strbuf.h"

/* Bump when the builder changes what it produces from the same inputs. */
#define IMAGE_FORMAT_VERSION 1
#define IMAGE_DEFAULT_SUITE "bookworm"
#define IMAGE_DEFAULT_SIZE_MB 2048u
#define IMAGE_BASE_PACKAGES "python3,ca-certificates,coreutils,procps,iproute2,curl,git"
#define IMAGE_BUSYBOX "/bin/busybox"
#define IMAGE_MAX_PACKAGES 256
#define MODULES_DEP_MAX (8u << 20)

/* Everything the image is made from, resolved before anything is built. */
struct image_inputs {
    const char *suite;
    const char *guestd;
    unsigned size_mb;
    char *package_list; /* comma-separated, owned */
    const char *packages[IMAGE_MAX_PACKAGES]; /* point into package_names */
    char (*versions)[APT_VERSION_MAX];
    size_t npackages;
    char *package_names; /* owned copy split in place */
    struct kernel_pkg kernel;
    struct strbuf sources;
    struct module_list modules;
    struct strbuf init_script;
    char base_hash[65];
    char hash[65];
};

static void inputs_free(struct image_inputs *in)
{
    free(in->package_list);
    free(in->package_names);
    free(in->versions);
    strbuf_free(&in->sources);
    module_list_free(&in->modules);
    strbuf_free(&in->init_script);
}

/* Holds an exclusive flock on cache_dir/.lock for the whole build, so two
 * builders never work on the same directories at once. */
static int lock_cache(const char *cache_dir, FILE *progress, char *err, size_t errlen)
{
    char path[PATH_MAX];
    if (fs_path(path, sizeof(path), "%s/.lock", cache_dir) < 0) {
        snprintf(err, errlen, "image cache path %s too long", cache_dir);
        return -1;
    }
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        snprintf(err, errlen, "open %s: %s", path, strerror(errno));
        return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
        image_progress(progress, "waiting for another image build (lock %s)", path);
        while (flock(fd, LOCK_EX) < 0) {
            if (errno != EINTR) {
                snprintf(err, errlen, "flock %s: %s", path, strerror(errno));
                close(fd);
                return -1;
            }
        }
    }
    return fd;
}

/* Under the lock nobody else is building: any *.tmp.* left is from a crash. */
static void remove_stale_temps(const char *cache_dir, FILE *progress)
{
    DIR *d = opendir(cache_dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char path[PATH_MAX];
        if (!strstr(e->d_name, ".tmp.") ||
            fs_path(path, sizeof(path), "%s/%s", cache_dir, e->d_name) < 0)
            continue;
        image_progress(progress, "removing %s left by an interrupted build", path);
        fs_remove_tree(path, NULL, 0);
    }
    if (d)
        closedir(d);
}

static int split_packages(struct image_inputs *in, const char *extra, char *err, size_t errlen)
{
    struct strbuf list = { 0 };
    strbuf_append(&list, IMAGE_BASE_PACKAGES);
    if (extra && *extra)
        strbuf_appendf(&list, ",%s", extra);
    in->package_list = list.data; /* ownership moves */
    in->package_names = strdup(strbuf_str(&list));
    if (strbuf_failed(&list) || !in->package_names) {
        snprintf(err, errlen, "image: out of memory");
        return -1;
    }
    /* The kernel metapackage rides along in the same apt-cache call. */
    in->packages[in->npackages++] = KERNEL_METAPACKAGE;
    for (char *save = NULL, *p = strtok_r(in->package_names, ", ", &save); p;
         p = strtok_r(NULL, ", ", &save)) {
        if (in->npackages == IMAGE_MAX_PACKAGES) {
            snprintf(err, errlen, "image: more than %d packages requested", IMAGE_MAX_PACKAGES);
            return -1;
        }
        in->packages[in->npackages++] = p;
    }
    in->versions = calloc(in->npackages, sizeof(*in->versions));
    if (!in->versions) {
        snprintf(err, errlen, "image: out of memory");
        return -1;
    }
    return 0;
}

static int resolve_modules(struct image_inputs *in, char *err, size_t errlen)
{
    char path[PATH_MAX];
    char *dep = NULL;
    if (fs_path(path, sizeof(path), "%s/modules.dep", in->kernel.modules_dir) < 0 ||
        fs_read_file(path, MODULES_DEP_MAX, &dep, NULL, err, errlen) < 0) {
        if (!dep && errno == ENAMETOOLONG)
            snprintf(err, errlen, "path %s/modules.dep too long", in->kernel.modules_dir);
        return -1;
    }
    int rc = modules_resolve(dep, initramfs_module_names, initramfs_module_count, &in->modules,
                             err, errlen);
    free(dep);
    if (rc < 0)
        return -1;
    initramfs_init_script(&in->modules, &in->init_script);
    return 0;
}

static void hash_base_inputs(struct content_hash *h, const struct image_inputs *in)
{
    char format[16];
    snprintf(format, sizeof(format), "%d", IMAGE_FORMAT_VERSION);
    content_hash_add_str(h, "format", format);
    content_hash_add_str(h, "suite", in->suite);
    content_hash_add_str(h, "sources", strbuf_str(&in->sources));
    for (size_t i = 1; i < in->npackages; i++) { /* [0] is the kernel */
        content_hash_add_str(h, "package", in->packages[i]);
        content_hash_add_str(h, "version", in->versions[i]);
    }
}

static int compute_hashes(struct image_inputs *in, char *err, size_t errlen)
{
    struct content_hash h;
    if (content_hash_init(&h, err, errlen) < 0)
        return -1;
    hash_base_inputs(&h, in);
    content_hash_final(&h, in->base_hash);

    if (content_hash_init(&h, err, errlen) < 0)
        return -1;
    char size[16];
    snprintf(size, sizeof(size), "%u", in->size_mb);
    content_hash_add_str(&h, "base", in->base_hash);
    content_hash_add_str(&h, "kernel-package", in->kernel.package);
    content_hash_add_str(&h, "kernel-version", in->kernel.version);
    for (size_t i = 0; i < in->modules.count; i++)
        content_hash_add_str(&h, "module", in->modules.paths[i]);
    content_hash_add_str(&h, "init", strbuf_str(&in->init_script));
    content_hash_add_str(&h, "rootfs-size-mb", size);
    if (content_hash_add_file(&h, "busybox", IMAGE_BUSYBOX, err, errlen) < 0 ||
        content_hash_add_file(&h, "guestd", in->guestd, err, errlen) < 0) {
        content_hash_free(&h);
        return -1;
    }
    content_hash_final(&h, in->hash);
    return 0;
}

static int resolve_inputs(const struct image_build_options *opts, const struct apt_ctx *apt,
                          struct image_inputs *in, FILE *progress, char *err, size_t errlen)
{
    if (split_packages(in, opts->extra_packages, err, errlen) < 0 ||
        apt_candidates(apt, in->packages, in->npackages, in->versions, err, errlen) < 0 ||
        kernel_resolve(apt, opts->cache_dir, in->versions[0], &in->kernel, err, errlen) < 0 ||
        kernel_ensure(apt, opts->cache_dir, IMAGE_BUSYBOX, &in->kernel, progress, err, errlen) <
            0 ||
        apt_sources_for_suite("/etc/apt", in->suite, &in->sources, err, errlen) < 0 ||
        resolve_modules(in, err, errlen) < 0)
        return -1;
    if (strbuf_failed(&in->init_script)) {
        snprintf(err, errlen, "image: out of memory");
        return -1;
    }
    return compute_hashes(in, err, errlen);
}

static int fill_out(struct guest_image *out, const char *dir, const struct image_inputs *in,
                    char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    out->hold_fd = -1;
    snprintf(out->hash, sizeof(out->hash), "%s", in->hash);
    snprintf(out->kernel_version, sizeof(out->kernel_version), "%s", in->kernel.release);
    if (fs_path(out->dir, sizeof(out->dir), "%s", dir) ||
        fs_path(out->kernel, sizeof(out->kernel), "%s/vmlinuz", dir) ||
        fs_path(out->initrd, sizeof(out->initrd), "%s/initrd.img", dir) ||
        fs_path(out->rootfs, sizeof(out->rootfs), "%s/rootfs.ext4", dir)) {
        snprintf(err, errlen, "image path under %s too long", dir);
        return -1;
    }
    return 0;
}

static json_t *file_sizes(const struct guest_image *img)
{
    struct stat k, i, r;
    stat(img->kernel, &k);
    stat(img->initrd, &i);
    stat(img->rootfs, &r);
    return json_pack("{s:I, s:I, s:I, s:I}", "vmlinuz", (json_int_t)k.st_size, "initrd",
                     (json_int_t)i.st_size, "rootfs", (json_int_t)r.st_size,
                     "rootfs_allocated", (json_int_t)r.st_blocks * 512);
}

static int write_manifest(const struct guest_image *img, const struct image_inputs *in,
                          double build_seconds, char *err, size_t errlen)
{
    json_t *packages = json_object(), *modules = json_array(), *mirrors = json_array();
    for (size_t i = 1; i < in->npackages; i++)
        json_object_set_new(packages, in->packages[i], json_string(in->versions[i]));
    for (size_t i = 0; i < in->modules.count; i++)
        json_array_append_new(modules, json_string(in->modules.paths[i]));
    char *sources = strdup(strbuf_str(&in->sources));
    for (char *save = NULL, *l = sources ? strtok_r(sources, "\n", &save) : NULL; l;
         l = strtok_r(NULL, "\n", &save))
        json_array_append_new(mirrors, json_string(l));
    free(sources);

    char built_at[32];
    time_t now = time(NULL);
    struct tm tm;
    strftime(built_at, sizeof(built_at), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
    json_t *root = json_pack(
        "{s:i, s:s, s:s, s:I, s:{s:s, s:s, s:s, s:o, s:o, s:s, s:s, s:o, s:s, s:i}, s:o}",
        "format", IMAGE_FORMAT_VERSION, "hash", in->hash, "built_at", built_at, "build_ms",
        (json_int_t)(build_seconds * 1000), "inputs", "kernel_package", in->kernel.package,
        "kernel_version", in->kernel.version, "suite", in->suite, "packages", packages,
        "mirrors", mirrors, "guestd", in->guestd, "base", in->base_hash, "modules", modules,
        "init", strbuf_str(&in->init_script), "rootfs_size_mb", (int)in->size_mb, "sizes",
        file_sizes(img));
    char *text = root ? json_dumps(root, JSON_INDENT(2) | JSON_SORT_KEYS) : NULL;
    json_decref(root);
    if (!text) {
        snprintf(err, errlen, "manifest: cannot encode JSON");
        return -1;
    }
    char path[PATH_MAX];
    int rc = fs_path(path, sizeof(path), "%s/manifest.json", img->dir);
    if (rc == 0)
        rc = fs_write_file_atomic(path, text, strlen(text), 0644, err, errlen);
    else
        snprintf(err, errlen, "manifest path under %s too long", img->dir);
    free(text);
    return rc;
}

/* Kernel files in the cache never change: a hard link is as good as a copy. */
static int link_or_copy(const char *src, const char *dst, char *err, size_t errlen)
{
    if (link(src, dst) == 0)
        return 0;
    return fs_copy_file(src, dst, 0644, err, errlen);
}

static int build_image(const struct image_build_options *opts, const struct image_inputs *in,
                       const char *final_dir, FILE *progress, double t0, char *err,
                       size_t errlen)
{
    char base[PATH_MAX], tmp[PATH_MAX], work[PATH_MAX];
    struct rootfs_base_spec spec = { .suite = in->suite,
                                     .packages = in->package_list,
                                     .sources = strbuf_str(&in->sources) };
    if (rootfs_base_ensure(opts->cache_dir, in->base_hash, &spec, progress, base, sizeof(base),
                           err, errlen) < 0)
        return -1;

    if (fs_path(tmp, sizeof(tmp), "%s.tmp.XXXXXX", final_dir) < 0 || !mkdtemp(tmp)) {
        snprintf(err, errlen, "mkdtemp %s.tmp.XXXXXX: %s", final_dir, strerror(errno));
        return -1;
    }
    struct guest_image img;
    if (fill_out(&img, tmp, in, err, errlen) < 0 ||
        fs_path(work, sizeof(work), "%s/work", tmp) < 0 ||
        link_or_copy(in->kernel.vmlinuz, img.kernel, err, errlen) < 0)
        goto fail;
    if (initramfs_write(img.initrd, IMAGE_BUSYBOX, in->kernel.modules_dir, &in->modules,
                        strbuf_str(&in->init_script), err, errlen) < 0)
        goto fail;
    struct stat st;
    char size[32];
    stat(img.initrd, &st);
    image_progress(progress, "initramfs: busybox + %zu modules, %s", in->modules.count,
                   fs_human_size((unsigned long long)st.st_size, size, sizeof(size)));
    if (fs_mkdir_p(work, 0755, err, errlen) < 0 ||
        rootfs_make_ext4(base, in->guestd, in->size_mb, work, img.rootfs, progress, err,
                         errlen) < 0 ||
        fs_remove_tree(work, err, errlen) < 0)
        goto fail;
    if (write_manifest(&img, in, monotonic_seconds() - t0, err, errlen) < 0)
        goto fail;
    if (rename(tmp, final_dir) < 0) {
        snprintf(err, errlen, "rename %s to %s: %s", tmp, final_dir, strerror(errno));
        goto fail;
    }
    return fs_fsync_dir(opts->cache_dir, err, errlen);

fail:
    fs_remove_tree(tmp, NULL, 0);
    return -1;
}

int guest_image_ensure(const struct image_build_options *opts, struct guest_image *out,
                       char *err, size_t errlen)
{
    double t0 = monotonic_seconds();
    FILE *progress = opts->progress;
    out->hold_fd = -1;
    struct image_inputs in = { .suite = opts->suite ? opts->suite : IMAGE_DEFAULT_SUITE,
                               .guestd = opts->guestd_path,
                               .size_mb = opts->rootfs_size_mb ? opts->rootfs_size_mb
                                                               : IMAGE_DEFAULT_SIZE_MB };
#ifdef AIRLOCK_GUESTD_BUILD_PATH
    if (!in.guestd)
        in.guestd = AIRLOCK_GUESTD_BUILD_PATH;
#endif
    if (!opts->cache_dir || !in.guestd) {
        snprintf(err, errlen, "image: cache_dir and guestd_path are required");
        return -1;
    }
    if (access(in.guestd, R_OK) < 0) {
        snprintf(err, errlen, "guest daemon %s: %s", in.guestd, strerror(errno));
        return -1;
    }
    if (fs_mkdir_p(opts->cache_dir, 0755, err, errlen) < 0)
        return -1;
    int lock = lock_cache(opts->cache_dir, progress, err, errlen);
    if (lock < 0)
        return -1;
    remove_stale_temps(opts->cache_dir, progress);

    int rc = -1;
    struct apt_ctx apt;
    char dir[PATH_MAX], manifest[PATH_MAX];
    if (apt_ctx_init(&apt, opts->cache_dir, err, errlen) < 0 ||
        resolve_inputs(opts, &apt, &in, progress, err, errlen) < 0)
        goto out;
    if (fs_path(dir, sizeof(dir), "%s/%s", opts->cache_dir, in.hash) < 0 ||
        fs_path(manifest, sizeof(manifest), "%s/manifest.json", dir) < 0) {
        snprintf(err, errlen, "image cache path %s too long", opts->cache_dir);
        goto out;
    }
    bool cached = access(manifest, F_OK) == 0;
    if (!cached && build_image(opts, &in, dir, progress, t0, err, errlen) < 0)
        goto out;
    if (fill_out(out, dir, &in, err, errlen) < 0 ||
        (out->hold_fd = image_cache_hold(dir, err, errlen)) < 0)
        goto out;
    /* Also on a cache hit: a smaller keep takes effect at the next start. */
    image_cache_prune(opts->cache_dir, opts->cache_keep, in.hash, NULL);
    image_progress(progress, "ready %s in %.2f s%s", in.hash, monotonic_seconds() - t0,
                   cached ? " (cached)" : "");
    rc = 0;
out:
    inputs_free(&in);
    close(lock); /* releases the flock */
    return rc;
}

void guest_image_release(struct guest_image *img)
{
    image_cache_release(img->hold_fd);
    img->hold_fd = -1;
}
