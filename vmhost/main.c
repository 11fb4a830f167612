/* airlock-vmhost: the node agent. Parses configuration and wires the parts
 * together; everything else lives in the other files of vmhost/. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "image_cache.h"
#include "internal_token.h"
#include "log.h"
#include "metrics_http.h"
#include "nats_agent.h"
#include "nats_credentials.h"
#include "sandbox_adopt.h"
#include "template_registry.h"
#include "vmhost_service.h"
#include "vmhost.h"
#include "vmhost_metrics.h"
#include "stop_signals.h"
#include "tls_credentials.h"

#define VMHOST_DEFAULT_DATA_DIR "/var/lib/airlock"
/* A bound on records (and ids, directories): what runs is bounded by the
 * node's budget (node_budget.h), not by a count. */
#define VMHOST_DEFAULT_MAX_SANDBOXES 1024u
/* Far above any distribution's users and the usual subuid ranges. */
#define VMHOST_DEFAULT_JAIL_UID_BASE 900000000u
#define VMHOST_DEFAULT_JAIL_UID_COUNT 4096u
#define VMHOST_JAIL_LOCK_DIR "/run/airlock/jail-uids"
#define VMHOST_JAIL_PRELOAD_NAME "airlock-qemu-preload.so"
/* QEMU's own memory above guest RAM under TCG: translated code (idle
 * ~13 MiB, busy up to its 128 MiB buffer), heap, libraries, with room for
 * bursts (the tests OOM-killed busy QEMUs at 256); docs/jail.md. */
#define VMHOST_JAIL_MEM_OVERHEAD_MB 384u

static void usage(FILE *out)
{
    fprintf(out,
            "usage: airlock-vmhost serve [options]        run the node agent\n"
            "       airlock-vmhost build-image [options]  build (or find cached) the guest image\n"
            "options:\n"
            "  --data-dir DIR       state directory (env AIRLOCK_DATA_DIR, default %s)\n"
            "  --image-dir DIR      guest image cache (default DATA_DIR/images)\n"
            "  --image-cache-keep N keep the N most recently used guest images in the cache,\n"
            "                       deleting older ones nobody uses (default %u; 0: keep all)\n"
            "  --listen ADDR        gRPC address (default unix:DATA_DIR/vmhost.sock)\n"
            "  --accel auto|kvm|tcg accelerator (default auto: KVM only if a guest really runs)\n"
            "  --max-sandboxes N    the most sandboxes this node keeps, suspended ones too\n"
            "                       (default %u); what runs is bounded by the budget below\n"
            "  --node-cpus N        CPUs the node offers sandboxes (default: those vmhost may use)\n"
            "  --node-memory-mb N   memory the node offers sandboxes (default: MemTotal)\n"
            "  --cpu-overcommit R   vCPUs the running sandboxes may hold per CPU (default %g)\n"
            "  --memory-overcommit R  guest memory they may hold per MiB of the node's memory\n"
            "                       less the reserve (default %g)\n"
            "  --memory-reserve-mb N  kept for the host: never promised to guests, and a VM starts\n"
            "                       only while MemAvailable covers its memory and this (default %u)\n"
            "  --qemu PATH          QEMU binary (default qemu-system-x86_64)\n"
            "  --guestd PATH        airlock-guestd binary to put into the image\n"
            "  --ready-timeout MS   boot-to-guest-ready limit (default 60000)\n"
            "  --store-size-gb N    size of DATA_DIR/store.btrfs, made when DATA_DIR is not on\n"
            "                       btrfs (default %d, sparse)\n"
            "  --snapshot-store DIR|s3://BUCKET[/PREFIX]\n"
            "                       the snapshot store the nodes share (a directory every node\n"
            "                       mounts, or an S3-compatible bucket): suspends go there, so\n"
            "                       any node resumes them (docs/snapshot-store.md; env\n"
            "                       AIRLOCK_SNAPSHOT_STORE; unset: suspends stay on this node)\n"
            "  --snapshot-store-endpoint URL, --snapshot-store-region R (default us-east-1),\n"
            "  --snapshot-store-credentials FILE (ACCESS_KEY_ID:SECRET_ACCESS_KEY, 0600)\n"
            "                       an s3:// store's server, signing region and keys\n"
            "  --migration-addr HOST  where this node takes live migrations from other nodes\n"
            "                       (a drain's running sandboxes): an address of this machine the\n"
            "                       other nodes reach; a port of its own per migration (default\n"
            "                       127.0.0.1: nodes on this machine only)\n"
            "  --netns-prefix P     sandbox network namespaces are P<sandbox id> (default\n"
            "                       airlock-); nodes sharing a machine each need their own\n"
            "  --cold-boot          no template snapshot: every sandbox boots its kernel\n"
            "  --warm-pool N        keep at least N restored, paused VMs of the default\n"
            "                       template ready for creates (default 0: none)\n"
            "  --warm-pool-max N    a warm pool follows its recent creates up to N VMs unless\n"
            "                       the scheduler sets its ceiling (default: the floor, so a\n"
            "                       pool stays at --warm-pool or a template's warm_pool)\n"
            "  --warm-pool-spares N QEMU processes each warm pool (a floor or ceiling above 0)\n"
            "                       keeps started ahead, waiting for a restore: a create that\n"
            "                       finds the pool empty, and each refill, skip QEMU's start\n"
            "                       (default 0)\n"
            "  --parallel-creates N creates and forks that restore at once; the others wait\n"
            "                       in arrival order (default: the CPUs online; 0: no limit)\n"
            "  --pool-memory-mib N  guest memory every warm pool's VMs together may hold; less\n"
            "                       than one VM, or than --warm-pool VMs, is refused (default %u)\n"
            "  --egress ADDR        airlock-egress's gRPC address: sandboxes are attached to it\n"
            "                       with their policy (unset: sandboxes reach nothing at all)\n"
            "  --delete-on-stop     a stop deletes every sandbox (default: running and paused ones\n"
            "                       are suspended to disk and kept for the next start)\n"
            "  --nats URL           join the control plane: heartbeats and work over NATS\n"
            "  --node-id ID         this node's name in the control plane (default: hostname);\n"
            "                       characters other than letters, digits, '_' and '-' become '-'\n"
            "  --nats-credentials-file PATH  user:password of this node's NATS user\n"
            "                       (docs/operations.md \"NATS users\")\n"
            "  --internal-token-file PATH  callers of the gRPC API must present this token;\n"
            "                       egress is called with it\n"
            "                       (env AIRLOCK_INTERNAL_TOKEN_FILE; unset: none)\n"
            INTERNAL_TLS_USAGE
            "                       (the certificate names vmhost:<node-id>)\n"
            "  --jail-uid-base N    first uid (and gid) of the QEMU jails (default %u)\n"
            "  --jail-uid-count N   how many: at most this many QEMUs run at once (default %u)\n"
            "  --jail-preload PATH  the library jailed QEMUs preload (default: %s beside\n"
            "                       airlock-vmhost)\n"
            "  --allow-tcg          run guests without working KVM: TCG is no security boundary,\n"
            "                       so without this a node with TCG only refuses to start\n"
            "  --console-log-max-kb N  each sandbox's console.log keeps its newest N KiB at\n"
            "                       most (default 4096)\n"
            "  --sandbox-max-vcpus N      the most vCPUs a sandbox may have here (default %u)\n"
            "  --sandbox-max-memory-mb N  the most memory a sandbox may have here (default %u)\n"
            "  --template-sizes-max N     sizes of the default template kept as snapshots; the\n"
            "                       least recently used one no sandbox holds goes (default %u)\n"
            "  --no-jail            run QEMU unconfined as root: only for measuring what the\n"
            "                       jail costs (make bench); never on a node with tenants\n"
            METRICS_LISTEN_USAGE,
            VMHOST_DEFAULT_DATA_DIR, IMAGE_CACHE_DEFAULT_KEEP, VMHOST_DEFAULT_MAX_SANDBOXES,
            NODE_BUDGET_DEFAULT_CPU_OVERCOMMIT, NODE_BUDGET_DEFAULT_MEMORY_OVERCOMMIT,
            NODE_BUDGET_DEFAULT_RESERVE_MB, STORE_DEFAULT_SIZE_GB, VMHOST_DEFAULT_POOL_MEMORY_MIB,
            VMHOST_DEFAULT_JAIL_UID_BASE, VMHOST_DEFAULT_JAIL_UID_COUNT, VMHOST_JAIL_PRELOAD_NAME,
            VMHOST_DEFAULT_SANDBOX_MAX_VCPUS, VMHOST_DEFAULT_SANDBOX_MAX_MEMORY_MB,
            VMHOST_DEFAULT_TEMPLATE_SIZES_MAX);
}

struct vmhost_args {
    struct vmhost_config cfg;
    char image_dir[4096];
    char listen[4200];
    const char *nats_url;       /* NULL: no control plane, gRPC only */
    char node_id[128];
    const char *token_file;     /* NULL: env AIRLOCK_INTERNAL_TOKEN_FILE or none */
    const char *metrics_listen; /* NULL: not served */
    const char *nats_creds_file; /* NULL: NATS without credentials */
    struct tls_files tls_files; /* --internal-ca/-cert/-key */
    char preload[4096];
};

/* A decimal that fits in unsigned. */
static int parse_uint(const char *s, unsigned *out)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || end == s || *end || v > UINT_MAX || s[0] == '-')
        return -1;
    *out = (unsigned)v;
    return 0;
}

/* A decimal ratio in [0.1, 1000]; a message naming flag otherwise. */
static int parse_ratio(const char *flag, const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (!errno && end != s && !*end && v >= 0.1 && v <= 1000) {
        *out = v;
        return 0;
    }
    fprintf(stderr, "airlock-vmhost: --%s wants a ratio from 0.1 to 1000, not \"%s\"\n", flag, s);
    return -1;
}

/* parse_uint, at least min; a message naming flag otherwise. */
static int parse_at_least(const char *flag, const char *s, unsigned min, unsigned *out)
{
    if (parse_uint(s, out) == 0 && *out >= min)
        return 0;
    if (min)
        fprintf(stderr, "airlock-vmhost: --%s wants a number of at least %u, not \"%s\"\n", flag,
                min, s);
    else
        fprintf(stderr, "airlock-vmhost: --%s wants a whole number, not \"%s\"\n", flag, s);
    return -1;
}

static int parse_args(int argc, char **argv, struct vmhost_args *a)
{
    static const struct option opts[] = {
        { "data-dir", required_argument, NULL, 'd' },
        { "image-dir", required_argument, NULL, 'i' },
        { "image-cache-keep", required_argument, NULL, 'K' },
        { "listen", required_argument, NULL, 'l' },
        { "accel", required_argument, NULL, 'a' },
        { "max-sandboxes", required_argument, NULL, 'm' },
        { "qemu", required_argument, NULL, 'q' },
        { "guestd", required_argument, NULL, 'g' },
        { "ready-timeout", required_argument, NULL, 'r' },
        { "nats", required_argument, NULL, 'N' },
        { "node-id", required_argument, NULL, 'I' },
        { "store-size-gb", required_argument, NULL, 's' },
        { "snapshot-store", required_argument, NULL, 'Z' },
        { "snapshot-store-endpoint", required_argument, NULL, 'E' },
        { "snapshot-store-region", required_argument, NULL, 'H' },
        { "snapshot-store-credentials", required_argument, NULL, 'X' },
        { "migration-addr", required_argument, NULL, 'A' },
        { "netns-prefix", required_argument, NULL, 'x' },
        { "cold-boot", no_argument, NULL, 'c' },
        { "warm-pool", required_argument, NULL, 'w' },
        { "warm-pool-max", required_argument, NULL, 'W' },
        { "warm-pool-spares", required_argument, NULL, 'Q' },
        { "parallel-creates", required_argument, NULL, 'F' },
        { "pool-memory-mib", required_argument, NULL, 'Y' },
        { "egress", required_argument, NULL, 'e' },
        { "delete-on-stop", no_argument, NULL, 'D' },
        { "internal-token-file", required_argument, NULL, 'T' },
        { "nats-credentials-file", required_argument, NULL, 'n' },
        INTERNAL_TLS_OPTIONS,
        { "jail-uid-base", required_argument, NULL, 'U' },
        { "jail-uid-count", required_argument, NULL, 'C' },
        { "jail-preload", required_argument, NULL, 'P' },
        { "no-jail", no_argument, NULL, 'J' },
        { "allow-tcg", no_argument, NULL, 'G' },
        { "console-log-max-kb", required_argument, NULL, 'L' },
        { "sandbox-max-vcpus", required_argument, NULL, 'V' },
        { "sandbox-max-memory-mb", required_argument, NULL, 'M' },
        { "template-sizes-max", required_argument, NULL, 'S' },
        { "node-cpus", required_argument, NULL, 'p' },
        { "node-memory-mb", required_argument, NULL, 'y' },
        { "cpu-overcommit", required_argument, NULL, 'o' },
        { "memory-overcommit", required_argument, NULL, 'O' },
        { "memory-reserve-mb", required_argument, NULL, 'R' },
        { METRICS_LISTEN_FLAG, required_argument, NULL, 'b' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *env_data = getenv("AIRLOCK_DATA_DIR");
    a->cfg.data_dir = env_data && *env_data ? env_data : VMHOST_DEFAULT_DATA_DIR;
    a->cfg.max_sandboxes = VMHOST_DEFAULT_MAX_SANDBOXES;
    a->cfg.parallel_creates = -1; /* the CPUs online */
    const char *env_store = getenv("AIRLOCK_SNAPSHOT_STORE");
    a->cfg.snapshot_store = env_store && *env_store ? env_store : NULL;
    a->cfg.guest_ready_timeout_ms = 60000;
    a->cfg.image_cache_keep = IMAGE_CACHE_DEFAULT_KEEP;
    a->cfg.jail = (struct jailer_config){ .uid_base = VMHOST_DEFAULT_JAIL_UID_BASE,
                                          .uid_count = VMHOST_DEFAULT_JAIL_UID_COUNT,
                                          .lock_dir = VMHOST_JAIL_LOCK_DIR,
                                          .mem_overhead_mb = VMHOST_JAIL_MEM_OVERHEAD_MB };
    char err[256];
    int c;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        if (tls_files_option(&a->tls_files, c, optarg))
            continue;
        switch (c) {
        case 'd': a->cfg.data_dir = optarg; break;
        case 'i': a->cfg.image_dir = optarg; break;
        case 'K':
            if (image_cache_parse_keep(optarg, &a->cfg.image_cache_keep, err, sizeof(err)) < 0) {
                fprintf(stderr, "airlock-vmhost: %s\n", err);
                return -1;
            }
            break;
        case 'l': a->cfg.listen = optarg; break;
        case 'q': a->cfg.qemu_binary = optarg; break;
        case 'g': a->cfg.guestd_path = optarg; break;
        case 'a':
            if (vm_accel_parse(optarg, &a->cfg.accel) < 0) {
                fprintf(stderr, "airlock-vmhost: --accel must be auto, kvm or tcg, not \"%s\"\n",
                        optarg);
                return -1;
            }
            break;
        case 'm':
            a->cfg.max_sandboxes = (unsigned)strtoul(optarg, NULL, 10);
            if (a->cfg.max_sandboxes == 0) {
                fprintf(stderr, "airlock-vmhost: --max-sandboxes must be a positive number\n");
                return -1;
            }
            break;
        case 'r':
            a->cfg.guest_ready_timeout_ms = atoi(optarg);
            if (a->cfg.guest_ready_timeout_ms <= 0) {
                fprintf(stderr, "airlock-vmhost: --ready-timeout must be a positive number\n");
                return -1;
            }
            break;
        case 's':
            a->cfg.store_size_gb = (unsigned)strtoul(optarg, NULL, 10);
            if (a->cfg.store_size_gb == 0) {
                fprintf(stderr, "airlock-vmhost: --store-size-gb must be a positive number\n");
                return -1;
            }
            break;
        case 'Z': a->cfg.snapshot_store = optarg; break;
        case 'E': a->cfg.snapshot_store_endpoint = optarg; break;
        case 'H': a->cfg.snapshot_store_region = optarg; break;
        case 'X': a->cfg.snapshot_store_credentials = optarg; break;
        case 'A': a->cfg.migration_addr = optarg; break;
        case 'x': a->cfg.netns_prefix = optarg; break;
        case 'c': a->cfg.cold_boot = true; break;
        case 'w':
            if (parse_at_least("warm-pool", optarg, 0, &a->cfg.warm_pool) < 0)
                return -1;
            break;
        case 'W':
            if (parse_at_least("warm-pool-max", optarg, 0, &a->cfg.warm_pool_max) < 0)
                return -1;
            break;
        case 'F': {
            unsigned n;
            if (parse_at_least("parallel-creates", optarg, 0, &n) < 0)
                return -1;
            if (n > VMHOST_MAX_PARALLEL_CREATES) {
                fprintf(stderr, "airlock-vmhost: --parallel-creates wants at most %u, not \"%s\"\n",
                        VMHOST_MAX_PARALLEL_CREATES, optarg);
                return -1;
            }
            a->cfg.parallel_creates = (int)n;
            break;
        }
        case 'Q':
            if (parse_at_least("warm-pool-spares", optarg, 0, &a->cfg.warm_pool_spares) < 0)
                return -1;
            if (a->cfg.warm_pool_spares > VMHOST_MAX_POOL_SPARES) {
                fprintf(stderr, "airlock-vmhost: --warm-pool-spares wants at most %u, not \"%s\"\n",
                        VMHOST_MAX_POOL_SPARES, optarg);
                return -1;
            }
            break;
        case 'Y': {
            unsigned mib;
            if (parse_at_least("pool-memory-mib", optarg, 1, &mib) < 0)
                return -1;
            a->cfg.pool_memory_mib = mib;
            break;
        }
        case 'e': a->cfg.egress_addr = optarg; break;
        case 'D': a->cfg.delete_on_stop = true; break;
        case 'T': a->token_file = optarg; break;
        case 'n': a->nats_creds_file = optarg; break;
        case 'U':
        case 'C': {
            unsigned *uid = c == 'U' ? &a->cfg.jail.uid_base : &a->cfg.jail.uid_count;
            if (parse_uint(optarg, uid) < 0 || *uid == 0) {
                fprintf(stderr, "airlock-vmhost: --jail-uid-%s wants a positive number, not "
                                "\"%s\"\n", c == 'U' ? "base" : "count", optarg);
                return -1;
            }
            break;
        }
        case 'P': a->cfg.jail.preload = optarg; break;
        case 'J': a->cfg.no_jail = true; break;
        case 'G': a->cfg.allow_tcg = true; break;
        case 'L': {
            unsigned kb;
            if (parse_at_least("console-log-max-kb", optarg, 16, &kb) < 0)
                return -1;
            a->cfg.console_max_bytes = (size_t)kb << 10;
            break;
        }
        case 'V':
            if (parse_at_least("sandbox-max-vcpus", optarg, 1, &a->cfg.sandbox_max_vcpus) < 0)
                return -1;
            break;
        case 'M':
            if (parse_at_least("sandbox-max-memory-mb", optarg, 128,
                               &a->cfg.sandbox_max_memory_mb) < 0)
                return -1;
            break;
        case 'S':
            if (parse_at_least("template-sizes-max", optarg, 1, &a->cfg.template_sizes_max) < 0)
                return -1;
            break;
        case 'p':
            if (parse_at_least("node-cpus", optarg, 1, &a->cfg.budget.cpus) < 0)
                return -1;
            break;
        case 'y': {
            unsigned mb;
            if (parse_at_least("node-memory-mb", optarg, 256, &mb) < 0)
                return -1;
            a->cfg.budget.memory_mb = mb;
            break;
        }
        case 'o':
            if (parse_ratio("cpu-overcommit", optarg, &a->cfg.budget.cpu_overcommit) < 0)
                return -1;
            break;
        case 'O':
            if (parse_ratio("memory-overcommit", optarg, &a->cfg.budget.memory_overcommit) < 0)
                return -1;
            break;
        case 'R':
            if (parse_at_least("memory-reserve-mb", optarg, 1, &a->cfg.budget.reserve_mb) < 0)
                return -1;
            break;
        case 'b': a->metrics_listen = optarg; break;
        case 'N': a->nats_url = optarg; break;
        case 'I': snprintf(a->node_id, sizeof(a->node_id), "%s", optarg); break;
        case 'h': usage(stdout); exit(0);
        default: usage(stderr); return -1;
        }
    }
    a->metrics_listen = metrics_listen_addr(a->metrics_listen);
    if (a->metrics_listen && metrics_listen_check(a->metrics_listen, err, sizeof(err)) < 0) {
        fprintf(stderr, "airlock-vmhost: %s\n", err);
        return -1;
    }
    if (!a->cfg.image_dir) {
        snprintf(a->image_dir, sizeof(a->image_dir), "%s/images", a->cfg.data_dir);
        a->cfg.image_dir = a->image_dir;
    }
    if (!a->node_id[0] && gethostname(a->node_id, sizeof(a->node_id) - 1) < 0)
        snprintf(a->node_id, sizeof(a->node_id), "node");
    /* The id is one token of NATS subjects (airlock.node.<id>.<op>) and
     * of its user's permissions: a host name's dots would split it. */
    for (char *c = a->node_id; *c; c++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-", *c))
            *c = '-';
    if (!a->cfg.listen) {
        snprintf(a->listen, sizeof(a->listen), "unix:%s/vmhost.sock", a->cfg.data_dir);
        a->cfg.listen = a->listen;
    }
    if (!a->cfg.jail.preload) {
        /* Installed, and built, beside airlock-vmhost. */
        char self[sizeof(a->preload) - sizeof(VMHOST_JAIL_PRELOAD_NAME) - 1];
        ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
        self[n > 0 ? n : 0] = '\0';
        char *slash = strrchr(self, '/');
        if (slash)
            *slash = '\0';
        snprintf(a->preload, sizeof(a->preload), "%s/%s", self, VMHOST_JAIL_PRELOAD_NAME);
        a->cfg.jail.preload = a->preload;
    }
    return 0;
}

static int cmd_build_image(struct vmhost_args *a)
{
    struct vmhost vh;
    char err[4096];
    /* Only airlock's own image boots here (the template snapshot), no
     * tenant's code: TCG's lack of a boundary does not matter. */
    a->cfg.allow_tcg = true;
    if (vmhost_init(&vh, &a->cfg, err, sizeof(err)) < 0) {
        fprintf(stderr, "airlock-vmhost: %s\n", err);
        return 1;
    }
    printf("image %s\n  kernel %s\n  initrd %s\n  rootfs %s\n  accel %s\n", vh.image.hash,
           vh.image.kernel, vh.image.initrd, vh.image.rootfs, vm_accel_name(vh.accel));
    vmhost_shutdown(&vh);
    return 0;
}

static int cmd_serve(struct vmhost_args *a)
{
    char err[4096];
    char *internal_token = NULL;
    struct nats_credentials nats_creds = { 0 };
    if (a->nats_url &&
        nats_credentials_configure(a->nats_creds_file, &nats_creds, err, sizeof(err)) < 0) {
        fprintf(stderr, "airlock-vmhost: %s\n", err);
        return 1;
    }
    struct tls_credentials *tls = NULL;
    int rc = 1;
    if (internal_token_configure(a->token_file, &internal_token, err, sizeof(err)) < 0 ||
        tls_credentials_configure(&a->tls_files, PEER_VMHOST, false, &tls, err, sizeof(err)) < 0) {
        fprintf(stderr, "airlock-vmhost: %s\n", err);
        goto cleanup;
    }
    if (tls && strcmp(tls_credentials_identity(tls)->node, a->node_id) != 0) {
        fprintf(stderr, "airlock-vmhost: certificate %s is for node %s, this is node %s"
                        " (--node-id)\n", tls_credentials_files(tls)->cert,
                tls_credentials_identity(tls)->node, a->node_id);
        goto cleanup;
    }
    a->cfg.internal_token = internal_token;
    a->cfg.internal_tls = tls;
    nats_credentials_use_tls(&nats_creds, tls);
    sigset_t stop_signals;
    stop_signals_block(&stop_signals);

    struct vmhost vh;
    if (vmhost_init(&vh, &a->cfg, err, sizeof(err)) < 0) {
        fprintf(stderr, "airlock-vmhost: %s\n", err);
        goto cleanup;
    }
    /* The sandboxes an earlier vmhost left (build-image leaves them be),
     * then the snapshots none of them holds. */
    sandbox_adopt_all(&vh);
    template_registry_sweep(&vh);
    vh.metrics = vmhost_metrics_new(&vh);
    struct metrics_server *metrics = NULL;
    struct rpc_server *srv = NULL;
    if ((a->metrics_listen &&
         !(metrics = metrics_server_start(vmhost_metrics_registry(vh.metrics), a->metrics_listen,
                                          err, sizeof(err)))) ||
        !(srv = vmhost_service_start(&vh, a->cfg.listen, err, sizeof(err)))) {
        fprintf(stderr, "airlock-vmhost: %s\n", err);
        metrics_server_stop(metrics);
        vmhost_shutdown(&vh);
        vmhost_metrics_free(vh.metrics);
        goto cleanup;
    }
    struct nats_agent *agent = NULL;
    if (a->nats_url) {
        agent = nats_agent_start(&vh, a->nats_url, &nats_creds, a->node_id, a->cfg.listen, err,
                                 sizeof(err));
        if (!agent) {
            fprintf(stderr, "airlock-vmhost: %s\n", err);
            metrics_server_stop(metrics);
            rpc_server_stop(srv);
            vmhost_shutdown(&vh);
            vmhost_metrics_free(vh.metrics);
            goto cleanup;
        }
    }
    log_info("vmhost listening", "addr=%s data_dir=%s metrics=%s", a->cfg.listen, a->cfg.data_dir,
             a->metrics_listen ? a->metrics_listen : "-");
    int sig = stop_signals_wait(&stop_signals, tls_credentials_refresh_cb, tls);
    log_info("vmhost stopping", "signal=%d", sig);
    nats_agent_stop(agent);
    metrics_server_stop(metrics);
    rpc_server_stop(srv);
    vmhost_shutdown(&vh);
    vmhost_metrics_free(vh.metrics);
    rc = 0;
cleanup:
    tls_credentials_free(tls);
    free(internal_token);
    nats_credentials_free(&nats_creds);
    return rc;
}

int main(int argc, char **argv)
{
    log_init("vmhost", getenv("AIRLOCK_DEBUG") ? LOG_DEBUG : LOG_INFO);
    /* A guest or client that vanishes mid-write must not kill the agent. */
    signal(SIGPIPE, SIG_IGN);
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    struct vmhost_args a = { 0 };
    if (parse_args(argc - 1, argv + 1, &a) < 0)
        return 2;
    if (strcmp(cmd, "serve") == 0)
        return cmd_serve(&a);
    if (strcmp(cmd, "build-image") == 0)
        return cmd_build_image(&a);
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        usage(stdout);
        return 0;
    }
    fprintf(stderr, "airlock-vmhost: unknown command \"%s\"\n", cmd);
    usage(stderr);
    return 2;
}
