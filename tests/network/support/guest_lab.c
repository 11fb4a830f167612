#include "guest_lab.h"

#include <setjmp.h>
#include <stdarg.h>

#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "egress_service.h"
#include "fsutil.h"
#include "itest_assert.h"
#include "netlab.h"
#include "test_proc.h"

#define EGRESS_START_TIMEOUT_MS 10000

struct guest_lab lab;

/* ---- the helper scripts ---- */

/* A DNS client that can ask any server, over UDP or TCP, any type, with an
 * EDNS padding option and extra questions. */
static const char dns_client_py[] =
    "import socket, struct, sys\n"
    "name, server, proto = sys.argv[1], sys.argv[2], sys.argv[3]\n"
    "qtype = int(sys.argv[4]) if len(sys.argv) > 4 else 1\n"
    "pad = int(sys.argv[5]) if len(sys.argv) > 5 else 0\n"
    "qdcount = int(sys.argv[6]) if len(sys.argv) > 6 else 1\n"
    "q = struct.pack('>HHHHHH', 0x1234, 0x0100, qdcount, 0, 0, 1 if pad else 0)\n"
    "qname = b''.join(bytes([len(p)]) + p.encode() for p in name.split('.')) + b'\\0'\n"
    "q += (qname + struct.pack('>HH', qtype, 1)) * qdcount\n"
    "if pad:\n"
    "    q += b'\\0' + struct.pack('>HHIH', 41, 4096, 0, 4 + pad)\n"
    "    q += struct.pack('>HH', 12, pad) + b'\\0' * pad\n"
    "try:\n"
    "    if proto == 'udp':\n"
    "        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
    "        s.settimeout(10)\n"
    "        s.sendto(q, (server, 53))\n"
    "        r = s.recv(4096)\n"
    "    else:\n"
    "        s = socket.create_connection((server, 53), timeout=10)\n"
    "        s.sendall(struct.pack('>H', len(q)) + q)\n"
    "        r = s.recv(4096)[2:]\n"
    "        if not r:\n"
    "            print('reset'); sys.exit(3)\n"
    "except ConnectionResetError:\n"
    "    print('reset'); sys.exit(3)\n"
    "except socket.timeout:\n"
    "    print('no answer'); sys.exit(4)\n"
    "print('rcode=%d answers=%d' % (r[3] & 15, struct.unpack('>H', r[6:8])[0]))\n"
    "sys.exit(0 if r[3] & 15 == 0 else 1)\n";

/* Sends hex segments over one TCP connection. */
static const char tcp_send_py[] =
    "import socket, sys, time\n"
    "host, port = sys.argv[1], int(sys.argv[2])\n"
    "segments = [bytes.fromhex(h) for h in sys.argv[3].split(',')]\n"
    "step = int(sys.argv[4]) if len(sys.argv) > 4 else 0\n"
    "got = b''\n"
    "try:\n"
    "    s = socket.create_connection((host, port), timeout=20)\n"
    "    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)\n"
    "    for k, seg in enumerate(segments):\n"
    "        for i in range(0, len(seg), step or max(len(seg), 1)):\n"
    "            s.sendall(seg[i:i + (step or len(seg))])\n"
    "            if step:\n"
    "                time.sleep(0.05)\n"
    "        if k < len(segments) - 1:\n"
    "            got += s.recv(4096)\n"
    "    while True:\n"
    "        d = s.recv(4096)\n"
    "        if not d:\n"
    "            break\n"
    "        got += d\n"
    "except (ConnectionResetError, BrokenPipeError):\n"
    "    print('reset'); sys.exit(3)\n"
    "if not got:\n"
    "    print('closed'); sys.exit(4)\n"
    "sys.stdout.write(got.decode('latin-1'))\n";

void guest_hex(const void *data, size_t len, char *out)
{
    const uint8_t *p = data;
    for (size_t i = 0; i < len; i++)
        sprintf(out + 2 * i, "%02x", p[i]);
    out[2 * len] = '\0';
}

/* ---- egress: a process of its own ---- */

int guest_lab_egress_start(void)
{
    if (!lab.dir[0] && test_temp_dir(lab.dir, sizeof(lab.dir), "airlock-guest-egress") < 0) {
        lab.dir[0] = '\0';
        return -1;
    }
    snprintf(lab.egress_addr, sizeof(lab.egress_addr), "unix:%s/egress.sock", lab.dir);
    char sock[128];
    snprintf(sock, sizeof(sock), "%s/egress.sock", lab.dir);
    unlink(sock); /* a killed egress leaves its socket behind */
    const char *argv[] = { AIRLOCK_EGRESS_BIN, "--listen", lab.egress_addr, "--upstream-dns",
                           NETLAB_DNS, "--uplink-netns", netlab_ns_path(NETLAB_UPLINK_NS), NULL };
    lab.egress_pid = test_spawn(argv, lab.dir, "egress.log");
    if (lab.egress_pid < 0)
        return -1;
    lab.egress = rpc_channel_open(lab.egress_addr, NULL);
    int64_t deadline = clock_monotonic_ms() + EGRESS_START_TIMEOUT_MS;
    while (access(sock, F_OK) < 0 && clock_monotonic_ms() < deadline)
        usleep(20 * 1000);
    if (!lab.egress || rpc_channel_wait_ready(lab.egress, EGRESS_START_TIMEOUT_MS) < 0) {
        fprintf(stderr, "airlock-egress did not start; see %s/egress.log\n", lab.dir);
        return -1;
    }
    return 0;
}

int guest_lab_egress_stop(int sig)
{
    if (lab.egress) {
        rpc_channel_close(lab.egress);
        lab.egress = NULL;
    }
    if (sig == SIGTERM)
        return test_stop_pid(&lab.egress_pid, lab.dir, "egress.log", true);
    if (lab.egress_pid > 0) {
        kill(lab.egress_pid, sig);
        waitpid(lab.egress_pid, NULL, 0);
        lab.egress_pid = 0;
    }
    return 0;
}

/* ---- the connection log ---- */

static Airlock__Egress__V1__ListConnectionsResponse *connections(const char *id,
                                                                 uint64_t after_seq)
{
    return netlab_connections(lab.egress, id, after_seq);
}

uint64_t guest_log_mark_in(const char *id)
{
    Airlock__Egress__V1__ListConnectionsResponse *r = connections(id, 0);
    uint64_t seq = r->n_connections ? r->connections[r->n_connections - 1]->seq : 0;
    protobuf_c_message_free_unpacked(&r->base, NULL);
    return seq;
}

uint64_t guest_log_mark(void)
{
    return guest_log_mark_in(lab.sandbox_id);
}

static bool entry_matches(const Airlock__Egress__V1__Connection *c, const char *protocol,
                          const char *what)
{
    return strcmp(c->protocol, protocol) == 0 &&
           (strcmp(c->name, what) == 0 || strcmp(c->dest_ip, what) == 0);
}

bool guest_logged_in(const char *id, uint64_t mark, const char *protocol, const char *what,
                     bool allowed, const char *reason)
{
    Airlock__Egress__V1__ListConnectionsResponse *r = connections(id, mark);
    bool found = false;
    for (size_t i = 0; i < r->n_connections && !found; i++) {
        Airlock__Egress__V1__Connection *c = r->connections[i];
        found = entry_matches(c, protocol, what) &&
                c->decision == (allowed ? AIRLOCK__EGRESS__V1__DECISION__DECISION_ALLOW
                                        : AIRLOCK__EGRESS__V1__DECISION__DECISION_DENY) &&
                (!reason || strcmp(c->reason, reason) == 0);
    }
    if (!found) {
        fprintf(stderr, "no %s entry for %s (%s, %s) after seq %llu; the log has:\n", protocol,
                what, allowed ? "allow" : "deny", reason ? reason : "any reason",
                (unsigned long long)mark);
        for (size_t i = 0; i < r->n_connections; i++)
            fprintf(stderr, "  %s %s:%u name=%s decision=%d reason=%s\n",
                    r->connections[i]->protocol, r->connections[i]->dest_ip,
                    r->connections[i]->dest_port, r->connections[i]->name,
                    r->connections[i]->decision, r->connections[i]->reason);
    }
    protobuf_c_message_free_unpacked(&r->base, NULL);
    return found;
}

bool guest_logged(uint64_t mark, const char *protocol, const char *what, bool allowed,
                  const char *reason)
{
    return guest_logged_in(lab.sandbox_id, mark, protocol, what, allowed, reason);
}

bool guest_log_entry(uint64_t mark, const char *protocol, const char *what, uint64_t *bytes_sent)
{
    Airlock__Egress__V1__ListConnectionsResponse *r = connections(lab.sandbox_id, mark);
    bool found = false;
    for (size_t i = 0; i < r->n_connections && !found; i++) {
        if (entry_matches(r->connections[i], protocol, what)) {
            *bytes_sent = r->connections[i]->bytes_sent;
            found = true;
        }
    }
    protobuf_c_message_free_unpacked(&r->base, NULL);
    return found;
}

size_t guest_log_count(uint64_t mark, const char *protocol)
{
    Airlock__Egress__V1__ListConnectionsResponse *r = connections(lab.sandbox_id, mark);
    size_t n = 0;
    for (size_t i = 0; i < r->n_connections; i++)
        n += strcmp(r->connections[i]->protocol, protocol) == 0;
    protobuf_c_message_free_unpacked(&r->base, NULL);
    return n;
}

/* ---- the guest ---- */

int guest_sh_in(const char *id, const char *script, char *out, size_t outlen)
{
    return itest_assert_sh_code(&lab.vh, id, script, out, outlen);
}

int guest_sh(const char *script, char *out, size_t outlen)
{
    return guest_sh_in(lab.sandbox_id, script, out, outlen);
}

void expect_tcp_denied(const char *script, const char *what, const char *reason)
{
    uint64_t mark = guest_log_mark();
    unsigned accepted = netlab_tcp_accepted();
    char out[512];
    int code = guest_sh(script, out, sizeof(out));
    if (code == 0)
        fprintf(stderr, "%s succeeded: %s\n", script, out);
    assert_int_not_equal(code, 0);
    assert_int_equal(netlab_tcp_accepted(), accepted);
    assert_true(guest_logged(mark, "tcp", what, false, reason));
}

struct sandbox_net_counters guest_counters(void)
{
    struct sandbox_net_counters c = { 0 };
    char err[512];
    if (sandbox_net_counters(lab.sandbox_id, &c, err, sizeof(err)) < 0)
        fprintf(stderr, "counters: %s\n", err);
    return c;
}

/* ---- setup ---- */

void guest_lab_policy(Airlock__Egress__V1__Policy *p, const char *extra)
{
    static uint32_t ports[] = { 80, 443 };
    static char *domains[] = { "allowed.test", "flip.test",   "loop.test",
                               "metadata.test", "uplink.test", NULL };
    size_t n = 5;
    domains[5] = (char *)extra;
    *p = (Airlock__Egress__V1__Policy)AIRLOCK__EGRESS__V1__POLICY__INIT;
    p->n_allow_domains = extra ? n + 1 : n;
    p->allow_domains = domains;
    p->n_allow_ports = 2;
    p->allow_ports = ports;
}

static int install_scripts(const char *id)
{
    const struct {
        const char *path, *text;
    } files[] = { { "/tmp/dnsq.py", dns_client_py }, { "/tmp/tcpsend.py", tcp_send_py } };
    for (size_t i = 0; i < sizeof(files) / sizeof(*files); i++) {
        char *err = NULL;
        grpc_status_code st =
            itest_write_file(&lab.vh, id, (const uint8_t *)files[i].path, strlen(files[i].path),
                             (const uint8_t *)files[i].text, strlen(files[i].text), &err);
        if (st != GRPC_STATUS_OK)
            fprintf(stderr, "write %s: %s\n", files[i].path, err ? err : "");
        free(err);
        if (st != GRPC_STATUS_OK)
            return -1;
    }
    return 0;
}

grpc_status_code guest_lab_try_create(const char *id, const Airlock__Egress__V1__Policy *p,
                                      char **details)
{
    Airlock__Vmhost__V1__CreateSandboxRequest req =
        AIRLOCK__VMHOST__V1__CREATE_SANDBOX_REQUEST__INIT;
    req.id = (char *)id;
    req.policy = (Airlock__Egress__V1__Policy *)p;
    grpc_status_code st;
    free(itest_create_sandbox_with(&lab.vh, &req, &st, details));
    return st;
}

int guest_lab_create_sandbox(const char *id, const Airlock__Egress__V1__Policy *p)
{
    char *details = NULL;
    grpc_status_code st = guest_lab_try_create(id, p, &details);
    if (st != GRPC_STATUS_OK) {
        fprintf(stderr, "CreateSandbox %s: %s\n", id, details ? details : "");
        itest_vmhost_print_log_tail(&lab.vh);
    }
    free(details);
    return st == GRPC_STATUS_OK && install_scripts(id) == 0 ? 0 : -1;
}

grpc_status_code guest_lab_set_policy(const char *id, const Airlock__Egress__V1__Policy *p,
                                      char **details)
{
    Airlock__Vmhost__V1__SetSandboxPolicyRequest req =
        AIRLOCK__VMHOST__V1__SET_SANDBOX_POLICY_REQUEST__INIT;
    req.id = (char *)id;
    req.policy = (Airlock__Egress__V1__Policy *)p;
    ProtobufCMessage *resp = NULL;
    grpc_status_code st = rpc_unary(lab.vh.ch, ITEST_METHOD("SetSandboxPolicy"), &req.base,
                                    &airlock__vmhost__v1__sandbox__descriptor, &resp, details,
                                    GUEST_LAB_CALL_TIMEOUT_MS);
    if (resp)
        protobuf_c_message_free_unpacked(resp, NULL);
    return st;
}

int guest_lab_teardown(void)
{
    int rc = 0;
    if (lab.sandbox_created && itest_delete_sandbox(&lab.vh, lab.sandbox_id) != GRPC_STATUS_OK)
        rc = -1;
    lab.sandbox_created = false;
    /* vmhost first: its shutdown detaches sandboxes from egress. */
    if (lab.vh_started && itest_vmhost_stop(&lab.vh) < 0)
        rc = -1;
    lab.vh_started = false;
    if (guest_lab_egress_stop(SIGTERM) < 0)
        rc = -1;
    if (lab.dir[0]) {
        char err[256];
        fs_remove_tree(lab.dir, err, sizeof(err));
        lab.dir[0] = '\0';
    }
    netlab_down();
    return rc;
}

static void cleanup(void)
{
    guest_lab_teardown();
}

static int group_setup(void **state)
{
    (void)state;
    signal(SIGPIPE, SIG_IGN);
    /* Unique per run: a namespace left by a crashed run, or another run on
     * the same machine, must not collide with this one. */
    snprintf(lab.sandbox_id, sizeof(lab.sandbox_id), "guestnet-%d", (int)getpid());
    test_cleanup_install(cleanup);
    if (netlab_uplink_up() < 0 || guest_lab_egress_start() < 0)
        goto fail;
    const char *args[] = { "--egress", lab.egress_addr, NULL };
    if (itest_vmhost_start(&lab.vh, args) < 0)
        goto fail;
    lab.vh_started = true;
    Airlock__Egress__V1__Policy p;
    guest_lab_policy(&p, NULL);
    if (guest_lab_create_sandbox(lab.sandbox_id, &p) < 0)
        goto fail;
    lab.sandbox_created = true;
    return 0;
fail:
    guest_lab_teardown();
    return -1;
}

static int group_teardown(void **state)
{
    (void)state;
    return guest_lab_teardown();
}

int guest_lab_run(const char *program, const struct CMUnitTest *tests, size_t n)
{
    if (!test_have_root(program, "namespaces, QEMU"))
        return TEST_SKIPPED;
    return _cmocka_run_group_tests(program, tests, n, group_setup, group_teardown);
}
