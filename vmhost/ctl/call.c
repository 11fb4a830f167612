/* Talking to vmhost: connection, unary calls, error lines. */
#include "ctl.h"
#include "internal_token.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ctl_connect(struct ctl *ctl)
{
    if (ctl->channel)
        return 0;
    char *token = NULL;
    if (ctl->token_file) {
        char err[512];
        token = internal_token_load(ctl->token_file, err, sizeof(err));
        if (!token) {
            fprintf(stderr, "vmhostctl: %s\n", err);
            return -1;
        }
    }
    char err[1024], self[PEER_IDENTITY_TEXT_MAX] = "";
    if (tls_credentials_configure(&ctl->tls_files, PEER_VMHOST, true, &ctl->tls, err,
                                  sizeof(err)) < 0) {
        fprintf(stderr, "vmhostctl: %s\n", err);
        if (token)
            explicit_bzero(token, strlen(token));
        free(token);
        return -1;
    }
    if (ctl->tls)
        peer_identity_text(tls_credentials_identity(ctl->tls), self, sizeof(self));
    /* The channel keeps its own copy. */
    struct rpc_channel_auth auth = { .bearer_token = token, .tls = ctl->tls, .server = self };
    ctl->channel = rpc_channel_open(ctl->addr, &auth);
    if (token) {
        explicit_bzero(token, strlen(token));
        free(token);
    }
    if (!ctl->channel) {
        ctl_print_status(GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
        return -1;
    }
    if (rpc_channel_wait_ready(ctl->channel, ctl->connect_timeout_ms) < 0) {
        char msg[512];
        snprintf(msg, sizeof(msg), "cannot reach vmhost at %s within %d ms", ctl->addr,
                 ctl->connect_timeout_ms);
        ctl_print_status(GRPC_STATUS_UNAVAILABLE, msg);
        return -1;
    }
    return 0;
}

void ctl_print_status(grpc_status_code code, const char *details)
{
    fprintf(stderr, "vmhostctl: %s: %s\n", rpc_status_name(code),
            details && *details ? details : "(no message)");
}

int ctl_unary(struct ctl *ctl, const char *method, const ProtobufCMessage *req,
              const ProtobufCMessageDescriptor *resp_desc, ProtobufCMessage **resp)
{
    if (ctl_connect(ctl) < 0)
        return -1;
    char *details = NULL;
    grpc_status_code code =
        rpc_unary(ctl->channel, method, req, resp_desc, resp, &details, ctl->call_timeout_ms);
    if (code != GRPC_STATUS_OK)
        ctl_print_status(code, details);
    free(details);
    return code == GRPC_STATUS_OK ? 0 : -1;
}

int ctl_finish_stream(struct rpc_stream *s)
{
    char *details = NULL;
    grpc_status_code code = rpc_stream_finish(s, &details);
    if (code != GRPC_STATUS_OK)
        ctl_print_status(code, details);
    free(details);
    return code == GRPC_STATUS_OK ? 0 : -1;
}
