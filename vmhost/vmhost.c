#include "vmhost.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "log.h"
#include "proc.h"
#include "sandbox.h"

#ifndef AIRLOCK_GUESTD_BUILD_PATH
#define AIRLOCK_GUESTD_BUILD_PATH "/usr/lib/airlock/airlock-guestd"
#endif

/* Sandboxes left by a vmhost that died: until re-adoption exists, stop their
 * VMs (only QEMUs started for that sandbox directory) and remove them, so
 * nothing leaks across restarts. */
static void vmhost_clean_leftovers(struct vmhost *vh)
{
    DIR *d = opendir(vh->sandboxes_dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char dir[PATH_MAX], pidfile[PATH_MAX];
        if (fs_path(dir, sizeof(dir), "%s/%s", vh->sandboxes_dir, e->d_name) < 0 ||
            fs_path(pidfile, sizeof(pidfile), "%s/qemu.pid", dir) < 0)
            continue;
        char *text = NULL;
        if (fs_read_file(pidfile, 64, &text, NULL, NULL, 0) == 0) {
            pid_t pid = (pid_t)atoi(text);
            if (pid > 1 && proc_cmdline_matches(pid, "qemu-system", dir)) {
                kill(pid, SIGKILL);
                log_warn("stopped leftover VM", "sandbox=%s pid=%d", e->d_name, (int)pid);
            }
            free(text);
        }
        char err[256];
        if (fs_remove_tree(dir, err, sizeof(err)) < 0)
            log_error("cannot remove leftover sandbox", "sandbox=%s error=\"%s\"", e->d_name, err);
    }
    closedir(d);
}

int vmhost_init(struct vmhost *vh, const struct vmhost_config *cfg, char *err, size_t errlen)
{
    memset(vh, 0, sizeof(*vh));
    vh->cfg = *cfg;
    pthread_mutex_init(&vh->lock, NULL);
    if (fs_path(vh->sandboxes_dir, sizeof(vh->sandboxes_dir), "%s/sandboxes", cfg->data_dir) < 0) {
        snprintf(err, errlen, "data directory path too long: %s", cfg->data_dir);
        return -1;
    }
    if (fs_mkdir_p(vh->sandboxes_dir, 0700, err, errlen) < 0)
        return -1;
    vmhost_clean_leftovers(vh);

    struct image_build_options io = {
        .cache_dir = cfg->image_dir,
        .guestd_path = cfg->guestd_path ? cfg->guestd_path : AIRLOCK_GUESTD_BUILD_PATH,
        .progress = stderr,
    };
    if (guest_image_ensure(&io, &vh->image, err, errlen) < 0)
        return -1;
    vh->accel = vm_accel_probe(cfg->accel, cfg->qemu_binary, vh->image.kernel, vh->image.initrd,
                               cfg->image_dir);
    log_info("vmhost ready", "accel=%s image=%s max_sandboxes=%u", vm_accel_name(vh->accel),
             vh->image.hash, cfg->max_sandboxes);
    return 0;
}

void vmhost_shutdown(struct vmhost *vh)
{
    size_t n;
    struct sandbox **all = sandbox_list(vh, &n);
    for (size_t i = 0; i < n; i++) {
        char err[256];
        sandbox_delete(vh, all[i]->id, err, sizeof(err));
        sandbox_put(all[i]);
    }
    free(all);
    pthread_mutex_destroy(&vh->lock);
}
