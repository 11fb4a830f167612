#include "itest.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "fsutil.h"
#include "internal_token.h"
#include "itest_store.h"
#include "netns.h"
#include "proc.h"
#include "sandbox_netdefs.h"
#include "test_proc.h"

#define ITEST_START_TIMEOUT_MS (25 * 60 * 1000) /* a first image build takes minutes */
/* A restart finds the images built; it adopts what the last one left. */
#define ITEST_RESTART_TIMEOUT_MS (5 * 60 * 1000)
#define ITEST_WRITE_CHUNK (1u << 20)
#define ITEST_LOOP_RELEASE_MS 10000 /* loop devices detach asynchronously */
#define ITEST_STOP_TIMEOUT_MS 300000

/* The vmhosts started and not yet stopped (a bench section runs two side
 * by side): stopped at exit or on a signal. */
#define ITEST_MAX_RUNNING 4
static struct itest_vmhost *itest_running[ITEST_MAX_RUNNING];

const char *itest_image_dir(void)
{
    const char *d = getenv("AIRLOCK_TEST_IMAGE_DIR");
    return d && *d ? d : "/var/cache/airlock/images";
}

static void itest_cleanup_at_exit(void)
{
    for (size_t i = 0; i < ITEST_MAX_RUNNING; i++)
        if (itest_running[i])
            itest_vmhost_stop(itest_running[i]);
}

/* Tracks vh in a free slot (all taken: it goes untracked) or, with NULL
 * for vh, frees the slot of was. */
static void itest_track(struct itest_vmhost *was, struct itest_vmhost *vh)
{
    for (size_t i = 0; i < ITEST_MAX_RUNNING; i++)
        if (itest_running[i] == was) {
            itest_running[i] = vh;
            return;
        }
}

static void itest_cleanup_on_signal(int sig)
{
    itest_cleanup_at_exit();
    signal(sig, SIG_DFL);
    raise(sig);
}

void itest_vmhost_print_log_tail(const struct itest_vmhost *vh)
{
    char *text = NULL;
    size_t len = 0;
    if (fs_read_file(vh->log_path, 64 << 20, &text, &len, NULL, 0) < 0)
        return;
    size_t start = len > 6000 ? len - 6000 : 0;
    fprintf(stderr, "---- vmhost log tail (%s) ----\n%s\n----\n", vh->log_path, text + start);
    free(text);
}

static bool itest_vmhost_answers(struct itest_vmhost *vh)
{
    Airlock__Vmhost__V1__ListSandboxesRequest req = AIRLOCK__VMHOST__V1__LIST_SANDBOXES_REQUEST__INIT;
    ProtobufCMessage *resp = NULL;
    grpc_status_code st = rpc_unary(vh->ch, ITEST_METHOD("ListSandboxes"), &req.base,
                                    &airlock__vmhost__v1__list_sandboxes_response__descriptor, &resp,
                                    NULL, 1000);
    if (resp)
        protobuf_c_message_free_unpacked(resp, NULL);
    return st == GRPC_STATUS_OK;
}

/* vmhost inherits AIRLOCK_INTERNAL_TOKEN_FILE and AIRLOCK_INTERNAL_CA/
 * _CERT/_KEY from us: when a harness set them (tests/controlplane), our
 * calls present that token and that node's vmhost certificate too (as
 * vmhostctl does). The credentials are read at vmhost's first start and
 * kept until itest_vmhost_stop. */
static struct rpc_channel *itest_vmhost_channel(struct itest_vmhost *vh)
{
    static const struct tls_files from_env;
    char err[1024], self[PEER_IDENTITY_TEXT_MAX] = "";
    if (!vh->tls && tls_credentials_configure(&from_env, PEER_VMHOST, true, &vh->tls, err,
                                              sizeof(err)) < 0) {
        fprintf(stderr, "itest: %s\n", err);
        return NULL;
    }
    if (vh->tls)
        peer_identity_text(tls_credentials_identity(vh->tls), self, sizeof(self));
    const char *file = getenv(INTERNAL_TOKEN_ENV);
    char *token = NULL;
    if (file && *file && !(token = internal_token_load(file, err, sizeof(err)))) {
        fprintf(stderr, "itest: %s\n", err);
        return NULL;
    }
    struct rpc_channel_auth auth = { .bearer_token = token, .tls = vh->tls, .server = self };
    struct rpc_channel *ch = rpc_channel_open(vh->addr, &auth);
    free(token);
    return ch;
}

/* Starts vmhost on vh->data_dir and waits until it answers. */
static int itest_vmhost_spawn(struct itest_vmhost *vh, const char *const extra_args[],
                              int timeout_ms)
{
    const char *accel = getenv("AIRLOCK_TEST_ACCEL");
    const char *argv[64];
    size_t n = 0;
    argv[n++] = AIRLOCK_VMHOST_BIN;
    argv[n++] = "serve";
    argv[n++] = "--data-dir";
    argv[n++] = vh->data_dir;
    argv[n++] = "--image-dir";
    argv[n++] = vh->image_dir;
    argv[n++] = "--listen";
    argv[n++] = vh->addr;
    argv[n++] = "--guestd";
    argv[n++] = AIRLOCK_GUESTD_BIN;
    argv[n++] = "--accel";
    argv[n++] = accel && *accel ? accel : "auto";
    /* The machines the tests run on have no working KVM (docs/STATUS.md). */
    argv[n++] = "--allow-tcg";
    for (size_t i = 0; extra_args && extra_args[i] && n < 63; i++)
        argv[n++] = extra_args[i];
    argv[n] = NULL;

    vh->ch = itest_vmhost_channel(vh);
    if (!vh->ch)
        return -1;
    /* its output: vh->log_path, data_dir/vmhost.log */
    pid_t pid = test_spawn(argv, vh->data_dir, "vmhost.log");
    if (pid < 0) {
        perror("fork");
        return -1;
    }
    vh->pid = pid;

    int64_t deadline = clock_monotonic_ms() + timeout_ms;
    while (clock_monotonic_ms() < deadline) {
        int status;
        if (waitpid(pid, &status, WNOHANG) == pid) {
            vh->pid = 0;
            fprintf(stderr, "itest: vmhost exited during start (status %d)\n", status);
            itest_vmhost_print_log_tail(vh);
            return -1;
        }
        char sock[PATH_MAX];
        fs_path(sock, sizeof(sock), "%s/vmhost.sock", vh->data_dir);
        if (access(sock, F_OK) == 0 && itest_vmhost_answers(vh))
            return 0;
        usleep(100 * 1000);
    }
    fprintf(stderr, "itest: vmhost did not answer within %d s\n", timeout_ms / 1000);
    itest_vmhost_print_log_tail(vh);
    return -1;
}

int itest_vmhost_start(struct itest_vmhost *vh, const char *const extra_args[])
{
    memset(vh, 0, sizeof(*vh));
    snprintf(vh->data_dir, sizeof(vh->data_dir), "/tmp/airlock-itest-XXXXXX");
    if (!mkdtemp(vh->data_dir)) {
        perror("mkdtemp");
        return -1;
    }
    snprintf(vh->image_dir, sizeof(vh->image_dir), "%s", itest_image_dir());
    fs_path(vh->addr, sizeof(vh->addr), "unix:%s/vmhost.sock", vh->data_dir);
    fs_path(vh->log_path, sizeof(vh->log_path), "%s/vmhost.log", vh->data_dir);
    itest_track(vh, NULL); /* started again without a stop: once is enough */
    itest_track(NULL, vh);
    static bool hooks_installed;
    if (!hooks_installed) {
        atexit(itest_cleanup_at_exit);
        signal(SIGINT, itest_cleanup_on_signal);
        signal(SIGTERM, itest_cleanup_on_signal);
        hooks_installed = true;
    }
    return itest_vmhost_spawn(vh, extra_args, ITEST_START_TIMEOUT_MS);
}

void itest_vmhost_crash(struct itest_vmhost *vh)
{
    rpc_channel_close(vh->ch);
    vh->ch = NULL;
    if (vh->pid > 0) {
        kill(vh->pid, SIGKILL);
        waitpid(vh->pid, NULL, 0);
    }
    vh->pid = 0;
}

int itest_vmhost_respawn(struct itest_vmhost *vh, const char *const extra_args[])
{
    return itest_vmhost_spawn(vh, extra_args, ITEST_RESTART_TIMEOUT_MS);
}

int itest_vmhost_crash_and_restart_with(struct itest_vmhost *vh, const char *const extra_args[])
{
    itest_vmhost_crash(vh);
    return itest_vmhost_spawn(vh, extra_args, ITEST_RESTART_TIMEOUT_MS);
}

int itest_vmhost_crash_and_restart(struct itest_vmhost *vh)
{
    return itest_vmhost_crash_and_restart_with(vh, NULL);
}

/* A QEMU running in this test's data directory was started by this
 * test's vmhost: stop it if vmhost could not. */
static void itest_kill_leftover_qemus(const char *data_dir)
{
    pid_t pids[256];
    size_t n = itest_find_qemus(data_dir, pids, 256);
    for (size_t i = 0; i < n && i < 256; i++) {
        fprintf(stderr, "itest: killing leftover QEMU %d\n", (int)pids[i]);
        kill(pids[i], SIGKILL);
    }
}

/* Network namespaces of the sandboxes under a data directory, named while
 * its store is still mounted (before vmhost stops): a stop suspends or
 * deletes every sandbox and its namespace, so one still there afterwards
 * is a leak (a failed suspend keeps its VM running, and its namespace, for
 * the next vmhost), deleted so that no test leaves one behind. */
#define ITEST_MAX_SANDBOX_DIRS 256
struct itest_sandbox_netns {
    size_t n;
    char names[ITEST_MAX_SANDBOX_DIRS][sizeof(SANDBOX_NET_NS_PREFIX) + NAME_MAX];
};

static void itest_list_sandbox_netns(const char *data_dir, struct itest_sandbox_netns *out)
{
    char dir[PATH_MAX];
    out->n = 0;
    if (fs_path(dir, sizeof(dir), "%s/store/sandboxes", data_dir) < 0)
        return;
    DIR *d = opendir(dir);
    if (!d)
        return;
    for (struct dirent *e; (e = readdir(d)) && out->n < ITEST_MAX_SANDBOX_DIRS;) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(out->names[out->n++], sizeof(out->names[0]), SANDBOX_NET_NS_PREFIX "%s",
                 e->d_name);
    }
    closedir(d);
}

/* How many of them were left (and are deleted now). */
static size_t itest_delete_leftover_netns(const struct itest_sandbox_netns *l)
{
    size_t left = 0;
    for (size_t i = 0; i < l->n; i++) {
        char path[PATH_MAX];
        if (netns_path(l->names[i], path, sizeof(path)) < 0 || access(path, F_OK) < 0)
            continue;
        fprintf(stderr, "itest: deleting leftover network namespace %s\n", l->names[i]);
        netns_delete(l->names[i], NULL, 0);
        left++;
    }
    return left;
}

/* SIGTERM and wait: 0 when vmhost exited 0. */
static int itest_vmhost_terminate(struct itest_vmhost *vh)
{
    if (vh->ch) {
        rpc_channel_close(vh->ch);
        vh->ch = NULL;
    }
    if (vh->pid <= 0)
        return 0;
    kill(vh->pid, SIGTERM);
    /* A stop suspends the sandboxes left running: seconds each. */
    int64_t deadline = clock_monotonic_ms() + ITEST_STOP_TIMEOUT_MS;
    int status = 0;
    while (waitpid(vh->pid, &status, WNOHANG) == 0) {
        if (clock_monotonic_ms() > deadline) {
            kill(vh->pid, SIGKILL);
            waitpid(vh->pid, &status, 0);
            break;
        }
        usleep(20 * 1000);
    }
    vh->pid = 0;
    /* A clean stop exits 0; anything else (a hang, a crash, a sanitizer
     * report at exit) fails the test program. */
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "itest: vmhost did not stop cleanly (wait status %d)\n", status);
        itest_vmhost_print_log_tail(vh);
        return -1;
    }
    return 0;
}

int itest_vmhost_restart(struct itest_vmhost *vh)
{
    return itest_vmhost_restart_with(vh, NULL);
}

int itest_vmhost_restart_with(struct itest_vmhost *vh, const char *const extra_args[])
{
    if (itest_vmhost_terminate(vh) < 0)
        return -1;
    /* The store's loop device goes a moment after the unmount: the new
     * vmhost must not meet it while mounting the image again. */
    if (!itest_store_released(vh->data_dir, ITEST_LOOP_RELEASE_MS)) {
        fprintf(stderr, "itest: vmhost left a mount or loop device under %s\n", vh->data_dir);
        return -1;
    }
    return itest_vmhost_spawn(vh, extra_args, ITEST_RESTART_TIMEOUT_MS);
}

int itest_vmhost_stop(struct itest_vmhost *vh)
{
    struct itest_sandbox_netns *netns = calloc(1, sizeof(*netns));
    if (netns && vh->data_dir[0])
        itest_list_sandbox_netns(vh->data_dir, netns);
    int rc = itest_vmhost_terminate(vh);
    if (vh->data_dir[0]) {
        itest_kill_leftover_qemus(vh->data_dir);
        if (netns && itest_delete_leftover_netns(netns) > 0)
            rc = -1;
        /* A vmhost that stopped cleanly has unmounted its store; anything
         * still there is a leak (or vmhost died): fail, then clean up. */
        if (!itest_store_released(vh->data_dir, rc == 0 ? ITEST_LOOP_RELEASE_MS : 0)) {
            if (rc == 0)
                fprintf(stderr, "itest: vmhost left a mount or loop device under %s\n",
                        vh->data_dir);
            rc = -1;
            itest_mounts_under(vh->data_dir, true);
            itest_loops_under(vh->data_dir, true);
        }
        if (!getenv("AIRLOCK_TEST_KEEP"))
            fs_remove_tree(vh->data_dir, NULL, 0);
        vh->data_dir[0] = '\0';
    }
    itest_track(vh, NULL);
    tls_credentials_free(vh->tls);
    vh->tls = NULL;
    free(netns);
    return rc;
}

char *itest_create_sandbox_with(struct itest_vmhost *vh,
                                const Airlock__Vmhost__V1__CreateSandboxRequest *req,
                                grpc_status_code *status, char **details)
{
    Airlock__Vmhost__V1__Sandbox *sb = NULL;
    char *det = NULL;
    grpc_status_code st =
        rpc_unary(vh->ch, ITEST_METHOD("CreateSandbox"), &req->base,
                  &airlock__vmhost__v1__sandbox__descriptor, (ProtobufCMessage **)&sb, &det,
                  ITEST_CALL_TIMEOUT_MS);
    if (status)
        *status = st;
    if (details)
        *details = det;
    else
        free(det);
    if (st != GRPC_STATUS_OK || !sb) {
        if (!details)
            fprintf(stderr, "itest: CreateSandbox: %s\n", rpc_status_name(st));
        return NULL;
    }
    char *id = strdup(sb->id);
    protobuf_c_message_free_unpacked(&sb->base, NULL);
    return id;
}

char *itest_create_sandbox(struct itest_vmhost *vh, grpc_status_code *status, char **details)
{
    Airlock__Vmhost__V1__CreateSandboxRequest req = AIRLOCK__VMHOST__V1__CREATE_SANDBOX_REQUEST__INIT;
    return itest_create_sandbox_with(vh, &req, status, details);
}

Airlock__Vmhost__V1__Sandbox *itest_sandbox_call(struct itest_vmhost *vh, const char *method,
                                                 const char *id, grpc_status_code *st,
                                                 char **details)
{
    /* GetSandbox, PauseSandbox and ResumeSandbox all take a SandboxRef. */
    Airlock__Vmhost__V1__SandboxRef req = AIRLOCK__VMHOST__V1__SANDBOX_REF__INIT;
    req.id = (char *)id;
    Airlock__Vmhost__V1__Sandbox *sb = NULL;
    *st = rpc_unary(vh->ch, method, &req.base, &airlock__vmhost__v1__sandbox__descriptor,
                    (ProtobufCMessage **)&sb, details, ITEST_CALL_TIMEOUT_MS);
    return sb;
}

Airlock__Vmhost__V1__ListSandboxesResponse *itest_list_sandboxes(struct itest_vmhost *vh)
{
    Airlock__Vmhost__V1__ListSandboxesRequest req = AIRLOCK__VMHOST__V1__LIST_SANDBOXES_REQUEST__INIT;
    Airlock__Vmhost__V1__ListSandboxesResponse *list = NULL;
    grpc_status_code st = rpc_unary(vh->ch, ITEST_METHOD("ListSandboxes"), &req.base,
                                    &airlock__vmhost__v1__list_sandboxes_response__descriptor,
                                    (ProtobufCMessage **)&list, NULL, ITEST_CALL_TIMEOUT_MS);
    if (st != GRPC_STATUS_OK && list) {
        protobuf_c_message_free_unpacked(&list->base, NULL);
        list = NULL;
    }
    return list;
}

grpc_status_code itest_delete_sandbox(struct itest_vmhost *vh, const char *id)
{
    Airlock__Vmhost__V1__SandboxRef req = AIRLOCK__VMHOST__V1__SANDBOX_REF__INIT;
    req.id = (char *)id;
    return itest_call(vh, ITEST_METHOD("DeleteSandbox"), &req.base,
                      &airlock__vmhost__v1__empty__descriptor, NULL);
}

grpc_status_code itest_call(struct itest_vmhost *vh, const char *method,
                            const ProtobufCMessage *req, const ProtobufCMessageDescriptor *resp,
                            char **details)
{
    ProtobufCMessage *answer = NULL;
    grpc_status_code st =
        rpc_unary(vh->ch, method, req, resp, &answer, details, ITEST_CALL_TIMEOUT_MS);
    if (answer)
        protobuf_c_message_free_unpacked(answer, NULL);
    return st;
}

static void append_bytes(uint8_t **buf, size_t *len, const uint8_t *data, size_t n)
{
    uint8_t *nb = realloc(*buf, *len + n + 1);
    if (!nb)
        abort();
    memcpy(nb + *len, data, n);
    *len += n;
    nb[*len] = '\0';
    *buf = nb;
}

void itest_exec(struct itest_vmhost *vh, const char *sandbox_id, const char *const argv[],
                const struct itest_exec_options *opts, struct itest_exec_result *r)
{
    memset(r, 0, sizeof(*r));
    static const struct itest_exec_options none;
    if (!opts)
        opts = &none;
    Airlock__Vmhost__V1__ExecRequest req = AIRLOCK__VMHOST__V1__EXEC_REQUEST__INIT;
    req.sandbox_id = (char *)sandbox_id;
    size_t argc = 0;
    while (argv[argc])
        argc++;
    ProtobufCBinaryData args[argc ? argc : 1];
    for (size_t i = 0; i < argc; i++) {
        args[i].data = (uint8_t *)argv[i];
        args[i].len = strlen(argv[i]);
    }
    req.n_argv = argc;
    req.argv = args;
    size_t envc = 0;
    while (opts->env && opts->env[envc])
        envc++;
    Airlock__Vmhost__V1__ExecRequest__EnvEntry entries[envc ? envc : 1];
    Airlock__Vmhost__V1__ExecRequest__EnvEntry *entry_ptrs[envc ? envc : 1];
    char *env_copies[envc ? envc : 1];
    for (size_t i = 0; i < envc; i++) {
        airlock__vmhost__v1__exec_request__env_entry__init(&entries[i]);
        env_copies[i] = strdup(opts->env[i]);
        char *eq = strchr(env_copies[i], '=');
        if (eq)
            *eq = '\0';
        entries[i].key = env_copies[i];
        entries[i].value = eq ? eq + 1 : "";
        entry_ptrs[i] = &entries[i];
    }
    req.n_env = envc;
    req.env = entry_ptrs;
    if (opts->cwd) {
        req.cwd.data = (uint8_t *)opts->cwd;
        req.cwd.len = strlen(opts->cwd);
    }
    req.user = (char *)(opts->user ? opts->user : "");
    req.timeout_ms = opts->timeout_ms;
    req.stdin.data = (uint8_t *)opts->stdin_data;
    req.stdin.len = opts->stdin_len;
    req.pty = opts->pty;
    req.rows = opts->rows;
    req.cols = opts->cols;

    struct rpc_stream *s = rpc_stream_open(vh->ch, ITEST_METHOD("Exec"),
                                           opts->deadline_ms ? opts->deadline_ms
                                                             : ITEST_CALL_TIMEOUT_MS);
    rpc_stream_send(s, &req.base);
    rpc_stream_close_send(s);
    Airlock__Vmhost__V1__ExecEvent *ev;
    while (rpc_stream_recv(s, &airlock__vmhost__v1__exec_event__descriptor, (ProtobufCMessage **)&ev) == 1) {
        switch (ev->event_case) {
        case AIRLOCK__VMHOST__V1__EXEC_EVENT__EVENT_STARTED:
            r->exec_id = strdup(ev->started->exec_id);
            r->pid = ev->started->pid;
            break;
        case AIRLOCK__VMHOST__V1__EXEC_EVENT__EVENT_OUTPUT:
            if (ev->output->fd == 2)
                append_bytes(&r->err, &r->err_len, ev->output->data.data, ev->output->data.len);
            else
                append_bytes(&r->out, &r->out_len, ev->output->data.data, ev->output->data.len);
            break;
        case AIRLOCK__VMHOST__V1__EXEC_EVENT__EVENT_EXIT:
            r->exited = true;
            r->exit_code = ev->exit->exit_code;
            r->signal = ev->exit->signal;
            r->timed_out = ev->exit->timed_out;
            break;
        default:
            break;
        }
        protobuf_c_message_free_unpacked(&ev->base, NULL);
    }
    r->status = rpc_stream_finish(s, &r->details);
    if (!r->out)
        append_bytes(&r->out, &r->out_len, (const uint8_t *)"", 0);
    if (!r->err)
        append_bytes(&r->err, &r->err_len, (const uint8_t *)"", 0);
    for (size_t i = 0; i < envc; i++)
        free(env_copies[i]);
}

void itest_sh(struct itest_vmhost *vh, const char *sandbox_id, const char *script,
              struct itest_exec_result *r)
{
    const char *argv[] = { "sh", "-c", script, NULL };
    itest_exec(vh, sandbox_id, argv, NULL, r);
}

void itest_exec_result_free(struct itest_exec_result *r)
{
    free(r->details);
    free(r->exec_id);
    free(r->out);
    free(r->err);
    memset(r, 0, sizeof(*r));
}

grpc_status_code itest_write_file(struct itest_vmhost *vh, const char *sandbox_id,
                                  const uint8_t *path, size_t path_len, const uint8_t *data,
                                  size_t len, char **details)
{
    struct rpc_stream *s = rpc_stream_open(vh->ch, ITEST_METHOD("WriteFile"), ITEST_CALL_TIMEOUT_MS);
    Airlock__Guest__V1__FileWriteRequest fw = AIRLOCK__GUEST__V1__FILE_WRITE_REQUEST__INIT;
    fw.path = (ProtobufCBinaryData){ .len = path_len, .data = (uint8_t *)path };
    size_t off = 0;
    do {
        Airlock__Vmhost__V1__WriteFileRequest req = AIRLOCK__VMHOST__V1__WRITE_FILE_REQUEST__INIT;
        if (off == 0) {
            req.sandbox_id = (char *)sandbox_id;
            req.request = &fw;
        }
        size_t n = len - off > ITEST_WRITE_CHUNK ? ITEST_WRITE_CHUNK : len - off;
        req.data.data = (uint8_t *)data + off;
        req.data.len = n;
        if (rpc_stream_send(s, &req.base) < 0)
            break;
        off += n;
    } while (off < len);
    rpc_stream_close_send(s);
    ProtobufCMessage *info = NULL;
    if (rpc_stream_recv(s, &airlock__guest__v1__file_info__descriptor, &info) == 1)
        protobuf_c_message_free_unpacked(info, NULL);
    return rpc_stream_finish(s, details);
}

grpc_status_code itest_read_file(struct itest_vmhost *vh, const char *sandbox_id,
                                 const uint8_t *path, size_t path_len, uint8_t **data,
                                 size_t *len, char **details)
{
    Airlock__Guest__V1__FileReadRequest fr = AIRLOCK__GUEST__V1__FILE_READ_REQUEST__INIT;
    fr.path = (ProtobufCBinaryData){ .len = path_len, .data = (uint8_t *)path };
    Airlock__Vmhost__V1__ReadFileRequest req = AIRLOCK__VMHOST__V1__READ_FILE_REQUEST__INIT;
    req.sandbox_id = (char *)sandbox_id;
    req.request = &fr;
    struct rpc_stream *s = rpc_stream_open(vh->ch, ITEST_METHOD("ReadFile"), ITEST_CALL_TIMEOUT_MS);
    rpc_stream_send(s, &req.base);
    rpc_stream_close_send(s);
    *data = NULL;
    *len = 0;
    Airlock__Vmhost__V1__FileChunk *c;
    while (rpc_stream_recv(s, &airlock__vmhost__v1__file_chunk__descriptor, (ProtobufCMessage **)&c) == 1) {
        append_bytes(data, len, c->data.data, c->data.len);
        protobuf_c_message_free_unpacked(&c->base, NULL);
    }
    return rpc_stream_finish(s, details);
}

/* The directories under dir (by inode: /proc shows a jailed QEMU's cwd
 * by its name inside the jail), a few levels deep. */
struct dir_ids {
    struct stat *ids;
    size_t n, cap;
};

static void collect_dirs(const char *dir, int depth, struct dir_ids *out)
{
    struct stat st;
    if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
        return;
    if (out->n == out->cap) {
        out->cap = out->cap ? out->cap * 2 : 64;
        struct stat *grown = realloc(out->ids, out->cap * sizeof(*out->ids));
        if (!grown)
            abort();
        out->ids = grown;
    }
    out->ids[out->n++] = st;
    DIR *d = depth > 0 ? opendir(dir) : NULL;
    for (struct dirent *e; d && (e = readdir(d));) {
        char child[PATH_MAX];
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
            fs_path(child, sizeof(child), "%s/%s", dir, e->d_name) == 0)
            collect_dirs(child, depth - 1, out);
    }
    if (d)
        closedir(d);
}

size_t itest_find_qemus(const char *dir, pid_t *out, size_t max)
{
    struct dir_ids dirs = { 0 };
    collect_dirs(dir, 5, &dirs); /* data_dir/store/sandboxes/<id>/vm */
    pid_t all[256];
    size_t n = proc_find("qemu-system", NULL, all, 256), found = 0;
    for (size_t i = 0; i < n && i < 256; i++) {
        char cwd[64];
        struct stat st;
        snprintf(cwd, sizeof(cwd), "/proc/%d/cwd", (int)all[i]);
        if (stat(cwd, &st) < 0)
            continue;
        for (size_t k = 0; k < dirs.n; k++)
            if (dirs.ids[k].st_dev == st.st_dev && dirs.ids[k].st_ino == st.st_ino) {
                if (out && found < max)
                    out[found] = all[i];
                found++;
                break;
            }
    }
    free(dirs.ids);
    return found;
}

size_t itest_count_qemus(const char *dir)
{
    return itest_find_qemus(dir, NULL, 0);
}

Airlock__Vmhost__V1__NodeStats *itest_node_stats(struct itest_vmhost *vh)
{
    Airlock__Vmhost__V1__GetNodeStatsRequest req = AIRLOCK__VMHOST__V1__GET_NODE_STATS_REQUEST__INIT;
    Airlock__Vmhost__V1__NodeStats *st = NULL;
    if (rpc_unary(vh->ch, ITEST_METHOD("GetNodeStats"), &req.base,
                  &airlock__vmhost__v1__node_stats__descriptor, (ProtobufCMessage **)&st, NULL,
                  ITEST_CALL_TIMEOUT_MS) != GRPC_STATUS_OK && st) {
        protobuf_c_message_free_unpacked(&st->base, NULL);
        st = NULL;
    }
    return st;
}

bool itest_wait_pool_ready(struct itest_vmhost *vh, unsigned want, int timeout_ms)
{
    int64_t deadline = clock_monotonic_ms() + timeout_ms;
    for (;;) {
        Airlock__Vmhost__V1__NodeStats *st = itest_node_stats(vh);
        unsigned ready = st ? st->pool_ready : 0;
        if (st)
            protobuf_c_message_free_unpacked(&st->base, NULL);
        if (ready == want)
            return true;
        if (clock_monotonic_ms() > deadline) {
            fprintf(stderr, "itest: warm pool has %u of %u VMs after %d ms\n", ready, want,
                    timeout_ms);
            itest_vmhost_print_log_tail(vh);
            return false;
        }
        usleep(50 * 1000);
    }
}

grpc_status_code itest_create_checkpoint(struct itest_vmhost *vh, const char *id, const char *name,
                                         int kind, char **details)
{
    Airlock__Vmhost__V1__CreateCheckpointRequest req =
        AIRLOCK__VMHOST__V1__CREATE_CHECKPOINT_REQUEST__INIT;
    req.sandbox_id = (char *)id;
    req.name = (char *)name;
    req.kind = kind;
    ProtobufCMessage *resp = NULL;
    grpc_status_code st =
        rpc_unary(vh->ch, ITEST_METHOD("CreateCheckpoint"), &req.base,
                  &airlock__vmhost__v1__checkpoint__descriptor, &resp, details,
                  ITEST_CALL_TIMEOUT_MS);
    if (resp)
        protobuf_c_message_free_unpacked(resp, NULL);
    return st;
}
