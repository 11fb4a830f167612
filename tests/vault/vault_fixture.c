#include "vault_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "fsutil.h"
#include "test_proc.h"
#include "vault.pb-c.h"

#define VAULT_METHOD(name) "/airlock.vault.v1.Vault/" name

static struct vault_fixture *fixture_current;

static void fixture_cleanup(void)
{
    if (fixture_current)
        vault_fixture_stop(fixture_current);
}

/* Starts airlock-vault and waits for its socket; 0 or -1. */
static int spawn_vault(struct vault_fixture *f)
{
    char key[PATH_MAX];
    fs_path(key, sizeof(key), "%s/master.key", f->dir);
    const char *argv[] = { AIRLOCK_VAULT_BIN, "--database", f->pg.url, "--master-key-file", key,
                           "--listen", f->addr, NULL };
    f->vault_pid = test_spawn(argv, f->dir, "vault.log");
    int64_t deadline = clock_monotonic_ms() + 60000;
    while (access(f->addr + 5, F_OK) != 0) {
        if (clock_monotonic_ms() > deadline || waitpid(f->vault_pid, NULL, WNOHANG) != 0) {
            fprintf(stderr, "vault_fixture: airlock-vault did not come up\n");
            test_print_log_tail(f->dir, "vault.log");
            return -1;
        }
        usleep(20 * 1000);
    }
    f->ch = rpc_channel_open(f->addr, NULL);
    return f->ch ? 0 : -1;
}

int vault_fixture_start(struct vault_fixture *f)
{
    memset(f, 0, sizeof(*f));
    if (test_temp_dir(f->dir, sizeof(f->dir), "airlock-vault") < 0)
        return -1;
    fixture_current = f;
    test_cleanup_install(fixture_cleanup);
    int rc = pg_test_start(&f->pg, f->dir);
    if (rc != 0)
        return rc;
    char err[1024];
    if (db_open(&f->db, f->pg.url, err, sizeof(err)) < 0) {
        fprintf(stderr, "vault_fixture: %s\n", err);
        return -1;
    }
    f->db_open = true;
    fs_path(f->addr, sizeof(f->addr), "unix:%s/vault.sock", f->dir);
    return spawn_vault(f);
}

int vault_fixture_restart_vault(struct vault_fixture *f)
{
    rpc_channel_close(f->ch);
    f->ch = NULL;
    test_stop_pid(&f->vault_pid, f->dir, "vault.log", true);
    unlink(f->addr + 5);
    return spawn_vault(f);
}

void vault_fixture_stop(struct vault_fixture *f)
{
    if (f->ch)
        rpc_channel_close(f->ch);
    f->ch = NULL;
    test_stop_pid(&f->vault_pid, f->dir, "vault.log", true);
    if (f->db_open)
        db_close(&f->db);
    f->db_open = false;
    pg_test_stop(&f->pg);
    if (f->dir[0] && !getenv("AIRLOCK_TEST_KEEP"))
        fs_remove_tree(f->dir, NULL, 0);
    f->dir[0] = '\0';
    if (fixture_current == f)
        fixture_current = NULL;
}

grpc_status_code vault_fixture_resolve(struct vault_fixture *f, const char *project,
                                       const char *sandbox, const char *host,
                                       const unsigned char *ck, bool plaintext, char *out)
{
    Airlock__Vault__V1__ResolveInjectionRequest req =
        AIRLOCK__VAULT__V1__RESOLVE_INJECTION_REQUEST__INIT;
    req.plaintext = plaintext;
    req.project_id = (char *)project;
    req.sandbox_id = (char *)sandbox;
    req.host = (char *)host;
    req.method = "GET";
    req.path = "/";
    req.actor = "egress/test";
    if (ck) {
        req.customer_key.data = (uint8_t *)ck;
        req.customer_key.len = 32;
    }
    ProtobufCMessage *resp = NULL;
    char *why = NULL;
    grpc_status_code st =
        rpc_unary(f->ch, VAULT_METHOD("ResolveInjection"), &req.base,
                  &airlock__vault__v1__injection__descriptor, &resp, &why, 10000);
    Airlock__Vault__V1__Injection *inj = (void *)resp;
    snprintf(out, 512, "%s%s%s", inj ? inj->header_name : "", inj ? ": " : "",
             inj ? inj->header_value : why ? why : "");
    if (resp)
        protobuf_c_message_free_unpacked(resp, NULL);
    free(why);
    return st;
}

int vault_fixture_audit_summary(struct vault_fixture *f, const char *project, const char *org,
                                char *out, size_t len)
{
    Airlock__Vault__V1__ListAuditRequest req = AIRLOCK__VAULT__V1__LIST_AUDIT_REQUEST__INIT;
    req.project_id = (char *)project;
    req.org_id = (char *)org;
    ProtobufCMessage *resp = NULL;
    out[0] = '\0';
    if (rpc_unary(f->ch, VAULT_METHOD("ListAudit"), &req.base,
                  &airlock__vault__v1__list_audit_response__descriptor, &resp, NULL,
                  10000) != GRPC_STATUS_OK)
        return -1;
    Airlock__Vault__V1__ListAuditResponse *list = (void *)resp;
    size_t used = 0;
    for (size_t i = list->n_entries; i-- > 0 && used < len;) {
        Airlock__Vault__V1__AuditEntry *e = list->entries[i];
        used += (size_t)snprintf(out + used, len - used, "%s%s/%s%s%s", used ? " " : "", e->action,
                                 e->status, *e->host ? "@" : "", e->host);
    }
    protobuf_c_message_free_unpacked(resp, NULL);
    return 0;
}
