#include "upstream.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openssl/pem.h>

#include "clock.h"
#include "fsutil.h"
#include "pg_test.h"
#include "sandbox_ca.h"
#include "test_proc.h"

#define UPSTREAM_START_TIMEOUT_MS 20000

static int write_pem(const char *path, X509 *cert, EVP_PKEY *key)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    int ok = cert ? PEM_write_X509(f, cert)
                  : PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL);
    return fclose(f) == 0 && ok ? 0 : -1;
}

/* Made with egress's own CA code: the same kind of chain egress checks. */
static int make_certificate(struct upstream *u, const char *host, const char *cert_path,
                            const char *key_path)
{
    char err[256];
    struct sandbox_ca *ca = sandbox_ca_open("upstream-test", NULL, err, sizeof(err));
    X509 *cert = NULL;
    EVP_PKEY *key = NULL;
    int rc = -1;
    if (!ca || sandbox_ca_leaf(ca, host, &cert, &key, err, sizeof(err)) < 0) {
        fprintf(stderr, "upstream: test CA: %s\n", err);
        goto out;
    }
    if (fs_write_file_atomic(u->ca_path, sandbox_ca_pem(ca), strlen(sandbox_ca_pem(ca)), 0644,
                             err, sizeof(err)) < 0 ||
        write_pem(cert_path, cert, NULL) < 0 || write_pem(key_path, NULL, key) < 0) {
        fprintf(stderr, "upstream: cannot write the certificates under %s\n", u->dir);
        goto out;
    }
    rc = 0;
out:
    X509_free(cert);
    EVP_PKEY_free(key);
    sandbox_ca_free(ca);
    return rc;
}

int upstream_start(struct upstream *u, const char *dir, const char *ns, const char *addr,
                   const char *host, int http_port, int https_port)
{
    memset(u, 0, sizeof(*u));
    char cert[PATH_MAX + 32], key[PATH_MAX + 32], ready[PATH_MAX + 32], ports[2][16];
    snprintf(u->dir, sizeof(u->dir), "%s", dir);
    snprintf(u->ca_path, sizeof(u->ca_path), "%s/upstream-ca.pem", dir);
    snprintf(u->log_path, sizeof(u->log_path), "%s/upstream.log", dir);
    snprintf(cert, sizeof(cert), "%s/upstream.crt", dir);
    snprintf(key, sizeof(key), "%s/upstream.key", dir);
    snprintf(ready, sizeof(ready), "%s/upstream.ready", dir);
    snprintf(ports[0], sizeof(ports[0]), "%d", http_port);
    snprintf(ports[1], sizeof(ports[1]), "%d", https_port);
    if (make_certificate(u, host, cert, key) < 0)
        return -1;
    const char *argv[] = { "/bin/ip",       "netns",  "exec",   ns,       "/usr/bin/python3",
                           AIRLOCK_UPSTREAM_SERVER, addr, ports[0], ports[1], u->log_path,
                           cert,            key,      ready,    NULL };
    u->pid = test_spawn(argv, dir, "upstream-server.log");
    if (u->pid <= 0)
        return -1;
    int64_t deadline = clock_monotonic_ms() + UPSTREAM_START_TIMEOUT_MS;
    while (access(ready, F_OK) != 0) {
        bool died = waitpid(u->pid, NULL, WNOHANG) == u->pid;
        if (died || clock_monotonic_ms() > deadline) {
            fprintf(stderr, "upstream: the servers did not start%s\n",
                    died ? ": the process died" : "");
            test_print_log_tail(dir, "upstream-server.log");
            if (died)
                u->pid = 0;
            return -1;
        }
        usleep(20 * 1000);
    }
    return 0;
}

int upstream_stop(struct upstream *u)
{
    if (u->pid <= 0)
        return 0;
    return test_stop_pid(&u->pid, u->dir, "upstream-server.log", true);
}

static char *read_log(const struct upstream *u)
{
    char *data = NULL, err[256];
    size_t len;
    if (fs_read_file(u->log_path, 16 << 20, &data, &len, err, sizeof(err)) < 0)
        return strdup("");
    return data;
}

size_t upstream_requests(const struct upstream *u, const char *a, const char *b)
{
    char *log = read_log(u), *save = NULL;
    size_t n = 0;
    for (char *line = strtok_r(log, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
        n += strstr(line, a) && (!b || strstr(line, b));
    free(log);
    return n;
}

char *upstream_request(const struct upstream *u, const char *path)
{
    char needle[512], *log = read_log(u), *found = NULL, *save = NULL;
    snprintf(needle, sizeof(needle), "\"path\": \"%s\"", path);
    for (char *line = strtok_r(log, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
        if (strstr(line, needle)) {
            free(found);
            found = strdup(line);
        }
    free(log);
    return found;
}
