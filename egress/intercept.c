#include "intercept.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "cidr.h"
#include "dial.h"
#include "egress_state.h"
#include "fsutil.h"
#include "http_inject.h"
#include "log.h"
#include "tls_intercept.h"
#include "vault_client.h"

#define TLS_RECORD_HANDSHAKE 0x16

struct egress_injector {
    struct vault_client *vault;
    struct tls_intercept *tls;
    char ca_dir[PATH_MAX]; /* "" = sandbox CAs in memory only */
};

struct egress_injector *egress_injector_new(const struct egress_config *cfg, char *err,
                                            size_t errlen)
{
    struct egress_injector *inj = calloc(1, sizeof(*inj));
    if (!inj) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    char host[256] = "", actor[300];
    gethostname(host, sizeof(host) - 1);
    snprintf(actor, sizeof(actor), "egress/%s", host[0] ? host : "unknown");
    struct rpc_channel_auth auth = { .bearer_token = cfg->internal_token,
                                     .tls = cfg->internal_tls, .server = "vault" };
    inj->vault = vault_client_open(cfg->vault_addr, &auth, actor);
    if (!inj->vault) {
        snprintf(err, errlen, "vault client for %s: out of memory", cfg->vault_addr);
        goto fail;
    }
    inj->tls = tls_intercept_new(cfg->upstream_ca_file, err, errlen);
    if (!inj->tls)
        goto fail;
    if (cfg->state_dir) {
        if (fs_path(inj->ca_dir, sizeof(inj->ca_dir), "%s/sandbox-ca", cfg->state_dir) < 0) {
            snprintf(err, errlen, "--state-dir: path too long");
            goto fail;
        }
        /* The CA keys live here: only egress may read them. */
        if (fs_mkdir_p(inj->ca_dir, 0700, err, errlen) < 0 || chmod(inj->ca_dir, 0700) < 0)
            goto fail;
    }
    return inj;
fail:
    egress_injector_free(inj);
    return NULL;
}

void egress_injector_free(struct egress_injector *inj)
{
    if (!inj)
        return;
    vault_client_close(inj->vault);
    tls_intercept_free(inj->tls);
    free(inj);
}

struct sandbox_ca *egress_injector_sandbox_ca(struct egress_injector *inj, const char *sandbox_id,
                                              char *err, size_t errlen)
{
    return sandbox_ca_open(sandbox_id, inj->ca_dir[0] ? inj->ca_dir : NULL, err, errlen);
}

/* The connection as http_inject sees it. */
struct intercepted {
    struct egress_conn *c;
    const struct egress_target *t;
    const char *project_id;
    bool tls;
};

static void drop_upstream(struct egress_conn *c)
{
    pthread_mutex_lock(&c->sb->lock);
    int fd = c->upstream_fd;
    c->upstream_fd = -1;
    pthread_mutex_unlock(&c->sb->lock);
    if (fd >= 0)
        close(fd);
}

static int connect_upstream(void *ctx, struct conn_stream *up, char *err, size_t errlen)
{
    struct intercepted *ic = ctx;
    struct egress_sandbox *sb = ic->c->sb;
    int timeout_ms = sb->eg->cfg.connect_timeout_ms;
    char a[16];
    if (egress_dial(ic->c, ic->t->addr, ic->t->port, timeout_ms) < 0) {
        snprintf(err, errlen, "the upstream %s (%s:%u) is unreachable", ic->t->name,
                 addr_format(ic->t->addr, a), ic->t->port);
        drop_upstream(ic->c);
        return -1;
    }
    int fd = ic->c->upstream_fd;
    /* Blocking from here on, like the guest side: one thread serves the
     * connection a request at a time. */
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    if (!ic->tls) {
        *up = (struct conn_stream){ .fd = fd };
    } else if (tls_connect_upstream(sb->eg->injector->tls, fd, ic->t->name, timeout_ms, up, err,
                                    errlen) < 0) {
        drop_upstream(ic->c);
        return -1;
    }
    /* After the handshake, which bounds itself: an upstream silent for the
     * idle timeout ends the connection, as a silent guest does — else one
     * that accepts and never answers would hold this thread for good. */
    int idle = sb->eg->cfg.idle_timeout_ms;
    struct timeval tv = { .tv_sec = idle / 1000, .tv_usec = (idle % 1000) * 1000 };
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    return 0;
}

static void disconnect_upstream(void *ctx, struct conn_stream *up)
{
    struct intercepted *ic = ctx;
    conn_stream_close(up);
    drop_upstream(ic->c);
}

static grpc_status_code resolve(void *ctx, const char *method, const char *path,
                                Airlock__Vault__V1__Injection **out, char *err, size_t errlen)
{
    struct intercepted *ic = ctx;
    return vault_client_resolve(ic->c->sb->eg->injector->vault, ic->project_id, ic->c->sb->id,
                                ic->t->name, method, path, !ic->tls, out, err, errlen);
}

static void project_of(struct egress_sandbox *sb, char *project_id)
{
    pthread_mutex_lock(&sb->lock);
    memcpy(project_id, sb->project_id, sizeof(sb->project_id));
    pthread_mutex_unlock(&sb->lock);
}

bool egress_intercept_wanted(struct egress_conn *c, const struct egress_target *t,
                             size_t first_len)
{
    struct egress_sandbox *sb = c->sb;
    char project_id[sizeof(sb->project_id)];
    project_of(sb, project_id);
    return sb->eg->injector && sb->ca && project_id[0] && t->name && first_len > 0;
}

bool egress_intercept_bound(struct egress_conn *c, const struct egress_target *t)
{
    struct egress_sandbox *sb = c->sb;
    char project_id[sizeof(sb->project_id)], err[1024];
    project_of(sb, project_id);
    int bound = vault_client_host_bound(sb->eg->injector->vault, project_id, sb->id, t->name, err,
                                        sizeof(err));
    if (bound < 0)
        log_warn("credential binding unknown: not intercepted", "sandbox=%s host=%s error=\"%s\"",
                 sb->id, t->name, err);
    return bound > 0;
}

void egress_intercept_serve(struct egress_conn *c, const struct egress_target *t,
                            const uint8_t *first, size_t first_len, bool inject, uint64_t *sent,
                            uint64_t *received, const char **why)
{
    struct egress_sandbox *sb = c->sb;
    struct egress_injector *inj = sb->eg->injector;
    char project_id[sizeof(sb->project_id)], err[1024];
    project_of(sb, project_id);
    *sent = *received = 0;
    /* Blocking, as the upstream side will be: this thread serves the
     * connection a request at a time. */
    fcntl(c->client_fd, F_SETFL, fcntl(c->client_fd, F_GETFL) & ~O_NONBLOCK);
    struct intercepted ic = { .c = c, .t = t, .project_id = project_id,
                              .tls = first[0] == TLS_RECORD_HANDSHAKE };
    struct conn_stream guest = { .fd = c->client_fd };
    if (ic.tls) {
        X509 *cert = NULL;
        EVP_PKEY *key = NULL;
        int rc = sandbox_ca_leaf(sb->ca, t->name, &cert, &key, err, sizeof(err));
        if (rc == 0)
            rc = tls_accept_guest(inj->tls, c->client_fd, first, first_len, cert, key,
                                  sb->eg->cfg.sniff_timeout_ms, &guest, err, sizeof(err));
        X509_free(cert);
        EVP_PKEY_free(key);
        if (rc < 0) {
            log_warn("guest TLS failed", "sandbox=%s host=%s error=\"%s\"", sb->id, t->name, err);
            egress_reset(c->client_fd);
            *why = "guest_tls_failed";
            return;
        }
    }
    /* A guest silent for the idle timeout (between requests, or mid-way
     * through one) ends the connection: the read fails, the loop ends. */
    int idle = sb->eg->cfg.idle_timeout_ms;
    struct timeval tv = { .tv_sec = idle / 1000, .tv_usec = (idle % 1000) * 1000 };
    setsockopt(c->client_fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    struct http_inject_env env = { .sandbox_id = sb->id, .name = t->name, .ctx = &ic,
                                   .connect = connect_upstream,
                                   .disconnect = disconnect_upstream,
                                   .resolve = inject ? resolve : NULL };
    struct http_inject_stats st;
    http_inject_serve(&env, &guest, ic.tls ? NULL : first, ic.tls ? 0 : first_len, &st);
    conn_stream_close(&guest);
    *sent = st.sent;
    *received = st.received;
    *why = st.failure;
    log_info("intercepted connection ended",
             "sandbox=%s host=%s tls=%d mode=%s requests=%u injected=%u redacted=%u end=%s",
             sb->id, t->name, ic.tls, inject ? "inject" : "inspect", st.requests, st.injected,
             st.redacted,
             st.failure ? st.failure : "closed");
}
