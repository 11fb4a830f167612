/* Kernel modules the initramfs loads, in an order insmod accepts: each
 * module after everything it depends on, as listed in modules.dep. */
#ifndef AIRLOCK_INITRAMFS_MODULES_H
#define AIRLOCK_INITRAMFS_MODULES_H

#include <stddef.h>

struct module_list {
    char **paths; /* relative to lib/modules/<version>/, e.g. kernel/drivers/virtio/virtio.ko */
    size_t count;
};

/* Resolves names ("virtio_blk"; '-' and '_' are the same) against the text
 * of a modules.dep file: the modules and all their dependencies, each once,
 * dependencies first. Fails naming a module that is missing, compressed
 * (.ko.xz/.zst/.gz: busybox insmod needs plain .ko) or part of a cycle. */
int modules_resolve(const char *modules_dep, const char *const names[], size_t nnames,
                    struct module_list *out, char *err, size_t errlen);
void module_list_free(struct module_list *l);

/* "virtio_blk" from "kernel/drivers/block/virtio_blk.ko" into buf. */
void module_name_of(const char *path, char *buf, size_t buflen);

#endif
