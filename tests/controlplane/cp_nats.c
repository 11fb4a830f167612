#include "cp_nats.h"

#include <stdio.h>
#include <string.h>

#include "nats_credentials.h"

natsStatus cp_nats_connect(const char *url, const char *creds_file, const struct tls_files *tls,
                           natsErrHandler on_error, void *closure, natsConnection **nc)
{
    char err[512];
    struct nats_credentials c;
    memset(&c, 0, sizeof(c));
    if (creds_file && nats_credentials_load(creds_file, &c, err, sizeof(err)) < 0) {
        fprintf(stderr, "cp_nats: %s\n", err);
        return NATS_ERR;
    }
    c.tls = tls;
    natsOptions *opts = NULL;
    natsStatus st = natsOptions_Create(&opts);
    if (st == NATS_OK)
        st = natsOptions_SetURL(opts, url);
    if (st == NATS_OK)
        st = nats_credentials_apply(opts, &c);
    if (st == NATS_OK && on_error)
        st = natsOptions_SetErrorHandler(opts, on_error, closure);
    if (st == NATS_OK)
        st = natsConnection_Connect(nc, opts);
    natsOptions_Destroy(opts);
    nats_credentials_free(&c);
    return st;
}
