/* The node agent's shared state: configuration, the guest image in use, the
 * accelerator, and the registry of sandboxes on this node. */
#ifndef AIRLOCK_VMHOST_H
#define AIRLOCK_VMHOST_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "image.h"
#include "jail.h"
#include "node_budget.h"
#include "store.h"
#include "template.h"
#include "vm.h"

struct sandbox;
struct warm_pool;
struct build_gate;
struct template_registry;
struct egress_client;
struct snapshot_store;
struct volume_store;

/* The default template: what CreateSandbox gets without vcpus/memory_mb. */
#define VMHOST_TEMPLATE_VCPUS 1
#define VMHOST_TEMPLATE_MEMORY_MB 512

/* Sandbox sizes a node makes unless configured otherwise, and how many
 * sizes of the default template keep a snapshot (each a memory file as
 * large as the size's RAM); vmhost_init puts them where cfg has 0. */
#define VMHOST_DEFAULT_SANDBOX_MAX_VCPUS 16u
#define VMHOST_DEFAULT_SANDBOX_MAX_MEMORY_MB 65536u
#define VMHOST_DEFAULT_TEMPLATE_SIZES_MAX 8u
/* --pool-memory-mib: 16 VMs of the default 512 MiB size. */
#define VMHOST_DEFAULT_POOL_MEMORY_MIB 8192u
/* Spare QEMUs per warm pool: a few cover the CPU-bound miss path; more
 * only hold processes. */
#define VMHOST_MAX_POOL_SPARES 16u
/* --parallel-creates: beyond a few per core, restores only share the CPU. */
#define VMHOST_MAX_PARALLEL_CREATES 1024u

struct vmhost_config {
    const char *data_dir;       /* sandboxes/ lives here */
    const char *image_dir;      /* guest image cache */
    const char *listen;         /* gRPC address */
    const char *qemu_binary;    /* NULL = qemu-system-x86_64 */
    const char *guestd_path;    /* NULL = the airlock-guestd built with vmhost */
    enum vm_accel accel;        /* AUTO probes */
    unsigned max_sandboxes;     /* capacity of this node */
    int parallel_creates;       /* builds restoring at once (build_gate.h); 0: no limit,
                                   < 0: the CPUs online */
    int guest_ready_timeout_ms; /* boot to guestd hello */
    unsigned store_size_gb;     /* loop-mounted store image when data_dir is not btrfs */
    bool cold_boot;             /* no template snapshot: every sandbox boots its kernel */
    unsigned warm_pool;         /* paused VMs of the default template kept ready at least
                                   (warm_pool.h) */
    unsigned warm_pool_max;     /* a pool's ceiling unless the scheduler sets one: its
                                   demand grows it up to this; below the floor: the floor */
    unsigned warm_pool_spares;  /* QEMUs each pool in use keeps started ahead (warm_pool.h),
                                   at most VMHOST_MAX_POOL_SPARES */
    unsigned long long pool_memory_mib; /* guest memory every warm pool's VMs together may hold */
    const char *egress_addr;    /* egress's gRPC address; NULL: sandboxes are attached to
                                   nothing and reach nothing (docs/egress.md) */
    bool delete_on_stop;        /* a stop deletes every sandbox instead of suspending
                                   them for the next start (sandbox_stop.h) */
    const char *internal_token; /* callers of the gRPC API and egress see it;
                                   NULL: none (internal_token.h) */
    /* Mutual TLS for the gRPC API and egress (tls_credentials.h): this
     * node's vmhost:<node-id>. NULL: plaintext. */
    struct tls_credentials *internal_tls;
    unsigned image_cache_keep;  /* guest images the cache keeps; 0: all (image_cache.h) */
    bool no_jail;               /* QEMU unconfined: only for the bench's comparison */
    bool allow_tcg;             /* run guests under TCG, which is no security boundary */
    size_t console_max_bytes;   /* each sandbox's console.log (console_log.h); 0: default */
    unsigned sandbox_max_vcpus; /* the largest sandbox this node makes; 0: the default */
    unsigned sandbox_max_memory_mb;
    unsigned template_sizes_max; /* sizes of the default template with a snapshot here; the
                                    least recently used one no sandbox holds goes; 0: default */
    /* The snapshot store the nodes share (snapshot_store.h): a directory
     * or "s3://BUCKET[/PREFIX]" with the S3 settings. NULL: suspends stay
     * on this node. */
    const char *snapshot_store;
    const char *snapshot_store_endpoint;
    const char *snapshot_store_region;
    const char *snapshot_store_credentials;
    /* Where other nodes' live migrations come in (sandbox_migrate.h):
     * an address of this machine; NULL: 127.0.0.1. */
    const char *migration_addr;
    const char *netns_prefix;   /* sandbox_net_set_prefix; NULL: the default */
    struct jailer_config jail;  /* uid range, preload (jail.h); dirs default under data_dir */
    struct node_budget_config budget; /* the vCPUs and memory VMs may hold (node_budget.h) */
};

struct vmhost_metrics;

struct vmhost {
    struct vmhost_config cfg;
    struct guest_image image;      /* held (image.h) until vmhost_shutdown */
    enum vm_accel accel;
    struct store store;
    char sandboxes_dir[PATH_MAX];  /* store.sandboxes_dir */
    char base_disk[PATH_MAX];      /* the image's rootfs, imported into the store */
    struct template_snapshot tmpl; /* the default template's snapshot ... */
    bool have_template;            /* ... unless cold_boot */
    struct warm_pool *pool;        /* the default template's; NULL with cfg.cold_boot */
    atomic_ullong pool_memory_mb;  /* what every warm pool's ready VMs hold (warm_pool.c) */
    struct template_registry *templates; /* every template version (template_registry.h) */
    struct egress_client *egress;  /* NULL without cfg.egress_addr */
    struct egress_watch *egress_watch; /* re-attaches after an egress restart (egress_watch.h) */
    struct jailer *jailer;      /* every QEMU's jail; NULL with cfg.no_jail */
    struct node_budget *budget; /* what the VMs hold of the node (node_budget.h) */
    struct build_gate *build_gate; /* creates and forks restoring at once (build_gate.h) */
    struct snapshot_store *snapshots; /* NULL without cfg.snapshot_store */
    struct volume_store *volumes;     /* STORE/volumes (volume_store.h) */
    struct vmhost_metrics *metrics;   /* NULL: nothing counted (build-image) */
    pthread_mutex_t snapshots_lock;   /* one template publish or fetch at a time */

    pthread_mutex_t lock;       /* protects the registry and exec counter */
    struct sandbox *sandboxes;  /* linked list; sandbox.next */
    unsigned n_sandboxes;
    unsigned long long next_exec_id;
};

/* Prepares the store, the guest image, the accelerator and the default
 * template's snapshot. */
int vmhost_init(struct vmhost *vh, const struct vmhost_config *cfg, char *err, size_t errlen);
/* Suspends every sandbox for the next start, or deletes them with
 * cfg.delete_on_stop (sandbox_stop.h), frees the registry and unmounts a
 * loop-mounted store. */
void vmhost_shutdown(struct vmhost *vh);

#endif
