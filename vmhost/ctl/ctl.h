/* vmhostctl: the operator's CLI for vmhost's gRPC API (protos/vmhost.proto).
 * Shared state and helpers of the command files. */
#ifndef AIRLOCK_VMHOSTCTL_H
#define AIRLOCK_VMHOSTCTL_H

#include "rpc_client.h"
#include "vmhost.pb-c.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define VMHOST_METHOD(name) "/airlock.vmhost.v1.VmHost/" name

/* Where vmhost listens unless --addr or $AIRLOCK_VMHOST_ADDR says. */
#define CTL_DEFAULT_ADDR "unix:/var/lib/airlock/vmhost.sock"

/* Exit codes besides a remote command's own. */
#define CTL_EXIT_ERROR 1 /* the call failed; one line on stderr says why */
#define CTL_EXIT_USAGE 2

struct ctl {
    const char *addr;
    const char *token_file; /* the internal token vmhost wants; NULL: none */
    /* With mutual TLS vmhostctl is this node's vmhost (its certificate and
     * key), and the server must be too (tls_credentials.h). */
    struct tls_files tls_files;
    struct tls_credentials *tls;
    bool json;
    int connect_timeout_ms; /* to reach the server at all */
    int call_timeout_ms;    /* deadline of calls that are not streams */
    struct rpc_channel *channel; /* opened by ctl_connect() */
};

/* A command: argv[0] is its name; returns the process exit code. */
typedef int (*ctl_command_fn)(struct ctl *ctl, int argc, char **argv);

/* usage.c */
/* Prints "vmhostctl: <message>" and the usage of command (of every command
 * when NULL or unknown); returns CTL_EXIT_USAGE. */
int ctl_usage_error(const char *command, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The whole usage: global options and every command's line. */
void ctl_print_usage(FILE *out);

/* call.c */
/* Opens the channel and waits until vmhost answers; on failure prints why
 * and returns -1. */
int ctl_connect(struct ctl *ctl);
/* Connects, runs one unary call with the call timeout; on a non-OK status
 * prints the error line and returns -1. */
int ctl_unary(struct ctl *ctl, const char *method, const ProtobufCMessage *req,
              const ProtobufCMessageDescriptor *resp_desc, ProtobufCMessage **resp);
/* "vmhostctl: NOT_FOUND: sandbox x not found" */
void ctl_print_status(grpc_status_code code, const char *details);
/* Finishes s and prints its status when it is not OK; 0 when OK. */
int ctl_finish_stream(struct rpc_stream *s);

/* The commands, one file per group. */
int ctl_cmd_create(struct ctl *ctl, int argc, char **argv);
int ctl_cmd_get(struct ctl *ctl, int argc, char **argv);
int ctl_cmd_ls(struct ctl *ctl, int argc, char **argv);
int ctl_cmd_rm(struct ctl *ctl, int argc, char **argv);
int ctl_cmd_pause(struct ctl *ctl, int argc, char **argv);
int ctl_cmd_resume(struct ctl *ctl, int argc, char **argv);
int ctl_cmd_suspend(struct ctl *ctl, int argc, char **argv);
int ctl_cmd_exec(struct ctl *ctl, int argc, char **argv);
int ctl_cmd_start(struct ctl *ctl, int argc, char **argv);
int ctl_cmd_ps(struct ctl *ctl, int argc, char **argv);
int ctl_cmd_attach(struct ctl *ctl, int argc, char **argv);
int ctl_cmd_kill(struct ctl *ctl, int argc, char **argv);
int ctl_cmd_stdin(struct ctl *ctl, int argc, char **argv);
int ctl_cmd_cat(struct ctl *ctl, int argc, char **argv);
int ctl_cmd_put(struct ctl *ctl, int argc, char **argv);
int ctl_cmd_ls_files(struct ctl *ctl, int argc, char **argv);
int ctl_cmd_stat(struct ctl *ctl, int argc, char **argv);
int ctl_cmd_mkdir(struct ctl *ctl, int argc, char **argv);
int ctl_cmd_rm_file(struct ctl *ctl, int argc, char **argv);
int ctl_cmd_mv(struct ctl *ctl, int argc, char **argv);
int ctl_cmd_chmod(struct ctl *ctl, int argc, char **argv);

#endif
