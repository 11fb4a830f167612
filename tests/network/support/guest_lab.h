/* egress from inside a real guest (the test_guest_egress* programs): a real
 * airlock-vmhost (with --egress) runs sandbox microVMs whose virtio-net NIC
 * sits on the TAP of vmhost's sandbox namespace; a real airlock-egress
 * process serves that namespace and dials out of netlab's uplink
 * namespace, whose only neighbours are the test's servers (netlab.h).
 * Techniques run as programs in the guest (curl, getent, python3, the
 * helper scripts below) and must fail, be logged by egress, and never
 * reach an upstream server. */
#ifndef AIRLOCK_GUEST_LAB_H
#define AIRLOCK_GUEST_LAB_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <cmocka.h>

#include "egress.pb-c.h"
#include "itest.h"
#include "rpc_client.h"
#include "sandbox_net.h"

#define GUEST_LAB_CALL_TIMEOUT_MS 10000
/* curl's own bound: a denial is a reset or NXDOMAIN within milliseconds, so
 * this only keeps a wrong "allow" from hanging the test. */
#define GUEST_CURL "curl -sS --http0.9 --max-time 20 "

/* In the guest after setup:
 *   python3 /tmp/dnsq.py NAME SERVER udp|tcp [QTYPE [EDNS_PAD [QDCOUNT]]]
 *       prints "rcode=N answers=M" (exit 0 on NOERROR, 1 otherwise),
 *       "no answer" (4) or "reset" (3)
 *   python3 /tmp/tcpsend.py HOST PORT HEX[,HEX...] [STEP]
 *       sends each segment (in STEP-byte writes 50 ms apart when given),
 *       reading one answer between segments; prints what came back
 *       (exit 0), "reset" (3), "closed" (4, EOF with nothing) */

struct guest_lab {
    struct itest_vmhost vh;
    bool vh_started;
    pid_t egress_pid;
    char dir[64];          /* egress socket and log */
    char egress_addr[128];
    struct rpc_channel *egress;
    char sandbox_id[32];   /* the sandbox setup made (unique per run) */
    bool sandbox_created;
};

extern struct guest_lab lab;

/* Runs a program's tests (77, skipped, without root) with the lab set up
 * around them: netlab's uplink, airlock-egress, airlock-vmhost --egress,
 * and a sandbox whose policy is guest_lab_policy() with the helper scripts
 * installed. Teardown also runs at exit and on SIGINT/SIGTERM. */
#define GUEST_LAB_RUN(tests) guest_lab_run(__FILE__, tests, sizeof(tests) / sizeof(*(tests)))
int guest_lab_run(const char *program, const struct CMUnitTest *tests, size_t n);
int guest_lab_teardown(void);

/* airlock-egress as a process of the test's own, on lab.dir's socket
 * (kept across a restart). stop: sig SIGTERM must end it with status 0;
 * SIGKILL is a crash. */
int guest_lab_egress_start(void);
int guest_lab_egress_stop(int sig);

/* The sandboxes' policy: allowed.test, flip.test (rebinding), loop.test,
 * metadata.test and uplink.test (names answering internal addresses),
 * extra (may be NULL), on ports 80 and 443 only; everything else denied.
 * Points into static storage. */
void guest_lab_policy(Airlock__Egress__V1__Policy *p, const char *extra);

/* CreateSandbox with that id and policy (NULL: none, i.e. deny all), then
 * the helper scripts. try: only the create, its status and *details
 * (malloc'd or NULL). */
int guest_lab_create_sandbox(const char *id, const Airlock__Egress__V1__Policy *p);
grpc_status_code guest_lab_try_create(const char *id, const Airlock__Egress__V1__Policy *p,
                                      char **details);

/* vmhost's SetSandboxPolicy; *details (may be NULL) gets the message. */
grpc_status_code guest_lab_set_policy(const char *id, const Airlock__Egress__V1__Policy *p,
                                      char **details);

/* sh -c script in sandbox id (guest_sh: the lab's sandbox): its exit code
 * and, when out is not NULL, its stdout. */
int guest_sh_in(const char *id, const char *script, char *out, size_t outlen);
int guest_sh(const char *script, char *out, size_t outlen);

/* The connection log: the newest seq, and whether an entry after mark of
 * that protocol ("tcp", "dns") whose name or address is what has that
 * decision and reason (NULL: any). Prints the log when not. */
uint64_t guest_log_mark_in(const char *id);
bool guest_logged_in(const char *id, uint64_t mark, const char *protocol, const char *what,
                     bool allowed, const char *reason);
uint64_t guest_log_mark(void);
bool guest_logged(uint64_t mark, const char *protocol, const char *what, bool allowed,
                  const char *reason);
/* Whether there is an entry for (protocol, what) after mark, and its
 * bytes_sent; entries of that protocol after mark. */
bool guest_log_entry(uint64_t mark, const char *protocol, const char *what,
                     uint64_t *bytes_sent);
size_t guest_log_count(uint64_t mark, const char *protocol);

/* A connection the guest must not get: the command fails, egress logged
 * the denial (tcp, what, reason) and no upstream server saw a connection. */
void expect_tcp_denied(const char *script, const char *what, const char *reason);

/* The lab sandbox namespace's drop counters. */
struct sandbox_net_counters guest_counters(void);

/* Lower-case hex of len bytes into out (2 * len + 1 bytes). */
void guest_hex(const void *data, size_t len, char *out);

#endif
