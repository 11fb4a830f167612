/* The node agent's shared state: configuration, the guest image in use, the
 * accelerator, and the registry of sandboxes on this node. */
#ifndef AIRLOCK_VMHOST_H
#define AIRLOCK_VMHOST_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>

#include "image.h"
#include "vm.h"

struct sandbox;

struct vmhost_config {
    const char *data_dir;       /* sandboxes/ lives here */
    const char *image_dir;      /* guest image cache */
    const char *listen;         /* gRPC address */
    const char *qemu_binary;    /* NULL = qemu-system-x86_64 */
    const char *guestd_path;    /* NULL = the airlock-guestd built with vmhost */
    enum vm_accel accel;        /* AUTO probes */
    unsigned max_sandboxes;     /* capacity of this node */
    int guest_ready_timeout_ms; /* boot to guestd hello */
};

struct vmhost {
    struct vmhost_config cfg;
    struct guest_image image;
    enum vm_accel accel;
    char sandboxes_dir[PATH_MAX];

    pthread_mutex_t lock;       /* protects the registry and exec counter */
    struct sandbox *sandboxes;  /* linked list; sandbox.next */
    unsigned n_sandboxes;
    unsigned long long next_exec_id;
};

/* Prepares directories, the guest image and the accelerator. */
int vmhost_init(struct vmhost *vh, const struct vmhost_config *cfg, char *err, size_t errlen);
/* Deletes every sandbox (their VMs are stopped) and frees the registry. */
void vmhost_shutdown(struct vmhost *vh);

#endif
