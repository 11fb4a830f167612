#include "netns.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"

int netns_path(const char *name, char *buf, size_t buflen)
{
    return fs_path(buf, buflen, "%s/%s", NETNS_RUN_DIR, name);
}

int netns_enter(const char *ns_path, char *err, size_t errlen)
{
    int fd = open(ns_path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "open %s: %s", ns_path, strerror(errno));
        return -1;
    }
    int rc = setns(fd, CLONE_NEWNET);
    if (rc < 0)
        snprintf(err, errlen, "setns %s: %s", ns_path, strerror(errno));
    close(fd);
    return rc;
}

struct netns_job {
    const char *ns_path;
    int (*fn)(void *arg);
    void *arg;
    int result;
    char err[256];
};

static void *netns_job_thread(void *p)
{
    struct netns_job *job = p;
    if (job->ns_path && netns_enter(job->ns_path, job->err, sizeof(job->err)) < 0) {
        job->result = -1;
        return NULL;
    }
    job->result = job->fn(job->arg);
    return NULL;
}

int netns_run(const char *ns_path, int (*fn)(void *arg), void *arg, char *err, size_t errlen)
{
    struct netns_job job = { .ns_path = ns_path, .fn = fn, .arg = arg };
    pthread_t t;
    int rc = pthread_create(&t, NULL, netns_job_thread, &job);
    if (rc != 0) {
        snprintf(err, errlen, "netns thread: %s", strerror(rc));
        return -1;
    }
    pthread_join(t, NULL);
    if (job.err[0])
        snprintf(err, errlen, "%s", job.err);
    return job.result;
}

/* iproute2 makes /run/netns a shared mount point so that namespace mounts
 * made later propagate into mount namespaces created after it (a jailed
 * process still sees them). */
static int netns_prepare_run_dir(char *err, size_t errlen)
{
    if (fs_mkdir_p(NETNS_RUN_DIR, 0755, err, errlen) < 0)
        return -1;
    if (mount("", NETNS_RUN_DIR, "none", MS_SHARED | MS_REC, NULL) == 0)
        return 0;
    if (errno != EINVAL)
        goto fail;
    /* Not a mount point yet: bind it onto itself first. */
    if (mount(NETNS_RUN_DIR, NETNS_RUN_DIR, "none", MS_BIND | MS_REC, NULL) < 0)
        goto fail;
    if (mount("", NETNS_RUN_DIR, "none", MS_SHARED | MS_REC, NULL) < 0)
        goto fail;
    return 0;
fail:
    snprintf(err, errlen, "mount %s: %s", NETNS_RUN_DIR, strerror(errno));
    return -1;
}

struct netns_bind {
    const char *path;
    char err[256];
};

/* Runs on a thread of its own: the new namespace dies with the thread
 * unless the bind mount holds it. */
static void *netns_bind_thread(void *p)
{
    struct netns_bind *b = p;
    if (unshare(CLONE_NEWNET) < 0) {
        snprintf(b->err, sizeof(b->err), "unshare(CLONE_NEWNET): %s", strerror(errno));
        return NULL;
    }
    if (mount("/proc/thread-self/ns/net", b->path, "none", MS_BIND, NULL) < 0)
        snprintf(b->err, sizeof(b->err), "bind mount %s: %s", b->path, strerror(errno));
    return NULL;
}

/* The empty file a namespace is bind-mounted on; fails when it exists. */
static int create_mount_point(const char *path, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
    if (fd < 0) {
        snprintf(err, errlen, "create %s: %s", path, strerror(errno));
        return -1;
    }
    close(fd);
    return 0;
}

int netns_create(const char *name, char *err, size_t errlen)
{
    char path[256];
    if (netns_path(name, path, sizeof(path)) < 0) {
        snprintf(err, errlen, "namespace name too long: %s", name);
        return -1;
    }
    if (netns_prepare_run_dir(err, errlen) < 0 || create_mount_point(path, err, errlen) < 0)
        return -1;

    struct netns_bind bind = { .path = path };
    pthread_t t;
    int rc = pthread_create(&t, NULL, netns_bind_thread, &bind);
    if (rc != 0) {
        snprintf(bind.err, sizeof(bind.err), "netns thread: %s", strerror(rc));
        goto fail;
    }
    pthread_join(t, NULL);
    if (bind.err[0])
        goto fail;
    return 0;
fail:
    snprintf(err, errlen, "%s", bind.err);
    unlink(path);
    return -1;
}

int netns_delete(const char *name, char *err, size_t errlen)
{
    char path[256];
    if (netns_path(name, path, sizeof(path)) < 0) {
        snprintf(err, errlen, "namespace name too long: %s", name);
        return -1;
    }
    if (umount2(path, MNT_DETACH) < 0 && errno != EINVAL && errno != ENOENT) {
        snprintf(err, errlen, "umount %s: %s", path, strerror(errno));
        return -1;
    }
    if (unlink(path) < 0 && errno != ENOENT) {
        snprintf(err, errlen, "unlink %s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

int netns_rename(const char *from, const char *to, char *err, size_t errlen)
{
    char from_path[256], to_path[256];
    if (netns_path(from, from_path, sizeof(from_path)) < 0 ||
        netns_path(to, to_path, sizeof(to_path)) < 0) {
        snprintf(err, errlen, "namespace name too long: %s", strlen(from) > strlen(to) ? from : to);
        return -1;
    }
    if (create_mount_point(to_path, err, errlen) < 0)
        return -1;
    if (mount(from_path, to_path, "none", MS_BIND, NULL) < 0) {
        snprintf(err, errlen, "bind mount %s on %s: %s", from_path, to_path, strerror(errno));
        unlink(to_path);
        return -1;
    }
    if (netns_delete(from, err, errlen) < 0) {
        umount2(to_path, MNT_DETACH);
        unlink(to_path);
        return -1;
    }
    return 0;
}
