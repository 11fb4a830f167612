/* Integration-test support: a real airlock-vmhost process on a private data
 * directory (the guest image cache is shared between runs, keyed by content
 * hash), a gRPC client to it, and helpers for the calls tests make.
 *
 * Cleanup is unconditional: itest_vmhost_stop() terminates vmhost (which
 * suspends its sandboxes), then kills any QEMU still recorded in the data
 * directory — only QEMUs whose working directory lies in that directory,
 * i.e. ones this test started — unmounts its btrfs store and frees the loop device if
 * vmhost could not (and fails: a clean stop must leave neither behind), and
 * removes the directory. It also runs from an
 * atexit handler and on SIGINT/SIGTERM, so a crashed test leaks nothing. */
#ifndef AIRLOCK_ITEST_H
#define AIRLOCK_ITEST_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "rpc_client.h"
#include "vmhost.pb-c.h"

#define ITEST_METHOD(name) "/airlock.vmhost.v1.VmHost/" name
#define ITEST_CALL_TIMEOUT_MS 120000

struct itest_vmhost {
    pid_t pid;
    char data_dir[PATH_MAX];
    char image_dir[PATH_MAX];
    char addr[PATH_MAX + 8];
    char log_path[PATH_MAX];
    struct rpc_channel *ch;
    struct tls_credentials *tls; /* ch's, from the environment (itest.c) */
};

/* Image cache shared by every test run on this machine. */
const char *itest_image_dir(void);

/* Starts vmhost with extra arguments (NULL-terminated, may be NULL) and
 * waits until it answers. Returns 0, or -1 after printing why. */
int itest_vmhost_start(struct itest_vmhost *vh, const char *const extra_args[]);
/* Returns -1 (after printing vmhost's log tail) unless vmhost exited 0. */
int itest_vmhost_stop(struct itest_vmhost *vh);
/* kill -9 vmhost (its VMs keep running), then start a new one on the same
 * data directory. */
int itest_vmhost_crash_and_restart(struct itest_vmhost *vh);
/* A clean stop (SIGTERM: vmhost suspends its sandboxes and keeps them)
 * that must exit 0, then a new vmhost on the same data directory. */
int itest_vmhost_restart(struct itest_vmhost *vh);
/* The same, the new one with extra arguments (like itest_vmhost_start). */
int itest_vmhost_restart_with(struct itest_vmhost *vh, const char *const extra_args[]);
/* The same, the new one with extra arguments (like itest_vmhost_start). */
int itest_vmhost_crash_and_restart_with(struct itest_vmhost *vh, const char *const extra_args[]);
/* The two halves, for a test that changes the data directory in between:
 * kill -9 (its VMs keep running), and start on the same data directory. */
void itest_vmhost_crash(struct itest_vmhost *vh);
int itest_vmhost_respawn(struct itest_vmhost *vh, const char *const extra_args[]);
/* Prints the last lines of vmhost's log (for failure diagnostics). */
void itest_vmhost_print_log_tail(const struct itest_vmhost *vh);

/* CreateSandbox with defaults; returns a malloc'd id or NULL. */
char *itest_create_sandbox(struct itest_vmhost *vh, grpc_status_code *status, char **details);
/* CreateSandbox with the given request. */
char *itest_create_sandbox_with(struct itest_vmhost *vh,
                                const Airlock__Vmhost__V1__CreateSandboxRequest *req,
                                grpc_status_code *status, char **details);
/* A call that takes a sandbox id and answers a Sandbox: method is
 * ITEST_METHOD("GetSandbox"), ("PauseSandbox") or ("ResumeSandbox"). The
 * result (NULL unless OK) is freed with protobuf_c_message_free_unpacked. */
Airlock__Vmhost__V1__Sandbox *itest_sandbox_call(struct itest_vmhost *vh, const char *method,
                                                 const char *id, grpc_status_code *st,
                                                 char **details);
grpc_status_code itest_delete_sandbox(struct itest_vmhost *vh, const char *id);
/* A unary call whose answer (of type resp) the caller does not need: the
 * status; details (may be NULL) malloc'd or NULL. */
grpc_status_code itest_call(struct itest_vmhost *vh, const char *method,
                            const ProtobufCMessage *req, const ProtobufCMessageDescriptor *resp,
                            char **details);
/* ListSandboxes; NULL unless OK. Freed with protobuf_c_message_free_unpacked. */
Airlock__Vmhost__V1__ListSandboxesResponse *itest_list_sandboxes(struct itest_vmhost *vh);

struct itest_exec_result {
    grpc_status_code status;
    char *details;          /* status message, malloc'd or NULL */
    char *exec_id;
    int32_t pid;
    uint8_t *out;           /* stdout bytes, NUL-terminated */
    size_t out_len;
    uint8_t *err;           /* stderr bytes, NUL-terminated */
    size_t err_len;
    bool exited;
    int32_t exit_code;
    int32_t signal;
    bool timed_out;
};

struct itest_exec_options {
    const char *const *env;  /* "K=V" strings, NULL-terminated, or NULL */
    const char *cwd;
    const char *user;
    uint32_t timeout_ms;
    const void *stdin_data;
    size_t stdin_len;
    bool pty;
    uint32_t rows, cols;
    int deadline_ms;         /* the call's own deadline; 0: ITEST_CALL_TIMEOUT_MS */
};

/* Runs argv (NULL-terminated) to completion and collects everything. */
void itest_exec(struct itest_vmhost *vh, const char *sandbox_id, const char *const argv[],
                const struct itest_exec_options *opts, struct itest_exec_result *r);
/* sh -c script, no options. */
void itest_sh(struct itest_vmhost *vh, const char *sandbox_id, const char *script,
              struct itest_exec_result *r);
void itest_exec_result_free(struct itest_exec_result *r);

/* Streams len bytes into path (WriteFile, 1 MiB messages). */
grpc_status_code itest_write_file(struct itest_vmhost *vh, const char *sandbox_id,
                                  const uint8_t *path, size_t path_len, const uint8_t *data,
                                  size_t len, char **details);
/* Reads the whole file; *data malloc'd. */
grpc_status_code itest_read_file(struct itest_vmhost *vh, const char *sandbox_id,
                                 const uint8_t *path, size_t path_len, uint8_t **data,
                                 size_t *len, char **details);

/* GetNodeStats; NULL unless OK. Free with protobuf_c_message_free_unpacked. */
Airlock__Vmhost__V1__NodeStats *itest_node_stats(struct itest_vmhost *vh);
/* Polls GetNodeStats until the warm pool holds want ready VMs; false
 * (after printing vmhost's log tail) when timeout_ms passed first. */
bool itest_wait_pool_ready(struct itest_vmhost *vh, unsigned want, int timeout_ms);

/* CreateCheckpoint (kind: a CheckpointKind); details as for the others. */
grpc_status_code itest_create_checkpoint(struct itest_vmhost *vh, const char *id, const char *name,
                                         int kind, char **details);

/* QEMU processes whose working directory lies under dir (VMs of that data
 * dir: a jailed QEMU's command line names no host path, its cwd is its
 * run_dir/vm); up to max pids into out (may be NULL), how many in all. */
size_t itest_find_qemus(const char *dir, pid_t *out, size_t max);
size_t itest_count_qemus(const char *dir);

#endif
