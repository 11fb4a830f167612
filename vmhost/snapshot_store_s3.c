/* The snapshot store as a bucket of an S3-compatible object store
 * ("s3://BUCKET[/PREFIX]"), spoken to with libcurl: path-style URLs
 * (ENDPOINT/BUCKET/PREFIX/NAME), requests signed with AWS Signature V4
 * (libcurl's CURLOPT_AWS_SIGV4; the payload unsigned, its integrity being
 * the delta's own sha256). A PUT is atomic in S3: an object is absent or
 * whole, so an upload is staged in an unnamed local file (O_TMPFILE in the
 * spool directory) and sent in one PUT at commit. A read is a GET into
 * such a file. A set is removed by listing its prefix (ListObjectsV2) and
 * deleting each object. */
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "secret_file.h"
#include "snapshot_store_internal.h"

#define S3_CONNECT_TIMEOUT_S 10
#define S3_STALL_TIMEOUT_S 60 /* no byte moved for this long: unreachable */
#define S3_CREDENTIALS_MAX 512

struct s3_store {
    char bucket_url[1024]; /* ENDPOINT/BUCKET */
    char prefix[512];      /* "" or "PREFIX/" */
    char sigv4[128];       /* "aws:amz:REGION:s3" */
    char *userpwd;         /* "ACCESS_KEY_ID:SECRET" (secret_free) */
    char spool[PATH_MAX];
};

struct s3_upload {
    char name[1024];
};

/* One request's outcome. */
struct s3_result {
    CURLcode curl;
    long status;
    char curl_error[CURL_ERROR_SIZE];
};

static size_t write_fd(char *data, size_t size, size_t n, void *arg)
{
    int fd = *(int *)arg;
    return fs_write_all(fd, data, size * n) == 0 ? size * n : 0;
}

static size_t read_fd(char *buf, size_t size, size_t n, void *arg)
{
    ssize_t got = read(*(int *)arg, buf, size * n);
    return got < 0 ? CURL_READFUNC_ABORT : (size_t)got;
}

static size_t write_strbuf(char *data, size_t size, size_t n, void *arg)
{
    char **text = arg;
    size_t old = *text ? strlen(*text) : 0;
    char *grown = realloc(*text, old + size * n + 1);
    if (!grown)
        return 0;
    memcpy(grown + old, data, size * n);
    grown[old + size * n] = '\0';
    *text = grown;
    return size * n;
}

/* method on URL path (after the bucket, query included); the body from
 * in_fd (in_len bytes) when >= 0, the answer into out_fd when >= 0 or
 * into *out_text when given. */
static void s3_request(const struct s3_store *s, const char *method, const char *path, int in_fd,
                       off_t in_len, int out_fd, char **out_text, struct s3_result *r)
{
    memset(r, 0, sizeof(*r));
    CURL *c = curl_easy_init();
    if (!c) {
        r->curl = CURLE_OUT_OF_MEMORY;
        return;
    }
    char url[2048];
    snprintf(url, sizeof(url), "%s/%s", s->bucket_url, path);
    struct curl_slist *headers = curl_slist_append(NULL, "x-amz-content-sha256: UNSIGNED-PAYLOAD");
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_AWS_SIGV4, s->sigv4);
    curl_easy_setopt(c, CURLOPT_USERPWD, s->userpwd);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, (long)S3_CONNECT_TIMEOUT_S);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, (long)S3_STALL_TIMEOUT_S);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, r->curl_error);
    if (strcmp(method, "PUT") == 0) {
        curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
        curl_easy_setopt(c, CURLOPT_READFUNCTION, read_fd);
        curl_easy_setopt(c, CURLOPT_READDATA, &in_fd);
        curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, (curl_off_t)in_len);
    } else if (strcmp(method, "HEAD") == 0) {
        curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
    } else if (strcmp(method, "GET") != 0) {
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    }
    if (out_fd >= 0) {
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, write_fd);
        curl_easy_setopt(c, CURLOPT_WRITEDATA, &out_fd);
    } else {
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, write_strbuf);
        curl_easy_setopt(c, CURLOPT_WRITEDATA, out_text);
    }
    r->curl = curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
    curl_slist_free_all(headers);
    curl_easy_cleanup(c);
}

/* A request's failure as the store's error: unreachable (UNAVAILABLE),
 * no such object (NOT_FOUND), full (CAPACITY), else what S3 said. */
static int s3_failed(struct snapshot_store *st, const char *what, const char *name,
                     const struct s3_result *r, struct airlock_error *e)
{
    if (r->curl != CURLE_OK && r->curl != CURLE_HTTP_RETURNED_ERROR)
        return airlock_error_set(e, AIRLOCK_ERR_UNAVAILABLE,
                                 "snapshot store %s cannot be reached: %s %s: %s", st->where, what,
                                 name, r->curl_error[0] ? r->curl_error
                                                        : curl_easy_strerror(r->curl));
    enum airlock_err class = r->status == 404                       ? AIRLOCK_ERR_NOT_FOUND
                             : r->status == 507 || r->status == 413 ? AIRLOCK_ERR_CAPACITY
                             : r->status >= 500                     ? AIRLOCK_ERR_UNAVAILABLE
                                                                    : AIRLOCK_ERR_INTERNAL;
    return airlock_error_set(e, class, "snapshot store %s: %s %s: HTTP %ld%s", st->where, what,
                             name, r->status, r->status == 404 ? " (no such object)" : "");
}

static bool s3_ok(const struct s3_result *r)
{
    return r->curl == CURLE_OK && r->status >= 200 && r->status < 300;
}

static int s3_upload_begin(struct snapshot_store *st, const char *name,
                           struct snapshot_upload **out, int *fd, struct airlock_error *e)
{
    struct s3_store *s = st->backend;
    struct snapshot_upload *u = calloc(1, sizeof(*u));
    struct s3_upload *su = calloc(1, sizeof(*su));
    if (!u || !su) {
        free(u);
        free(su);
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "out of memory");
    }
    snprintf(su->name, sizeof(su->name), "%s", name);
    u->st = st;
    u->backend = su;
    u->fd = open(s->spool, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (u->fd < 0) {
        airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "stage %s in %s: %s", name, s->spool,
                          strerror(errno));
        free(su);
        free(u);
        return -1;
    }
    *out = u;
    *fd = u->fd;
    return 0;
}

static void s3_upload_abort(struct snapshot_upload *u)
{
    if (u->fd >= 0)
        close(u->fd);
    free(u->backend);
    free(u);
}

static int s3_upload_commit(struct snapshot_upload *u, struct airlock_error *e)
{
    struct s3_store *s = u->st->backend;
    struct s3_upload *su = u->backend;
    char path[1600];
    snprintf(path, sizeof(path), "%s%s", s->prefix, su->name);
    off_t len = lseek(u->fd, 0, SEEK_END);
    struct s3_result r = { 0 };
    int rc = -1;
    if (len < 0 || lseek(u->fd, 0, SEEK_SET) < 0)
        airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "read back %s: %s", su->name, strerror(errno));
    else if (s3_request(s, "PUT", path, u->fd, len, -1, NULL, &r), !s3_ok(&r))
        s3_failed(u->st, "put", su->name, &r, e);
    else
        rc = 0;
    s3_upload_abort(u);
    return rc;
}

static int s3_open_object(struct snapshot_store *st, const char *name, int *fd,
                          struct airlock_error *e)
{
    struct s3_store *s = st->backend;
    char path[1600];
    snprintf(path, sizeof(path), "%s%s", s->prefix, name);
    *fd = open(s->spool, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (*fd < 0)
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "stage %s in %s: %s", name, s->spool,
                                 strerror(errno));
    struct s3_result r;
    s3_request(s, "GET", path, -1, 0, *fd, NULL, &r);
    if (!s3_ok(&r) || lseek(*fd, 0, SEEK_SET) < 0) {
        close(*fd);
        *fd = -1;
        return s3_failed(st, "get", name, &r, e);
    }
    return 0;
}

static bool s3_exists(struct snapshot_store *st, const char *name)
{
    struct s3_store *s = st->backend;
    char path[1600];
    snprintf(path, sizeof(path), "%s%s", s->prefix, name);
    struct s3_result r;
    s3_request(s, "HEAD", path, -1, 0, -1, NULL, &r);
    return s3_ok(&r);
}

/* The text between <tag> and </tag> after *cursor, into out; advances. */
static bool xml_next(const char **cursor, const char *tag, char *out, size_t outlen)
{
    char open_tag[64], close_tag[64];
    snprintf(open_tag, sizeof(open_tag), "<%s>", tag);
    snprintf(close_tag, sizeof(close_tag), "</%s>", tag);
    const char *a = strstr(*cursor, open_tag);
    const char *b = a ? strstr(a, close_tag) : NULL;
    if (!b)
        return false;
    a += strlen(open_tag);
    snprintf(out, outlen, "%.*s", (int)(b - a), a);
    *cursor = b + strlen(close_tag);
    return true;
}

static int s3_remove_set(struct snapshot_store *st, const char *prefix, struct airlock_error *e)
{
    struct s3_store *s = st->backend;
    char token[1024] = "";
    for (;;) {
        CURL *esc = curl_easy_init();
        char *p = esc ? curl_easy_escape(esc, s->prefix, 0) : NULL;
        char *q = esc ? curl_easy_escape(esc, prefix, 0) : NULL;
        char *t = esc && token[0] ? curl_easy_escape(esc, token, 0) : NULL;
        /* Parameters in the order SigV4's canonical query string has them. */
        char path[4096];
        snprintf(path, sizeof(path), "?%s%s%slist-type=2&prefix=%s%s%%2F",
                 t ? "continuation-token=" : "", t ? t : "", t ? "&" : "", p ? p : "",
                 q ? q : "");
        curl_free(p);
        curl_free(q);
        curl_free(t);
        curl_easy_cleanup(esc);
        char *text = NULL;
        struct s3_result r;
        s3_request(s, "GET", path, -1, 0, -1, &text, &r);
        if (!s3_ok(&r)) {
            free(text);
            return s3_failed(st, "list", prefix, &r, e);
        }
        const char *cursor = text ? text : "";
        char key[1600], truncated[16] = "";
        while (xml_next(&cursor, "Key", key, sizeof(key))) {
            s3_request(s, "DELETE", key, -1, 0, -1, NULL, &r);
            if (!s3_ok(&r) && r.status != 404) {
                free(text);
                return s3_failed(st, "delete", key, &r, e);
            }
        }
        cursor = text ? text : "";
        bool more = xml_next(&cursor, "IsTruncated", truncated, sizeof(truncated)) &&
                    strcmp(truncated, "true") == 0;
        cursor = text ? text : "";
        if (!more || !xml_next(&cursor, "NextContinuationToken", token, sizeof(token))) {
            free(text);
            return 0;
        }
        free(text);
    }
}

static void s3_close(struct snapshot_store *st)
{
    struct s3_store *s = st->backend;
    if (s)
        secret_free(s->userpwd);
    free(s);
}

static const struct snapshot_store_ops s3_ops = {
    .upload_begin = s3_upload_begin,
    .upload_commit = s3_upload_commit,
    .upload_abort = s3_upload_abort,
    .open_object = s3_open_object,
    .exists = s3_exists,
    .remove_set = s3_remove_set,
    .close = s3_close,
};

/* "s3://BUCKET[/PREFIX]" into s. */
static int parse_location(const char *location, struct s3_store *s, const char *endpoint,
                          struct airlock_error *e)
{
    const char *bucket = location + 5;
    const char *slash = strchr(bucket, '/');
    size_t blen = slash ? (size_t)(slash - bucket) : strlen(bucket);
    if (blen == 0 || blen > 63 || strspn(bucket, "abcdefghijklmnopqrstuvwxyz0123456789.-") < blen)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                 "snapshot store %s: the bucket must be 1-63 of [a-z0-9.-]",
                                 location);
    const char *prefix = slash ? slash + 1 : "";
    size_t plen = strlen(prefix);
    while (plen && prefix[plen - 1] == '/')
        plen--;
    if (plen >= sizeof(s->prefix) - 1 || strstr(prefix, ".."))
        return airlock_error_set(e, AIRLOCK_ERR_INVALID, "snapshot store %s: bad prefix",
                                 location);
    snprintf(s->prefix, sizeof(s->prefix), "%.*s%s", (int)plen, prefix, plen ? "/" : "");
    size_t elen = strlen(endpoint);
    while (elen && endpoint[elen - 1] == '/')
        elen--;
    if (snprintf(s->bucket_url, sizeof(s->bucket_url), "%.*s/%.*s", (int)elen, endpoint,
                 (int)blen, bucket) >= (int)sizeof(s->bucket_url))
        return airlock_error_set(e, AIRLOCK_ERR_INVALID, "snapshot store endpoint too long");
    return 0;
}

int snapshot_store_s3_open(const struct snapshot_store_config *cfg, struct snapshot_store *st,
                           struct airlock_error *e)
{
    if (!cfg->endpoint || (strncmp(cfg->endpoint, "http://", 7) != 0 &&
                           strncmp(cfg->endpoint, "https://", 8) != 0))
        return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                 "snapshot store %s needs --snapshot-store-endpoint, an http:// or "
                                 "https:// URL",
                                 cfg->location);
    if (!cfg->credentials_file || !cfg->spool_dir)
        return airlock_error_set(e, AIRLOCK_ERR_INVALID,
                                 "snapshot store %s needs --snapshot-store-credentials (a file "
                                 "with ACCESS_KEY_ID:SECRET_ACCESS_KEY)",
                                 cfg->location);
    /* Before any thread could race it (vmhost opens the store at start). */
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "libcurl did not initialize");
    struct s3_store *s = calloc(1, sizeof(*s));
    if (!s)
        return airlock_error_set(e, AIRLOCK_ERR_INTERNAL, "out of memory");
    st->backend = s;
    st->ops = &s3_ops;
    snprintf(st->where, sizeof(st->where), "%s", cfg->location);
    snprintf(s->sigv4, sizeof(s->sigv4), "aws:amz:%s:s3", cfg->region ? cfg->region : "us-east-1");
    snprintf(s->spool, sizeof(s->spool), "%s", cfg->spool_dir);
    if (parse_location(cfg->location, s, cfg->endpoint, e) < 0)
        goto fail;
    s->userpwd = secret_file_load(cfg->credentials_file, "snapshot store credentials",
                                  S3_CREDENTIALS_MAX, AIRLOCK_ERROR_MSG(e));
    if (!s->userpwd) {
        airlock_error_classify(e, AIRLOCK_ERR_INVALID);
        goto fail;
    }
    if (!strchr(s->userpwd, ':')) {
        airlock_error_set(e, AIRLOCK_ERR_INVALID,
                          "%s: the snapshot store credentials are ACCESS_KEY_ID:SECRET_ACCESS_KEY",
                          cfg->credentials_file);
        goto fail;
    }
    /* Reachable, and ours to write: a HEAD of the bucket. */
    struct s3_result r;
    s3_request(s, "HEAD", "", -1, 0, -1, NULL, &r);
    if (!s3_ok(&r)) {
        s3_failed(st, "check bucket", cfg->location, &r, e);
        airlock_error_classify(e, r.status == 404 || r.status == 403 ? AIRLOCK_ERR_INVALID
                                                                      : AIRLOCK_ERR_UNAVAILABLE);
        goto fail;
    }
    return 0;
fail:
    s3_close(st);
    st->backend = NULL;
    return -1;
}
