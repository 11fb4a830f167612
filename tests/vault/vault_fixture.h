/* One PostgreSQL and one airlock-vault for the whole test program, both
 * real, under a temp dir. vault_fixture_stop() (also at exit and on
 * SIGINT/SIGTERM) stops the vault by its pid, then PostgreSQL, and removes
 * the dir. */
#ifndef AIRLOCK_VAULT_FIXTURE_H
#define AIRLOCK_VAULT_FIXTURE_H

#include <stdbool.h>
#include <sys/types.h>

#include "db.h"
#include "pg_test.h"
#include "rpc_client.h"

struct vault_fixture {
    char dir[PATH_MAX];
    struct pg_test pg;
    pid_t vault_pid;
    char addr[PATH_MAX + 8];
    struct rpc_channel *ch;
    struct db db; /* direct access, to look at what vault stored */
    bool db_open;
};

/* 0, -1 after printing why, or 77 when PostgreSQL is not installed. */
int vault_fixture_start(struct vault_fixture *f);
void vault_fixture_stop(struct vault_fixture *f);
/* Stops airlock-vault (by its pid) and starts it again on the same
 * database and key: what it held only in memory is gone. 0 or -1. */
int vault_fixture_restart_vault(struct vault_fixture *f);

/* ResolveInjection as egress calls it (GET /, actor egress/test; ck: a
 * BYOK project's customer key of 32 bytes, or NULL; plaintext: for a
 * plain-HTTP request): its status, and "name: value" or the details in
 * out (512 bytes). */
grpc_status_code vault_fixture_resolve(struct vault_fixture *f, const char *project,
                                       const char *sandbox, const char *host,
                                       const unsigned char *ck, bool plaintext, char *out);
/* "action/status[@host]" of each audit row of project (and org: "" for
 * none), oldest first, joined by spaces; -1 when ListAudit failed. */
int vault_fixture_audit_summary(struct vault_fixture *f, const char *project, const char *org,
                                char *out, size_t len);

#endif
