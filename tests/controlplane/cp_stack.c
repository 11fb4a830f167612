#include "cp_stack.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "cp_pki.h"
#include "fsutil.h"
#include "internal_token.h"
#include "netlab.h"
#include "netns.h"
#include "pg_test.h"
#include "random_id.h"
#include "test_proc.h"
#include "tls_credentials.h"

#define NATS_SERVER "/usr/sbin/nats-server"
#define CP_START_TIMEOUT_MS 60000

static struct cp_stack *cp_current;

static bool alive(pid_t pid)
{
    return pid > 0 && waitpid(pid, NULL, WNOHANG) == 0;
}

/* A new internal token in DIR/internal-token (0600), exported as
 * AIRLOCK_INTERNAL_TOKEN_FILE for everything started from here on. */
static int make_internal_token(struct cp_stack *st)
{
    char err[512], line[sizeof(st->internal_token) + 1];
    if (random_id("", 24, st->internal_token, sizeof(st->internal_token)) < 0 ||
        fs_path(st->token_file, sizeof(st->token_file), "%s/internal-token", st->dir) < 0) {
        fprintf(stderr, "cp_stack: cannot make the internal token\n");
        return -1;
    }
    snprintf(line, sizeof(line), "%s\n", st->internal_token);
    if (fs_write_file_replace(st->token_file, line, strlen(line), 0600, err, sizeof(err)) < 0) {
        fprintf(stderr, "cp_stack: %s\n", err);
        return -1;
    }
    setenv(INTERNAL_TOKEN_ENV, st->token_file, 1);
    return 0;
}

/* Runs one of make up's scripts (argv: /bin/sh SCRIPT ARGS...) to its end. */
static int run_script(struct cp_stack *st, const char *const argv[], const char *log_name)
{
    pid_t pid = test_spawn(argv, st->dir, log_name);
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0) {
        fprintf(stderr, "cp_stack: %s failed\n", argv[1]);
        test_print_log_tail(st->dir, log_name);
        return -1;
    }
    return 0;
}

/* Every node a stack may run, in order (cp_stack.nodes). */
static const char *const node_ids[CP_STACK_MAX_NODES] = { CP_NODE_ID, CP_OTHER_NODE_ID,
                                                          CP_THIRD_NODE_ID };

/* AIRLOCK_INTERNAL_CA/_CERT/_KEY name node id's vmhost identity: what this
 * process (itest's client of that node's vmhost) and what it starts from
 * here on present. */
static int act_as_node(const struct cp_stack *st, const char *id)
{
    char name[64];
    struct cp_tls node;
    snprintf(name, sizeof(name), "vmhost-%s", id);
    if (cp_tls_of(st->pki_dir, name, &node) < 0)
        return -1;
    setenv(INTERNAL_CA_ENV, node.ca, 1);
    setenv(INTERNAL_CERT_ENV, node.cert, 1);
    setenv(INTERNAL_KEY_ENV, node.key, 1);
    return 0;
}

/* The internal PKI, as make up makes it (scripts/internal-pki.sh): a CA and
 * a certificate for nats-server and each identity, every node's whether it
 * runs or not (tests use the others'). This process and what it starts
 * from here on act as CP_NODE_ID's vmhost (as vmhostctl does on a node);
 * every service gets its own with flags. */
static int make_pki(struct cp_stack *st)
{
    if (fs_path(st->pki_dir, sizeof(st->pki_dir), "%s/pki", st->dir) < 0)
        return -1;
    const char *argv[] = { "/bin/sh", AIRLOCK_INTERNAL_PKI_SCRIPT, st->pki_dir, "nats",
                           "gateway", "scheduler", "vault", "vmhost:" CP_NODE_ID,
                           "egress:" CP_NODE_ID, "vmhost:" CP_OTHER_NODE_ID,
                           "egress:" CP_OTHER_NODE_ID, "vmhost:" CP_THIRD_NODE_ID,
                           "egress:" CP_THIRD_NODE_ID, NULL };
    if (run_script(st, argv, "pki.log") < 0)
        return -1;
    return act_as_node(st, CP_NODE_ID);
}

size_t cp_stack_tls_append(const struct cp_stack *st, const char *name, struct cp_tls *t,
                           const char **argv, size_t n)
{
    if (!st->pki_dir[0] || cp_tls_of(st->pki_dir, name, t) < 0)
        return n; /* a plaintext stack */
    const char *flags[] = { "--internal-ca", t->ca, "--internal-cert", t->cert,
                            "--internal-key", t->key };
    memcpy(argv + n, flags, sizeof(flags));
    return n + sizeof(flags) / sizeof(*flags);
}

/* One user per identity with only its subjects, as make up makes them
 * (scripts/nats-users.sh): the scheduler, the gateway, and every node the
 * stack may run (one that does not run: a user only tests use). The
 * passwords go into a config file (0600), never on a command line. With
 * TLS as the nats identity of the stack's PKI. */
static int write_nats_config(struct cp_stack *st, char *path, size_t pathlen)
{
    if (fs_path(st->nats_creds_dir, sizeof(st->nats_creds_dir), "%s/nats-credentials",
                st->dir) < 0 ||
        fs_path(path, pathlen, "%s/nats.conf", st->dir) < 0)
        return -1;
    const char *argv[12] = { "/bin/sh", AIRLOCK_NATS_USERS_SCRIPT };
    size_t n = 2;
    if (st->pki_dir[0]) {
        argv[n++] = "--tls";
        argv[n++] = st->pki_dir;
    }
    const char *rest[] = { st->nats_creds_dir, path, CP_NODE_ID, CP_OTHER_NODE_ID,
                           CP_THIRD_NODE_ID, NULL };
    memcpy(argv + n, rest, sizeof(rest));
    return run_script(st, argv, "nats-users.log");
}

int cp_stack_nats_credentials(const struct cp_stack *st, const char *user, char *out,
                              size_t outlen)
{
    return fs_path(out, outlen, "%s/%s", st->nats_creds_dir, user);
}

int cp_stack_start_nats(struct cp_stack *st)
{
    if (access(NATS_SERVER, X_OK) != 0)
        return 77;
    char conf[PATH_MAX], port[16] = "-1"; /* a free one the first time */
    if (write_nats_config(st, conf, sizeof(conf)) < 0)
        return -1;
    /* Again: on its port, where the clients reconnect. */
    if (st->nats_url[0])
        snprintf(port, sizeof(port), "%s", strrchr(st->nats_url, ':') + 1);
    const char *argv[] = { NATS_SERVER, "-c", conf, "-a", "127.0.0.1", "-p", port,
                       "--ports_file_dir", st->dir, NULL };
    st->nats_pid = test_spawn(argv, st->dir, "nats.log");
    char ports[PATH_MAX];
    fs_path(ports, sizeof(ports), "%s/nats-server_%d.ports", st->dir, (int)st->nats_pid);
    int64_t deadline = clock_monotonic_ms() + CP_START_TIMEOUT_MS;
    while (clock_monotonic_ms() < deadline && alive(st->nats_pid)) {
        char *text = NULL;
        if (fs_read_file(ports, 65536, &text, NULL, NULL, 0) == 0) {
            /* {"nats":["tls://127.0.0.1:PORT"],...}: the URL is nats://
             * as make up's, the clients' internal TLS says TLS. */
            char *url = strstr(text, "://");
            if (url) {
                url += 3;
                snprintf(st->nats_url, sizeof(st->nats_url), "nats://%.*s",
                         (int)strcspn(url, "\""), url);
                free(text);
                return 0;
            }
        }
        free(text);
        usleep(50 * 1000);
    }
    fprintf(stderr, "cp_stack: nats-server did not start\n");
    test_print_log_tail(st->dir, "nats.log");
    return -1;
}

/* Polls until path exists, pid dies or the start timeout passes. */
static int wait_for_socket(pid_t pid, const char *path, struct cp_stack *st, const char *log_name)
{
    int64_t deadline = clock_monotonic_ms() + CP_START_TIMEOUT_MS;
    while (clock_monotonic_ms() < deadline && alive(pid)) {
        if (access(path, F_OK) == 0)
            return 0;
        usleep(50 * 1000);
    }
    fprintf(stderr, "cp_stack: %s did not come up\n", log_name);
    test_print_log_tail(st->dir, log_name);
    return -1;
}

/* A free 127.0.0.1 port for a service's --metrics-listen, chosen at its
 * first start and kept across restarts. */
static const char *metrics_addr(char *addr, size_t len)
{
    if (!*addr)
        snprintf(addr, len, "127.0.0.1:%d", test_free_port());
    return addr;
}

int cp_stack_start_vault(struct cp_stack *st)
{
    char key[PATH_MAX];
    fs_path(st->vault_addr, sizeof(st->vault_addr), "unix:%s/vault.sock", st->dir);
    fs_path(key, sizeof(key), "%s/vault-master.key", st->dir);
    unlink(st->vault_addr + 5); /* a killed one's socket: readiness is its reappearance */
    struct cp_tls tls;
    const char *argv[20] = { AIRLOCK_VAULT_BIN, "--database", st->pg.url, "--master-key-file", key,
                             "--listen", st->vault_addr, "--internal-token-file", st->token_file,
                             "--metrics-listen",
                             metrics_addr(st->vault_metrics, sizeof(st->vault_metrics)) };
    argv[cp_stack_tls_append(st, "vault", &tls, argv, 11)] = NULL;
    st->vault_pid = test_spawn(argv, st->dir, "vault.log");
    return wait_for_socket(st->vault_pid, st->vault_addr + 5, st, "vault.log");
}

/* egress dials out of a namespace with only a loopback device that is
 * down: an allowed connection fails there instead of leaving the machine,
 * and its resolver (127.0.0.1:53 in that namespace) does not exist. With
 * the test internet, out of netlab's uplink: only the test's servers. */
static int make_uplink(struct cp_stack *st)
{
    char err[256];
    if (st->internet) {
        if (netlab_uplink_up() < 0) {
            fprintf(stderr, "cp_stack: cannot build the test internet\n");
            return -1;
        }
        snprintf(st->uplink_ns, sizeof(st->uplink_ns), "%s", NETLAB_UPLINK_NS);
        return upstream_start(&st->upstream, st->dir, NETLAB_INET_NS, NETLAB_WEB2,
                              CP_UPSTREAM_HOST, CP_UPSTREAM_HTTP_PORT, CP_UPSTREAM_HTTPS_PORT);
    }
    snprintf(st->uplink_ns, sizeof(st->uplink_ns), "airlock-cpup-%d", (int)getpid());
    if (netns_create(st->uplink_ns, err, sizeof(err)) < 0) {
        fprintf(stderr, "cp_stack: %s\n", err);
        st->uplink_ns[0] = '\0';
        return -1;
    }
    return 0;
}

int cp_stack_start_egress(struct cp_stack *st, struct cp_node *node)
{
    char ns_path[128], state_dir[PATH_MAX], suffix[32] = ""; /* "-" and a node id */
    if (node != &st->nodes[0])
        snprintf(suffix, sizeof(suffix), "-%s", node->id);
    netns_path(st->uplink_ns, ns_path, sizeof(ns_path));
    fs_path(node->egress_addr, sizeof(node->egress_addr), "unix:%s/egress%s.sock", st->dir,
            suffix);
    fs_path(state_dir, sizeof(state_dir), "%s/egress-state%s", st->dir, suffix);
    snprintf(node->egress_log, sizeof(node->egress_log), "egress%s.log", suffix);
    unlink(node->egress_addr + 5); /* a stopped one's socket: readiness is its reappearance */
    char identity[64];
    snprintf(identity, sizeof(identity), "egress-%s", node->id);
    struct cp_tls tls;
    /* With vault and a state dir, as make up and the chart run it: every
     * attach issues a sandbox CA that the guest installs at its session
     * init, kept across an egress restart. */
    const char *argv[24] = { AIRLOCK_EGRESS_BIN,
                             "--listen", node->egress_addr,
                             "--upstream-dns", st->internet ? NETLAB_DNS : "127.0.0.1:53",
                             "--uplink-netns", ns_path,
                             "--vault", st->vault_addr,
                             "--state-dir", state_dir,
                             "--internal-token-file", st->token_file,
                             "--metrics-listen",
                             metrics_addr(node->egress_metrics, sizeof(node->egress_metrics)) };
    size_t n = cp_stack_tls_append(st, identity, &tls, argv, 15);
    if (st->internet) {
        argv[n++] = "--upstream-ca";
        argv[n++] = st->upstream.ca_path;
    }
    argv[n] = NULL;
    node->egress_pid = test_spawn(argv, st->dir, node->egress_log);
    return wait_for_socket(node->egress_pid, node->egress_addr + 5, st, node->egress_log);
}

/* Polls until cond holds, the process dies or the start timeout passes. */
static int wait_until(pid_t pid, bool (*cond)(struct cp_stack *), struct cp_stack *st,
                      const char *log_name)
{
    int64_t deadline = clock_monotonic_ms() + CP_START_TIMEOUT_MS;
    while (clock_monotonic_ms() < deadline && alive(pid)) {
        if (cond(st))
            return 0;
        usleep(50 * 1000);
    }
    fprintf(stderr, "cp_stack: %s did not come up\n", log_name);
    test_print_log_tail(st->dir, log_name);
    return -1;
}

static bool scheduler_ready(struct cp_stack *st)
{
    char path[PATH_MAX], *key = NULL;
    fs_path(path, sizeof(path), "%s/admin-key", st->dir);
    if (fs_read_file(path, 4096, &key, NULL, NULL, 0) < 0)
        return false;
    snprintf(st->admin_key, sizeof(st->admin_key), "%.*s", (int)strcspn(key, "\n"), key);
    free(key);
    return access(st->scheduler_addr + 5, F_OK) == 0;
}

static bool standby_ready(struct cp_stack *st)
{
    return access(st->standby_addr + 5, F_OK) == 0;
}

static bool gateway_ready(struct cp_stack *st)
{
    return test_port_answers(atoi(strrchr(st->gateway_url, ':') + 1));
}

static void cp_cleanup(void)
{
    if (cp_current)
        cp_stack_stop(cp_current);
}

int cp_stack_start_scheduler(struct cp_stack *st, bool standby)
{
    char *addr = standby ? st->standby_addr : st->scheduler_addr;
    const char *log = standby ? "scheduler2.log" : "scheduler.log";
    fs_path(addr, sizeof(st->scheduler_addr), "unix:%s/%s", st->dir,
            standby ? "scheduler2.sock" : "scheduler.sock");
    unlink(addr + 5); /* a killed one's socket: readiness is its reappearance */
    char creds[PATH_MAX];
    cp_stack_nats_credentials(st, "scheduler", creds, sizeof(creds));
    struct cp_tls tls;
    const char *argv[48] = { AIRLOCK_SCHEDULER_BIN, "--data-dir", st->dir, "--listen", addr,
                             "--database", st->pg.url, "--nats", st->nats_url,
                             "--internal-token-file", st->token_file,
                             "--nats-credentials-file", creds };
    size_t n = cp_stack_tls_append(st, "scheduler", &tls, argv, 13);
    if (!standby) {
        argv[n++] = "--metrics-listen";
        argv[n++] = metrics_addr(st->scheduler_metrics, sizeof(st->scheduler_metrics));
    }
    for (size_t i = 0; st->scheduler_args && st->scheduler_args[i] && n < 47; i++)
        argv[n++] = st->scheduler_args[i];
    argv[n] = NULL;
    pid_t *pid = standby ? &st->standby_pid : &st->scheduler_pid;
    *pid = test_spawn(argv, st->dir, log);
    return wait_until(*pid, standby ? standby_ready : scheduler_ready, st, log);
}

int cp_stack_start_gateway(struct cp_stack *st)
{
    char creds[PATH_MAX];
    cp_stack_nats_credentials(st, "gateway", creds, sizeof(creds));
    struct cp_tls tls;
    const char *gw[24] = { AIRLOCK_GATEWAY_BIN, "--listen", st->gateway_listen, "--scheduler",
                           st->scheduler_addr, "--nats", st->nats_url, "--vault", st->vault_addr,
                           "--grpc-listen", st->grpc_addr, "--internal-token-file",
                           st->token_file, "--nats-credentials-file", creds };
    gw[cp_stack_tls_append(st, "gateway", &tls, gw, 15)] = NULL;
    st->gateway_pid = test_spawn(gw, st->dir, "gateway.log");
    return wait_until(st->gateway_pid, gateway_ready, st, "gateway.log");
}

/* Starts node's egress and vmhost, joined to NATS as node->id, with the
 * options' vmhost flags. itest's client of the vmhost presents that node's
 * identity (a vmhost takes its own API's calls from its own node only). */
static int start_node(struct cp_stack *st, struct cp_node *node, const char *const *vmhost_extra)
{
    if (cp_stack_start_egress(st, node) < 0)
        return -1;
    char identity[64], user[64];
    snprintf(identity, sizeof(identity), "vmhost-%s", node->id);
    snprintf(user, sizeof(user), "node-%s", node->id);
    cp_stack_nats_credentials(st, user, node->nats_creds, sizeof(node->nats_creds));
    const char *args[] = { "--nats",   st->nats_url,      "--node-id", node->id,
                           "--egress", node->egress_addr, "--internal-token-file",
                           st->token_file, "--nats-credentials-file", node->nats_creds,
                           "--metrics-listen",
                           metrics_addr(node->vmhost_metrics, sizeof(node->vmhost_metrics)) };
    size_t n = sizeof(args) / sizeof(*args);
    memcpy(node->vmhost_args, args, sizeof(args));
    n = cp_stack_tls_append(st, identity, &node->vmhost_tls, node->vmhost_args, n);
    if (st->snapshot_store[0]) {
        node->vmhost_args[n++] = "--snapshot-store";
        node->vmhost_args[n++] = st->snapshot_store;
    }
    /* Nodes on one machine need namespace names of their own (a sandbox
     * migrating lives on two at once); the first keeps the default. */
    if (strcmp(node->id, CP_NODE_ID) != 0) {
        snprintf(node->netns_prefix, sizeof(node->netns_prefix), "airlock-%s-", node->id);
        node->vmhost_args[n++] = "--netns-prefix";
        node->vmhost_args[n++] = node->netns_prefix;
    }
    for (size_t i = 0; vmhost_extra && vmhost_extra[i]; i++) {
        /* Never cut silently: a dropped flag changes what is measured. */
        if (i == CP_STACK_MAX_VMHOST_ARGS) {
            fprintf(stderr, "cp_stack: more than %d extra vmhost arguments\n",
                    CP_STACK_MAX_VMHOST_ARGS);
            return -1;
        }
        node->vmhost_args[n++] = vmhost_extra[i];
    }
    node->vmhost_args[n] = NULL;
    if (st->pki_dir[0] && act_as_node(st, node->id) < 0)
        return -1;
    int rc = itest_vmhost_start(&node->vmhost, node->vmhost_args);
    /* From here on this process acts as the first node again. */
    if (st->pki_dir[0] && act_as_node(st, CP_NODE_ID) < 0)
        return -1;
    return rc;
}

int cp_stack_start(struct cp_stack *st, const struct cp_stack_options *opts)
{
    static const struct cp_stack_options defaults;
    if (!opts)
        opts = &defaults;
    memset(st, 0, sizeof(*st));
    st->scheduler_args = opts->scheduler_args;
    st->internet = opts->internet;
    st->n_nodes = opts->nodes ? opts->nodes : 1;
    if (st->n_nodes > CP_STACK_MAX_NODES) {
        fprintf(stderr, "cp_stack: %zu nodes, at most %d\n", st->n_nodes, CP_STACK_MAX_NODES);
        return -1;
    }
    for (size_t i = 0; i < st->n_nodes; i++)
        st->nodes[i].id = node_ids[i];
    if (test_temp_dir(st->dir, sizeof(st->dir), "airlock-cp") < 0)
        return -1;
    if (opts->shared_store &&
        (snprintf(st->snapshot_store, sizeof(st->snapshot_store), "%s/snapshot-store", st->dir) >=
             (int)sizeof(st->snapshot_store) ||
         mkdir(st->snapshot_store, 0700) < 0)) {
        fprintf(stderr, "cp_stack: cannot make %s/snapshot-store\n", st->dir);
        return -1;
    }
    cp_current = st;
    test_cleanup_install(cp_cleanup);
    if (make_internal_token(st) < 0 || (!opts->plaintext && make_pki(st) < 0))
        return -1;
    int rc = pg_test_start(&st->pg, st->dir);
    if (rc == 0)
        rc = cp_stack_start_nats(st);
    if (rc == 0)
        rc = cp_stack_start_vault(st);
    if (rc == 0)
        rc = make_uplink(st);
    if (rc != 0)
        return rc;
    for (size_t i = 0; i < st->n_nodes; i++)
        if (start_node(st, &st->nodes[i], opts->vmhost_args) < 0)
            return -1;
    /* After itest installed its handlers: ours stop the whole stack. */
    test_cleanup_install(cp_cleanup);
    if (cp_stack_start_scheduler(st, false) < 0)
        return -1;
    int port = test_free_port();
    snprintf(st->gateway_listen, sizeof(st->gateway_listen), "127.0.0.1:%d", port);
    snprintf(st->gateway_url, sizeof(st->gateway_url), "http://127.0.0.1:%d", port);
    snprintf(st->grpc_addr, sizeof(st->grpc_addr), "127.0.0.1:%d", test_free_port());
    return cp_stack_start_gateway(st);
}

int cp_stack_stop(struct cp_stack *st)
{
    int rc = 0;
    if (test_stop_pid(&st->gateway_pid, st->dir, "gateway.log", true) < 0)
        rc = -1;
    if (test_stop_pid(&st->scheduler_pid, st->dir, "scheduler.log", true) < 0)
        rc = -1;
    if (test_stop_pid(&st->standby_pid, st->dir, "scheduler2.log", true) < 0)
        rc = -1;
    for (size_t i = st->n_nodes; i-- > 0;) {
        struct cp_node *node = &st->nodes[i];
        if (node->vmhost.data_dir[0] && itest_vmhost_stop(&node->vmhost) < 0)
            rc = -1;
        if (test_stop_pid(&node->egress_pid, st->dir, node->egress_log, true) < 0)
            rc = -1;
    }
    if (upstream_stop(&st->upstream) < 0)
        rc = -1;
    if (st->internet)
        netlab_down();
    else if (st->uplink_ns[0] && netns_delete(st->uplink_ns, NULL, 0) < 0)
        rc = -1;
    st->uplink_ns[0] = '\0';
    if (test_stop_pid(&st->vault_pid, st->dir, "vault.log", true) < 0)
        rc = -1;
    if (test_stop_pid(&st->nats_pid, st->dir, "nats.log", false) < 0)
        rc = -1;
    pg_test_stop(&st->pg);
    /* The file goes with the dir: what this process starts next (the
     * bench's other sections) runs without a token again. */
    if (st->token_file[0])
        unsetenv(INTERNAL_TOKEN_ENV);
    if (st->pki_dir[0]) {
        unsetenv(INTERNAL_CA_ENV);
        unsetenv(INTERNAL_CERT_ENV);
        unsetenv(INTERNAL_KEY_ENV);
    }
    st->pki_dir[0] = '\0';
    st->token_file[0] = '\0';
    if (st->dir[0] && !getenv("AIRLOCK_TEST_KEEP"))
        fs_remove_tree(st->dir, NULL, 0);
    st->dir[0] = '\0';
    if (cp_current == st)
        cp_current = NULL;
    return rc;
}
