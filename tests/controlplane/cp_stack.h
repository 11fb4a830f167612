/* A whole control plane for tests, every part real: PostgreSQL (initdb in
 * a temp dir, unix socket only), nats-server (random port), airlock-vault,
 * airlock-egress (dialing out of an empty network namespace of its own, so
 * nothing a sandbox does can leave the machine), airlock-vmhost
 * (tests/integration/support/itest, joined to NATS), airlock-scheduler and
 * airlock-gateway on free 127.0.0.1 ports (REST and the public gRPC API).
 * One node (an egress and a vmhost) by default, CP_NODE_ID; with
 * cp_stack_options.nodes up to CP_STACK_MAX_NODES, a local cluster: node i
 * is cp_stack.nodes[i] (CP_NODE_ID, CP_OTHER_NODE_ID, CP_THIRD_NODE_ID),
 * each with its own vmhost data directory (itest's), egress socket, log and
 * state dir, identities and NATS user.
 * vault, the scheduler and every egress and vmhost serve Prometheus
 * /metrics on a free 127.0.0.1 port each (--metrics-listen; cp_harness
 * exports them), kept across their restarts.
 * Always with a fresh internal token (internal_token.h): every service gets
 * --internal-token-file, and
 * AIRLOCK_INTERNAL_TOKEN_FILE is set in this process's environment so what
 * it starts later (a test's own gateway, vmhostctl) presents it too.
 * nats-server has a user per identity with only its subjects, as make up
 * writes them: DIR/nats-credentials/{scheduler,gateway,node-CP_NODE_ID,
 * node-CP_OTHER_NODE_ID,node-CP_THIRD_NODE_ID} ("user:password", 0400),
 * whether or not those nodes run; each service gets its own with
 * --nats-credentials-file.
 *
 * Unless plaintext (cp_stack_options), mutual TLS between the services as
 * make up runs them: the internal PKI (scripts/internal-pki.sh) is DIR/pki
 * (cp_pki.h), with every node's identities whether or not it runs: every
 * service gets its identity's --internal-ca/--internal-cert/--internal-key
 * (vmhost, which itest starts, and the tools a test runs against it,
 * through AIRLOCK_INTERNAL_CA/_CERT/_KEY in this process's environment:
 * node CP_NODE_ID's, as vmhostctl on a node; itest's own client of each
 * further node presents that node's).
 * nats-server serves TLS as `nats` and wants a client certificate of that
 * CA (nats-users.sh --tls).
 *
 * With the test internet (cp_stack_options.internet) egress dials out of
 * netlab's uplink namespace instead (netlab.h: its DNS and servers, nothing
 * else), trusts the test upstream's CA, and the upstream (upstream.h) serves
 * CP_UPSTREAM_HOST over HTTP and HTTPS there: a guest's requests to a bound
 * host reach it with the secret egress added.
 *
 * cp_stack_stop() stops each part this process started, by pid, in reverse
 * order, and removes the temp dir; it also runs at exit and on
 * SIGINT/SIGTERM, so a failing test leaks no process, VM or directory. */
#ifndef AIRLOCK_CP_STACK_H
#define AIRLOCK_CP_STACK_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

#include "cp_nats.h"
#include "cp_pki.h"
#include "itest.h"
#include "pg_test.h"
#include "upstream.h"

#define CP_STACK_MAX_VMHOST_ARGS 16
#define CP_STACK_MAX_NODES 3

/* The test internet's upstream: other.test resolves to NETLAB_WEB2 in
 * netlab's DNS; these ports are free there. */
#define CP_UPSTREAM_HOST "other.test"
#define CP_UPSTREAM_HTTP_PORT 8081
#define CP_UPSTREAM_HTTPS_PORT 8443

struct cp_stack_options {
    const char *const *scheduler_args; /* every scheduler's extra flags, NULL-terminated */
    const char *const *vmhost_args;    /* at most CP_STACK_MAX_VMHOST_ARGS, e.g. --warm-pool N */
    bool internet;                     /* netlab's namespaces and the upstream (above) */
    bool plaintext; /* no internal PKI: the services speak gRPC without TLS (the bench's
                       comparison) */
    unsigned nodes; /* egress + vmhost pairs, 1 (also for 0) to CP_STACK_MAX_NODES */
    bool shared_store; /* every vmhost suspends into DIR/snapshot-store, as make up's do
                          (docs/snapshot-store.md) */
};

/* One node of the stack. The first one's files keep the names a
 * one-node stack has always had (egress.sock, egress.log, egress-state);
 * another's carry its id (egress-ID.sock, egress-ID.log, egress-state-ID).
 * cp_harness hands node i to a test as AIRLOCK_TEST_NODE_<i>_ID,
 * _DATA_DIR, _VMHOST_ADDR, _VMHOST_PID, _VMHOST_LOG and _EGRESS_ADDR, and
 * their count as AIRLOCK_TEST_NODES. */
struct cp_node {
    const char *id;                 /* its --node-id */
    pid_t egress_pid;
    char egress_addr[PATH_MAX + 8]; /* unix:DIR/egress[-ID].sock */
    char egress_log[64];            /* in DIR */
    char nats_creds[PATH_MAX + 64]; /* node-ID's */
    struct cp_tls vmhost_tls;
    char netns_prefix[80];          /* airlock-ID- beside the first node: one machine */
    /* it joins NATS as node ID, uses its egress and the token, + the options' */
    const char *vmhost_args[23 + CP_STACK_MAX_VMHOST_ARGS];
    char vmhost_metrics[32];        /* 127.0.0.1:port of its /metrics, kept across restarts */
    char egress_metrics[32];
    struct itest_vmhost vmhost;     /* its data dir: itest's /tmp/airlock-itest-* */
};

struct cp_stack {
    char dir[PATH_MAX];           /* everything lives under here */
    char snapshot_store[PATH_MAX]; /* DIR/snapshot-store with shared_store, else "" */
    char token_file[PATH_MAX];    /* the internal token (0600) every part is given */
    char internal_token[64];
    char nats_creds_dir[PATH_MAX]; /* a "user:password" file per NATS user */
    char pki_dir[PATH_MAX];       /* the internal CA and every identity's files */
    struct pg_test pg;
    pid_t nats_pid;
    char nats_url[64];
    size_t n_nodes;
    struct cp_node nodes[CP_STACK_MAX_NODES]; /* [0]: CP_NODE_ID, the one-node stack's */
    pid_t vault_pid;
    char vault_addr[PATH_MAX + 8];
    char vault_metrics[32];       /* 127.0.0.1:port of its /metrics */
    char uplink_ns[64];           /* every egress dials from here: no route anywhere */
    bool internet;                /* netlab is up and egress dials from its uplink */
    struct upstream upstream;     /* with internet */
    const char *const *scheduler_args; /* extra flags of every scheduler, NULL-terminated */
    pid_t scheduler_pid;
    char scheduler_addr[PATH_MAX + 8];
    char scheduler_metrics[32];   /* the first replica's /metrics (the standby serves none) */
    pid_t standby_pid;            /* a second scheduler replica (cp_control.h), 0 = none */
    char standby_addr[PATH_MAX + 8];
    pid_t gateway_pid;
    char gateway_listen[64];
    char gateway_url[64];
    char grpc_addr[64];           /* the gateway's public gRPC API (127.0.0.1:port) */
    char admin_key[128];
};

/* 0, -1 after printing why, or 77 when PostgreSQL/nats-server are not
 * installed (the test is then skipped). */
/* Appends --internal-ca/-cert/-key with identity name's files ("gateway",
 * "vmhost-cp-node": the PKI's file names; t keeps them) to argv at n,
 * nothing in a plaintext stack; the new count. */
size_t cp_stack_tls_append(const struct cp_stack *st, const char *name, struct cp_tls *t,
                           const char **argv, size_t n);

int cp_stack_start(struct cp_stack *st, const struct cp_stack_options *opts);
/* -1 when some part did not stop cleanly (its log tail is printed). */
int cp_stack_stop(struct cp_stack *st);

/* For tests that restart parts (cp_control.h): (re)starts the scheduler
 * (standby: the second replica, on scheduler2.sock with log
 * scheduler2.log) or the gateway on its port, and waits until it answers. */
int cp_stack_start_scheduler(struct cp_stack *st, bool standby);
int cp_stack_start_gateway(struct cp_stack *st);
/* The path of NATS user's credentials file ("scheduler", "gateway",
 * "node-" CP_NODE_ID ...): 0, or -1 when it does not fit. */
int cp_stack_nats_credentials(const struct cp_stack *st, const char *user, char *out,
                              size_t outlen);
/* (Re)starts a node's egress on its socket and state dir (sandbox CAs
 * kept). */
int cp_stack_start_egress(struct cp_stack *st, struct cp_node *node);
/* (Re)starts nats-server (again on the port it had: st->nats_url) and
 * vault (on its socket); 77 when nats-server is not installed. */
int cp_stack_start_nats(struct cp_stack *st);
int cp_stack_start_vault(struct cp_stack *st);

#endif
