/* Runs a client test program (argv[1..]) against a real control plane
 * (cp_stack.h). The program gets AIRLOCK_URL (the gateway),
 * AIRLOCK_GRPC_ADDR (its public gRPC API) and AIRLOCK_ADMIN_KEY in its
 * environment, AIRLOCK_TEST_STACK_DIR (the logs),
 * AIRLOCK_TEST_CONTROL (cp_control.h: restart parts of the stack) and
 * AIRLOCK_TEST_SCHEDULER_ADDR, _NATS_URL, _VAULT_ADDR (to start another
 * gateway beside the stack's), AIRLOCK_INTERNAL_TOKEN_FILE (the stack's
 * internal token, which those APIs require: a gateway or vmhostctl started
 * by the test picks it up), AIRLOCK_TEST_NATS_CREDENTIALS_DIR (a
 * "user:password" file per NATS user, cp_stack.h) and
 * AIRLOCK_TEST_DATABASE_URL, AIRLOCK_TEST_PKI_DIR (the internal PKI:
 * ca.crt, NAME.crt/.key per identity; AIRLOCK_INTERNAL_CA/_CERT/_KEY
 * name the node's vmhost identity, as vmhostctl there uses it),
 * AIRLOCK_TEST_EGRESS_ADDR, _VMHOST_ADDR, _VMHOST_LOG, and _VMHOST_PID,
 * _GATEWAY_PID (to send them SIGHUP) — the first node's — and for every
 * node I of the stack (0 .. AIRLOCK_TEST_NODES-1; node 0 is the first)
 * AIRLOCK_TEST_NODE_<I>_ID, _DATA_DIR (its vmhost's), _VMHOST_ADDR,
 * _VMHOST_PID, _VMHOST_LOG, _EGRESS_ADDR; the harness exits with its
 * status, or 1 when some part of the stack did not stop cleanly.
 *
 * usage: cp_harness [--internet] [--nodes N] [--shared-store] [--vmhost-arg ARG]...
 *                   [--scheduler-arg ARG]... PROGRAM [ARGS...]
 * Each --scheduler-arg is passed to every scheduler the stack starts, each
 * --vmhost-arg to every vmhost. --nodes N: N nodes (cp_stack_options.nodes,
 * default 1). --shared-store: every vmhost suspends into one snapshot
 * store, AIRLOCK_TEST_SNAPSHOT_STORE (cp_stack_options.shared_store).
 * --internet: the stack's test internet
 * (cp_stack.h); the program also gets AIRLOCK_TEST_UPSTREAM_LOG (the
 * upstream's request log, a JSON line each), AIRLOCK_TEST_UPSTREAM_HOST and
 * AIRLOCK_TEST_UPSTREAM_HTTP_PORT/_HTTPS_PORT. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cp_control.h"
#include "cp_stack.h"

#define MAX_SCHEDULER_ARGS 16

static void export_int(const char *name, int value)
{
    char text[16];
    snprintf(text, sizeof(text), "%d", value);
    setenv(name, text, 1);
}

/* AIRLOCK_TEST_NODES and AIRLOCK_TEST_NODE_<i>_*: every node's. */
static void export_nodes(const struct cp_stack *st)
{
    export_int("AIRLOCK_TEST_NODES", (int)st->n_nodes);
    for (size_t i = 0; i < st->n_nodes; i++) {
        const struct cp_node *node = &st->nodes[i];
        char name[64];
#define NODE_ENV(suffix) (snprintf(name, sizeof(name), "AIRLOCK_TEST_NODE_%zu_" suffix, i), name)
        setenv(NODE_ENV("ID"), node->id, 1);
        setenv(NODE_ENV("DATA_DIR"), node->vmhost.data_dir, 1);
        setenv(NODE_ENV("VMHOST_ADDR"), node->vmhost.addr, 1);
        setenv(NODE_ENV("VMHOST_LOG"), node->vmhost.log_path, 1);
        export_int(NODE_ENV("VMHOST_PID"), (int)node->vmhost.pid);
        setenv(NODE_ENV("EGRESS_ADDR"), node->egress_addr, 1);
        setenv(NODE_ENV("VMHOST_METRICS"), node->vmhost_metrics, 1);
        setenv(NODE_ENV("EGRESS_METRICS"), node->egress_metrics, 1);
#undef NODE_ENV
    }
}

int main(int argc, char **argv)
{
    const char *scheduler_args[MAX_SCHEDULER_ARGS + 1] = { NULL };
    const char *vmhost_args[CP_STACK_MAX_VMHOST_ARGS + 1] = { NULL };
    struct cp_stack_options opts = { .scheduler_args = scheduler_args,
                                     .vmhost_args = vmhost_args };
    int n_sched = 0, n_vmhost = 0, first = 1;
    for (;;) {
        if (first < argc && strcmp(argv[first], "--internet") == 0) {
            opts.internet = true;
            first++;
        } else if (first < argc && strcmp(argv[first], "--shared-store") == 0) {
            opts.shared_store = true;
            first++;
        } else if (first + 1 < argc && strcmp(argv[first], "--nodes") == 0) {
            opts.nodes = (unsigned)atoi(argv[first + 1]);
            first += 2;
        } else if (first + 1 < argc && strcmp(argv[first], "--scheduler-arg") == 0 &&
                   n_sched < MAX_SCHEDULER_ARGS) {
            scheduler_args[n_sched++] = argv[first + 1];
            first += 2;
        } else if (first + 1 < argc && strcmp(argv[first], "--vmhost-arg") == 0 &&
                   n_vmhost < CP_STACK_MAX_VMHOST_ARGS) {
            vmhost_args[n_vmhost++] = argv[first + 1];
            first += 2;
        } else {
            break;
        }
    }
    if (first >= argc) {
        fprintf(stderr, "usage: cp_harness [--internet] [--nodes N] [--shared-store] "
                        "[--vmhost-arg ARG]... "
                        "[--scheduler-arg ARG]... PROGRAM [ARGS...]\n");
        return 2;
    }
    struct cp_stack st;
    struct cp_control control = { .fd = -1 };
    int rc = cp_stack_start(&st, &opts);
    if (rc == 0 && cp_control_open(&control, &st) < 0)
        rc = -1;
    if (rc != 0) {
        cp_stack_stop(&st);
        return rc == 77 ? 77 : 1;
    }
    setenv("AIRLOCK_URL", st.gateway_url, 1);
    setenv("AIRLOCK_GRPC_ADDR", st.grpc_addr, 1);
    setenv("AIRLOCK_ADMIN_KEY", st.admin_key, 1);
    const struct cp_node *first_node = &st.nodes[0];
    setenv("AIRLOCK_TEST_VMHOST_DIR", first_node->vmhost.data_dir, 1);
    setenv("AIRLOCK_TEST_STACK_DIR", st.dir, 1);
    setenv("AIRLOCK_TEST_SNAPSHOT_STORE", st.snapshot_store, 1);
    setenv("AIRLOCK_TEST_CONTROL", control.path, 1);
    /* For tests that start a gateway of their own beside the stack's. */
    setenv("AIRLOCK_TEST_SCHEDULER_ADDR", st.scheduler_addr, 1);
    setenv("AIRLOCK_TEST_NATS_URL", st.nats_url, 1);
    setenv("AIRLOCK_TEST_VAULT_ADDR", st.vault_addr, 1);
    /* Each service's /metrics (127.0.0.1:port); the first node's vmhost
     * and egress, every node's as AIRLOCK_TEST_NODE_<i>_VMHOST_METRICS,
     * _EGRESS_METRICS. */
    setenv("AIRLOCK_TEST_VAULT_METRICS", st.vault_metrics, 1);
    setenv("AIRLOCK_TEST_SCHEDULER_METRICS", st.scheduler_metrics, 1);
    setenv("AIRLOCK_TEST_VMHOST_METRICS", first_node->vmhost_metrics, 1);
    setenv("AIRLOCK_TEST_EGRESS_METRICS", first_node->egress_metrics, 1);
    setenv("AIRLOCK_TEST_NATS_CREDENTIALS_DIR", st.nats_creds_dir, 1);
    setenv("AIRLOCK_TEST_PKI_DIR", st.pki_dir, 1);
    setenv("AIRLOCK_TEST_EGRESS_ADDR", first_node->egress_addr, 1);
    setenv("AIRLOCK_TEST_VMHOST_ADDR", first_node->vmhost.addr, 1);
    setenv("AIRLOCK_TEST_VMHOST_LOG", first_node->vmhost.log_path, 1);
    export_int("AIRLOCK_TEST_VMHOST_PID", (int)first_node->vmhost.pid);
    export_nodes(&st);
    export_int("AIRLOCK_TEST_GATEWAY_PID", (int)st.gateway_pid);
    setenv("AIRLOCK_TEST_DATABASE_URL", st.pg.url, 1);
    if (opts.internet) {
        setenv("AIRLOCK_TEST_UPSTREAM_LOG", st.upstream.log_path, 1);
        setenv("AIRLOCK_TEST_UPSTREAM_HOST", CP_UPSTREAM_HOST, 1);
        export_int("AIRLOCK_TEST_UPSTREAM_HTTP_PORT", CP_UPSTREAM_HTTP_PORT);
        export_int("AIRLOCK_TEST_UPSTREAM_HTTPS_PORT", CP_UPSTREAM_HTTPS_PORT);
    }
    pid_t pid = fork();
    if (pid == 0) {
        execv(argv[first], argv + first);
        _exit(127);
    }
    int status = cp_control_serve(&control, &st, pid);
    cp_control_close(&control);
    int client_rc = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    if (client_rc != 0)
        fprintf(stderr, "cp_harness: %s failed (wait status %d); logs in %s\n", argv[first], status,
                st.dir);
    if (cp_stack_stop(&st) < 0 && client_rc == 0)
        client_rc = 1;
    return client_rc;
}
