#include "trust_store.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "guest_fs.h"

#define BUNDLE_MAX (8u << 20)
#define PEM_BEGIN "-----BEGIN CERTIFICATE-----\n"
#define PEM_END "-----END CERTIFICATE-----\n"

_Static_assert(TRUST_STORE_SLOT_SIZE % TRUST_STORE_PAGE == 0, "the slot is whole pages");

const struct trust_store_paths trust_store_system = {
    .bundle = "/etc/ssl/certs/ca-certificates.crt",
    .copy = "/run/airlock/trust-slot",
    .hook = "/etc/ca-certificates/update.d/airlock-sandbox-ca",
};

/* A file's slot (its last TRUST_STORE_SLOT_SIZE bytes), mapped shared. */
struct slot_map {
    int fd;
    char *map;
    off_t at;
};

static struct slot_map bundle_slot = { .fd = -1 }, copy_slot = { .fd = -1 };
/* A session's slot is built here: its pages are touched at boot, fresh
 * heap pages would fault on the hand-out path. */
static char session_slot[TRUST_STORE_SLOT_SIZE];

/* A file mapping faults (SIGBUS) where the file was truncated under it:
 * a copy into a slot jumps back out instead of killing PID 1. */
static sigjmp_buf slot_fault_jump;
static volatile sig_atomic_t slot_fault_armed;

static void slot_fault(int sig)
{
    if (slot_fault_armed)
        siglongjmp(slot_fault_jump, 1);
    signal(sig, SIG_DFL);
    raise(sig);
}

static bool pem_valid(const char *pem, size_t len)
{
    if (len < strlen(PEM_BEGIN) + strlen(PEM_END) || len > TRUST_STORE_PEM_MAX ||
        strncmp(pem, PEM_BEGIN, strlen(PEM_BEGIN)) != 0 ||
        strcmp(pem + len - strlen(PEM_END), PEM_END) != 0)
        return false;
    for (size_t i = 0; i < len; i++)
        if (pem[i] != '\n' && (pem[i] < 0x20 || pem[i] > 0x7e))
            return false;
    return true;
}

static int make_parent_dir(const char *path, char *msg, size_t msglen)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir)
        return 0;
    *slash = '\0';
    if (mkdir_parents(dir, 0755) < 0) {
        int err = errno;
        snprintf(msg, msglen, "trust store: mkdir %s: %s", dir, strerror(err));
        return err;
    }
    return 0;
}

/* Temp file + rename, without fsync: a slot lost in a guest crash is
 * reserved again at the next boot or session. */
static int replace_file(const char *path, const char *a, size_t alen, const char *b, size_t blen,
                        mode_t mode, char *msg, size_t msglen)
{
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof(tmp), "%s.airlock-tmp", path) >= (int)sizeof(tmp)) {
        snprintf(msg, msglen, "trust store: path too long: %s", path);
        return ENAMETOOLONG;
    }
    int err = make_parent_dir(path, msg, msglen);
    if (err)
        return err;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
    if (fd < 0 || fs_write_all(fd, a, alen) < 0 || fs_write_all(fd, b, blen) < 0)
        err = errno;
    if (fd >= 0 && close(fd) < 0 && !err)
        err = errno;
    if (!err && rename(tmp, path) < 0)
        err = errno;
    if (err) {
        unlink(tmp);
        snprintf(msg, msglen, "trust store: write %s: %s", path, strerror(err));
    }
    return err;
}

/* The marker line, pem (may be empty) and newlines up to the slot's size. */
static void slot_fill(char *slot, const char *pem, size_t pem_len)
{
    size_t marker_len = strlen(TRUST_STORE_MARKER);
    memset(slot, '\n', TRUST_STORE_SLOT_SIZE);
    memcpy(slot, TRUST_STORE_MARKER, marker_len);
    memcpy(slot + marker_len, pem, pem_len);
}

/* Rewrites the bundle as it is without an earlier slot (or the block of
 * the format before slots: the marker and one certificate), padded with
 * newlines to a page boundary, and an empty slot. */
static int bundle_reserve_slot(const char *bundle, char *msg, size_t msglen)
{
    char *old = NULL, ferr[256];
    size_t len = 0;
    if (access(bundle, F_OK) == 0 &&
        fs_read_file(bundle, BUNDLE_MAX, &old, &len, ferr, sizeof(ferr)) < 0) {
        snprintf(msg, msglen, "trust store: %s", ferr);
        return EIO;
    }
    const char *marker = old ? strstr(old, TRUST_STORE_MARKER) : NULL;
    if (marker && (marker == old || marker[-1] == '\n'))
        len = (size_t)(marker - old);
    while (len > 1 && old[len - 1] == '\n' && old[len - 2] == '\n')
        len--;
    /* One newline more where the last line is not ended: the marker must
     * start a line. */
    size_t head_len = len + (len && old[len - 1] != '\n');
    head_len = (head_len + TRUST_STORE_PAGE - 1) / TRUST_STORE_PAGE * TRUST_STORE_PAGE;
    char *head = malloc(head_len ? head_len : 1);
    char *slot = malloc(TRUST_STORE_SLOT_SIZE);
    int err = ENOMEM;
    snprintf(msg, msglen, "trust store: out of memory");
    if (head && slot) {
        if (len)
            memcpy(head, old, len);
        memset(head + len, '\n', head_len - len);
        slot_fill(slot, "", 0);
        err = replace_file(bundle, head, head_len, slot, TRUST_STORE_SLOT_SIZE, 0644, msg,
                           msglen);
    }
    free(slot);
    free(head);
    free(old);
    return err;
}

static void slot_unmap(struct slot_map *m)
{
    if (m->map)
        munmap(m->map, TRUST_STORE_SLOT_SIZE);
    if (m->fd >= 0)
        close(m->fd);
    *m = (struct slot_map){ .fd = -1 };
}

/* Set before every mapping: a test harness may have put its own handler
 * back since. */
static void slot_fault_catch(void)
{
    struct sigaction sa = { .sa_handler = slot_fault };
    sigemptyset(&sa.sa_mask);
    sigaction(SIGBUS, &sa, NULL);
}

/* The mapping (stale or not) shows the first used bytes of slot: with no
 * system call, so a session without a CA costs nothing when the slot is
 * empty already. */
static bool slot_shows(const struct slot_map *m, const char *slot, size_t used)
{
    bool same = false;
    if (sigsetjmp(slot_fault_jump, 1) == 0) {
        slot_fault_armed = 1;
        same = memcmp(m->map, slot, used) == 0;
    }
    slot_fault_armed = 0;
    return same;
}

/* Still the file at path's slot: not replaced (a rename leaves the mapped
 * inode without links), not resized, the marker in place. */
static bool slot_current(const struct slot_map *m)
{
    struct stat st;
    return m->map && fstat(m->fd, &st) == 0 && st.st_nlink > 0 &&
           st.st_size == m->at + TRUST_STORE_SLOT_SIZE &&
           slot_shows(m, TRUST_STORE_MARKER, strlen(TRUST_STORE_MARKER));
}

/* Maps path's slot; -1 with errno ENOENT when it has none. */
static int slot_map_file(struct slot_map *m, const char *path)
{
    m->fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    if (m->fd < 0)
        return errno == ELOOP ? (errno = ENOENT, -1) : -1;
    struct stat st;
    if (fstat(m->fd, &st) < 0)
        goto fail;
    if (!S_ISREG(st.st_mode) || st.st_size < TRUST_STORE_SLOT_SIZE ||
        (st.st_size - TRUST_STORE_SLOT_SIZE) % TRUST_STORE_PAGE != 0) {
        errno = ENOENT;
        goto fail;
    }
    m->at = st.st_size - TRUST_STORE_SLOT_SIZE;
    slot_fault_catch();
    void *map = mmap(NULL, TRUST_STORE_SLOT_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, m->fd, m->at);
    if (map == MAP_FAILED)
        goto fail;
    m->map = map;
    if (!slot_shows(m, TRUST_STORE_MARKER, strlen(TRUST_STORE_MARKER))) {
        errno = ENOENT;
        goto fail;
    }
    return 0;
fail:;
    int err = errno;
    slot_unmap(m);
    errno = err;
    return -1;
}

/* Maps the slot of path (the bundle, or its copy when !is_bundle), making
 * one first where there is none. */
static int slot_ensure(struct slot_map *m, const char *path, bool is_bundle, char *msg,
                       size_t msglen)
{
    if (slot_current(m))
        return 0;
    slot_unmap(m);
    if (slot_map_file(m, path) == 0)
        return 0;
    int err = errno;
    if (err != ENOENT) {
        snprintf(msg, msglen, "trust store: map %s: %s", path, strerror(err));
        return err;
    }
    if (is_bundle) {
        err = bundle_reserve_slot(path, msg, msglen);
    } else {
        char *slot = malloc(TRUST_STORE_SLOT_SIZE);
        if (!slot) {
            snprintf(msg, msglen, "trust store: out of memory");
            return ENOMEM;
        }
        slot_fill(slot, "", 0);
        err = replace_file(path, slot, TRUST_STORE_SLOT_SIZE, "", 0, 0644, msg, msglen);
        free(slot);
    }
    if (err)
        return err;
    if (slot_map_file(m, path) < 0) {
        err = errno;
        snprintf(msg, msglen, "trust store: map %s: %s", path, strerror(err));
        return err;
    }
    return 0;
}

/* Copies the first used bytes of slot into the mapping, unless they are
 * there already; false if the file shrank under the mapping meanwhile. */
static bool slot_store(struct slot_map *m, const char *slot, size_t used)
{
    bool stored = false;
    if (sigsetjmp(slot_fault_jump, 1) == 0) {
        slot_fault_armed = 1;
        if (memcmp(m->map, slot, used) != 0)
            memcpy(m->map, slot, TRUST_STORE_SLOT_SIZE);
        stored = true;
    }
    slot_fault_armed = 0;
    return stored;
}

/* Writes the same byte back on every page: the pages are dirty and
 * writable in the template snapshot, so a session's copy does not fault. */
static void slot_touch(struct slot_map *m)
{
    if (sigsetjmp(slot_fault_jump, 1) == 0) {
        slot_fault_armed = 1;
        for (size_t off = 0; off < TRUST_STORE_SLOT_SIZE; off += TRUST_STORE_PAGE)
            ((volatile char *)m->map)[off] = m->map[off];
    }
    slot_fault_armed = 0;
}

static int install_hook(const struct trust_store_paths *p, char *msg, size_t msglen)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s", p->hook);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    if (!slash || access(dir, F_OK) < 0)
        return 0; /* no update-ca-certificates here */
    char script[2 * PATH_MAX + 512];
    int n = snprintf(script, sizeof(script),
                     "#!/bin/sh\n"
                     "# airlock-guestd: update-ca-certificates rebuilt the bundle without the\n"
                     "# sandbox CA's slot; append the slot's copy at a page boundary.\n"
                     "set -e\n"
                     "bundle='%s'\n"
                     "copy='%s'\n"
                     "[ -f \"$copy\" ] && [ -f \"$bundle\" ] || exit 0\n"
                     "size=$(stat -c %%s \"$bundle\")\n"
                     "head -c $(( (%d - size %% %d) %% %d )) /dev/zero | tr '\\0' '\\n' "
                     ">> \"$bundle\"\n"
                     "cat \"$copy\" >> \"$bundle\"\n",
                     p->bundle, p->copy, TRUST_STORE_PAGE, TRUST_STORE_PAGE, TRUST_STORE_PAGE);
    if (n >= (int)sizeof(script)) {
        snprintf(msg, msglen, "trust store: hook paths too long");
        return ENAMETOOLONG;
    }
    return replace_file(p->hook, script, (size_t)n, "", 0, 0755, msg, msglen);
}

int trust_store_prepare(const struct trust_store_paths *p, char *msg, size_t msglen)
{
    int err = slot_ensure(&bundle_slot, p->bundle, true, msg, msglen);
    if (!err)
        err = slot_ensure(&copy_slot, p->copy, false, msg, msglen);
    if (!err)
        err = install_hook(p, msg, msglen);
    if (!err) {
        slot_fill(session_slot, "", 0);
        trust_store_keep_writable();
    }
    return err;
}

int trust_store_set_ca(const struct trust_store_paths *p, const char *pem, char *msg,
                       size_t msglen)
{
    size_t pem_len = strlen(pem);
    if (pem_len && !pem_valid(pem, pem_len)) {
        snprintf(msg, msglen, "trust store: not one PEM certificate of at most %d bytes",
                 TRUST_STORE_PEM_MAX);
        return EINVAL;
    }
    char *slot = session_slot;
    slot_fill(slot, pem, pem_len);
    /* The newline after pem: a longer certificate of an earlier session
     * that starts the same way is not this one. */
    size_t used = strlen(TRUST_STORE_MARKER) + pem_len + 1;
    struct {
        struct slot_map *m;
        const char *path;
        bool is_bundle;
    } files[] = { { &bundle_slot, p->bundle, true }, { &copy_slot, p->copy, false } };
    int err = 0;
    for (size_t i = 0; !err && i < sizeof(files) / sizeof(files[0]); i++) {
        /* No CA: only a slot that holds one is emptied (a store never
         * prepared is left alone). */
        if (!pem_len && (!files[i].m->map || slot_shows(files[i].m, slot, used)))
            continue;
        /* Twice at most: a file truncated under the mapping is mapped
         * again. */
        for (int attempt = 0; attempt < 2; attempt++) {
            err = slot_ensure(files[i].m, files[i].path, files[i].is_bundle, msg, msglen);
            if (err || slot_store(files[i].m, slot, used))
                break;
            slot_unmap(files[i].m);
            err = EIO;
            snprintf(msg, msglen, "trust store: %s changed while being written", files[i].path);
        }
    }
    return err;
}

void trust_store_keep_writable(void)
{
    if (bundle_slot.map && copy_slot.map) {
        slot_touch(&bundle_slot);
        slot_touch(&copy_slot);
    }
}

void trust_store_release(void)
{
    slot_unmap(&bundle_slot);
    slot_unmap(&copy_slot);
}
