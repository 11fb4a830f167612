#include "vault_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "clock.h"
#include "fsutil.h"
#include "test_proc.h"

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
