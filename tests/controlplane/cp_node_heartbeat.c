/* Heartbeats for a node no vmhost runs: the stack's CP_OTHER_NODE_ID has
 * a NATS user and a PKI identity of its own (cp_stack.h), and with this
 * program beating for it the scheduler sees two live nodes. Its budget is
 * the arguments'; it answers no work (a create placed there fails with
 * "not answering"), so a test learns where the scheduler places from that.
 *
 * usage: cp_node_heartbeat NODE_ID VCPUS MEMORY_MB
 * Connects as NATS user node-NODE_ID with PKI identity vmhost-NODE_ID
 * (from cp_harness's environment), sends a heartbeat every second and
 * stops on SIGTERM or SIGINT. Prints "beating" once the first is sent. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "clock.h"
#include "cp_nats.h"
#include "cp_pki.h"
#include "node.pb-c.h"

static volatile sig_atomic_t stopping;

static void on_stop(int sig)
{
    (void)sig;
    stopping = 1;
}

static const char *env(const char *name)
{
    const char *v = getenv(name);
    if (!v || !*v) {
        fprintf(stderr, "cp_node_heartbeat: %s is not set (run under cp_harness)\n", name);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: cp_node_heartbeat NODE_ID VCPUS MEMORY_MB\n");
        return 2;
    }
    const char *node_id = argv[1];
    char creds[4200], identity[200], subject[256], addr[300];
    snprintf(creds, sizeof(creds), "%s/node-%s", env("AIRLOCK_TEST_NATS_CREDENTIALS_DIR"),
             node_id);
    snprintf(identity, sizeof(identity), "vmhost-%s", node_id);
    snprintf(subject, sizeof(subject), "airlock.node.%s.heartbeat", node_id);
    snprintf(addr, sizeof(addr), "unix:/nonexistent/%s.sock", node_id);
    struct cp_tls tls;
    if (cp_tls_of(env("AIRLOCK_TEST_PKI_DIR"), identity, &tls) < 0)
        return 1;
    natsConnection *nc = NULL;
    natsStatus st = cp_nats_connect(env("AIRLOCK_TEST_NATS_URL"), creds, &tls.files, NULL, NULL,
                                    &nc);
    if (st != NATS_OK) {
        fprintf(stderr, "cp_node_heartbeat: connect as node-%s: %s\n", node_id,
                natsStatus_GetText(st));
        return 1;
    }
    signal(SIGTERM, on_stop);
    signal(SIGINT, on_stop);
    Airlock__Node__V1__Heartbeat hb = AIRLOCK__NODE__V1__HEARTBEAT__INIT;
    hb.node_id = (char *)node_id;
    hb.vmhost_addr = addr;
    hb.accel = "tcg";
    hb.capacity = 64;
    hb.vcpus_limit = (uint32_t)atoi(argv[2]);
    hb.memory_limit_mb = (uint64_t)atoll(argv[3]);
    hb.free_memory_mb = hb.memory_limit_mb;
    /* Fixed: a new value would tell the scheduler the node restarted. */
    hb.started_unix_ms = clock_realtime_ms();
    int rc = 0;
    for (bool first = true; !stopping; first = false) {
        hb.sent_unix_ms = clock_realtime_ms();
        uint8_t buf[512];
        size_t len = airlock__node__v1__heartbeat__pack(&hb, buf);
        if (natsConnection_Publish(nc, subject, buf, (int)len) != NATS_OK ||
            natsConnection_FlushTimeout(nc, 5000) != NATS_OK) {
            fprintf(stderr, "cp_node_heartbeat: publish on %s failed\n", subject);
            rc = 1;
            break;
        }
        if (first) {
            printf("beating\n");
            fflush(stdout);
        }
        sleep(1); /* a signal cuts it short */
    }
    natsConnection_Destroy(nc);
    return rc;
}
