/* Checkpoints and fork on a real vmhost: a disk checkpoint brings back a
 * project directory after `rm -rf`; a full checkpoint brings back a python
 * process with the value it held in memory (in place, and in a fork of the
 * checkpoint); a fork of a live sandbox gives independent sandboxes with
 * their own files and random numbers; unknown checkpoints are NOT_FOUND
 * naming them, taken names ALREADY_EXISTS, a paused sandbox cannot be
 * checkpointed (FAILED_PRECONDITION naming the state); deleting a sandbox
 * removes its checkpoints, and nothing temporary is left behind. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsutil.h"
#include "itest.h"
#include "itest_assert.h"
#include "itest_group.h"

#define STATE(s) AIRLOCK__VMHOST__V1__SANDBOX_STATE__SANDBOX_STATE_##s
#define KIND(k) AIRLOCK__VMHOST__V1__CHECKPOINT_KIND__CHECKPOINT_KIND_##k

/* Room for a source and three forks: a fork of four fails for capacity. */
#define MAX_SANDBOXES "4"

static int group_setup(void **state)
{
    (void)state;
    const char *const args[] = { "--max-sandboxes", MAX_SANDBOXES, NULL };
    return itest_vmhost_start(&itest_vh, args);
}

static grpc_status_code create_checkpoint(const char *id, const char *name, int kind,
                                          char **details)
{
    return itest_create_checkpoint(&itest_vh, id, name, kind, details);
}

static void must_create_checkpoint(const char *id, const char *name, int kind)
{
    char *details = NULL;
    if (create_checkpoint(id, name, kind, &details) != GRPC_STATUS_OK) {
        itest_vmhost_print_log_tail(&itest_vh);
        fail_msg("CreateCheckpoint %s: %s", name, details ? details : "?");
    }
    free(details);
}

/* DeleteCheckpoint (Empty) or RestoreCheckpoint (Sandbox). */
static grpc_status_code checkpoint_call(const char *method, const char *id, const char *name,
                                        char **details)
{
    Airlock__Vmhost__V1__CheckpointRequest req = AIRLOCK__VMHOST__V1__CHECKPOINT_REQUEST__INIT;
    req.sandbox_id = (char *)id;
    req.name = (char *)name;
    bool restore = strcmp(method, ITEST_METHOD("RestoreCheckpoint")) == 0;
    ProtobufCMessage *resp = NULL;
    grpc_status_code st = rpc_unary(itest_vh.ch, method, &req.base,
                                    restore ? &airlock__vmhost__v1__sandbox__descriptor
                                            : &airlock__vmhost__v1__empty__descriptor,
                                    &resp, details, ITEST_CALL_TIMEOUT_MS);
    if (st == GRPC_STATUS_OK && restore)
        assert_int_equal(((Airlock__Vmhost__V1__Sandbox *)resp)->state, STATE(RUNNING));
    if (resp)
        protobuf_c_message_free_unpacked(resp, NULL);
    return st;
}

static void must_restore(const char *id, const char *name)
{
    char *details = NULL;
    if (checkpoint_call(ITEST_METHOD("RestoreCheckpoint"), id, name, &details) != GRPC_STATUS_OK) {
        itest_vmhost_print_log_tail(&itest_vh);
        fail_msg("RestoreCheckpoint %s: %s", name, details ? details : "?");
    }
    free(details);
}

/* "name:KIND,..." of ListCheckpoints, malloc'd. */
static char *list_checkpoints(const char *id)
{
    Airlock__Vmhost__V1__ListCheckpointsRequest req =
        AIRLOCK__VMHOST__V1__LIST_CHECKPOINTS_REQUEST__INIT;
    req.sandbox_id = (char *)id;
    Airlock__Vmhost__V1__ListCheckpointsResponse *resp = NULL;
    assert_int_equal(rpc_unary(itest_vh.ch, ITEST_METHOD("ListCheckpoints"), &req.base,
                               &airlock__vmhost__v1__list_checkpoints_response__descriptor,
                               (ProtobufCMessage **)&resp, NULL, ITEST_CALL_TIMEOUT_MS),
                     GRPC_STATUS_OK);
    char buf[1024] = "";
    for (size_t i = 0; i < resp->n_checkpoints; i++) {
        const Airlock__Vmhost__V1__Checkpoint *c = resp->checkpoints[i];
        assert_string_equal(c->sandbox_id, id);
        assert_true(c->created_unix_ms > 0);
        size_t len = strlen(buf);
        snprintf(buf + len, sizeof(buf) - len, "%s%s:%s", i ? "," : "", c->name,
                 c->kind == KIND(FULL) ? "FULL" : "DISK");
    }
    protobuf_c_message_free_unpacked(&resp->base, NULL);
    return strdup(buf);
}

static void assert_checkpoints(const char *id, const char *want)
{
    char *got = list_checkpoints(id);
    assert_string_equal(got, want);
    free(got);
}

static char *sh_out(const char *id, const char *script)
{
    return itest_assert_sh(&itest_vh, id, script);
}

static void assert_sh_out(const char *id, const char *script, const char *want)
{
    char *out = sh_out(id, script);
    assert_string_equal(out, want);
    free(out);
}

/* Nothing under sandboxes/ but sandbox directories (no pins, no temps). */
static void assert_no_temporaries(void)
{
    char dir[PATH_MAX];
    assert_int_equal(fs_path(dir, sizeof(dir), "%s/store/sandboxes", itest_vh.data_dir), 0);
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] == '.' && strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            fail_msg("left behind: %s/%s", dir, e->d_name);
    closedir(d);
}

static void test_disk_checkpoint_reverts_rm_rf(void **state)
{
    (void)state;
    char *id = itest_assert_create(&itest_vh);
    free(sh_out(id, "mkdir -p /root/project/src && echo 'print(1)' > /root/project/src/main.py"
                    " && echo notes > /root/project/README"));
    must_create_checkpoint(id, "before-rm", KIND(DISK));
    assert_checkpoints(id, "before-rm:DISK");
    char *details = NULL;
    itest_assert_status_naming(create_checkpoint(id, "before-rm", KIND(DISK), &details), &details,
                               GRPC_STATUS_ALREADY_EXISTS, "before-rm");
    details = NULL;
    itest_assert_status_naming(create_checkpoint(id, "Bad/Name", KIND(DISK), &details), &details,
                               GRPC_STATUS_INVALID_ARGUMENT, "name");

    free(sh_out(id, "rm -rf /root/project && echo after > /root/after"));
    must_restore(id, "before-rm");
    assert_sh_out(id, "cat /root/project/src/main.py /root/project/README", "print(1)\nnotes\n");
    assert_sh_out(id, "test -e /root/after && echo present || echo gone", "gone\n");
    char want_host[80];
    snprintf(want_host, sizeof(want_host), "%s\n", id);
    assert_sh_out(id, "hostname", want_host); /* the guest init ran after the cold boot */

    details = NULL;
    itest_assert_status_naming(
        checkpoint_call(ITEST_METHOD("RestoreCheckpoint"), id, "no-such-ckpt", &details), &details,
        GRPC_STATUS_NOT_FOUND, "no-such-ckpt");
    details = NULL;
    itest_assert_status_naming(
        checkpoint_call(ITEST_METHOD("DeleteCheckpoint"), id, "no-such-ckpt", &details), &details,
        GRPC_STATUS_NOT_FOUND, "no-such-ckpt");

    /* Paused: no checkpoint, named state. */
    grpc_status_code st;
    Airlock__Vmhost__V1__Sandbox *sb =
        itest_sandbox_call(&itest_vh, ITEST_METHOD("PauseSandbox"), id, &st, NULL);
    assert_int_equal(st, GRPC_STATUS_OK);
    protobuf_c_message_free_unpacked(&sb->base, NULL);
    details = NULL;
    itest_assert_status_naming(create_checkpoint(id, "while-paused", KIND(DISK), &details),
                               &details, GRPC_STATUS_FAILED_PRECONDITION, "paused");
    /* Restore also revives a paused sandbox. */
    must_restore(id, "before-rm");
    assert_sh_out(id, "cat /root/project/README", "notes\n");

    must_create_checkpoint(id, "second", KIND(DISK));
    assert_checkpoints(id, "before-rm:DISK,second:DISK");
    details = NULL;
    assert_int_equal(checkpoint_call(ITEST_METHOD("DeleteCheckpoint"), id, "second", &details),
                     GRPC_STATUS_OK);
    free(details);
    assert_checkpoints(id, "before-rm:DISK");
    assert_false(itest_sandbox_path_exists(&itest_vh, id, "checkpoints/second"));

    assert_true(itest_sandbox_path_exists(&itest_vh, id, "checkpoints/before-rm/disk.ext4"));
    assert_int_equal(itest_delete_sandbox(&itest_vh, id), GRPC_STATUS_OK);
    assert_false(itest_sandbox_path_exists(&itest_vh, id, "checkpoints"));
    assert_false(itest_sandbox_path_exists(&itest_vh, id, ""));
    assert_no_temporaries();
    free(id);
}

/* ForkSandbox; the forks' ids (count of them, malloc'd) or NULL (then see *st and *details). */
static char **fork_sandbox(const char *id, unsigned count, const char *checkpoint,
                           grpc_status_code *st, char **details)
{
    Airlock__Vmhost__V1__ForkSandboxRequest req = AIRLOCK__VMHOST__V1__FORK_SANDBOX_REQUEST__INIT;
    req.sandbox_id = (char *)id;
    req.count = count;
    req.checkpoint = (char *)(checkpoint ? checkpoint : "");
    Airlock__Vmhost__V1__ForkSandboxResponse *resp = NULL;
    *st = rpc_unary(itest_vh.ch, ITEST_METHOD("ForkSandbox"), &req.base,
                    &airlock__vmhost__v1__fork_sandbox_response__descriptor,
                    (ProtobufCMessage **)&resp, details, ITEST_CALL_TIMEOUT_MS);
    if (*st != GRPC_STATUS_OK)
        return NULL;
    assert_int_equal(resp->n_sandboxes, count);
    char **ids = calloc(count, sizeof(*ids));
    for (unsigned i = 0; i < count; i++) {
        assert_int_equal(resp->sandboxes[i]->state, STATE(RUNNING));
        ids[i] = strdup(resp->sandboxes[i]->id);
    }
    protobuf_c_message_free_unpacked(&resp->base, NULL);
    return ids;
}

static char **must_fork(const char *id, unsigned count, const char *checkpoint)
{
    grpc_status_code st;
    char *details = NULL;
    char **ids = fork_sandbox(id, count, checkpoint, &st, &details);
    if (!ids) {
        itest_vmhost_print_log_tail(&itest_vh);
        fail_msg("ForkSandbox: %s", details ? details : "?");
    }
    free(details);
    return ids;
}

/* A python process holding a random value only in memory; it rewrites
 * /root/py.txt ("pid secret") every 0.2 s. */
static void start_python(const char *id)
{
    free(sh_out(id, "setsid python3 -c 'import os, time\n"
                    "secret = os.urandom(8).hex()\n"
                    "while True:\n"
                    "    open(\"/root/py.tmp\", \"w\").write(str(os.getpid()) + \" \" + secret)\n"
                    "    os.rename(\"/root/py.tmp\", \"/root/py.txt\")\n"
                    "    time.sleep(0.2)\n' </dev/null >/dev/null 2>&1 &"
                    "for i in $(seq 600); do [ -s /root/py.txt ] && break; sleep 0.1; done"));
}

/* "pid secret" once the process has rewritten the file afresh. */
static char *python_says(const char *id)
{
    return sh_out(id, "rm -f /root/py.txt; for i in $(seq 600); do [ -s /root/py.txt ] && break;"
                      " sleep 0.1; done; cat /root/py.txt");
}

static void test_full_checkpoint_restores_memory(void **state)
{
    (void)state;
    char *id = itest_assert_create(&itest_vh);
    start_python(id);
    char *before = python_says(id);
    must_create_checkpoint(id, "with-python", KIND(FULL));
    assert_checkpoints(id, "with-python:FULL");
    /* Still running after the checkpoint, same process. */
    char *still = python_says(id);
    assert_string_equal(still, before);
    free(still);

    /* Gone after this: the process, and its file. */
    char kill_it[128];
    snprintf(kill_it, sizeof(kill_it),
             "kill -9 %d; while kill -0 %d 2>/dev/null; do sleep 0.1; done; rm -f /root/py.txt",
             atoi(before), atoi(before));
    free(sh_out(id, kill_it));
    must_restore(id, "with-python");
    char *after = python_says(id);
    assert_string_equal(after, before); /* same pid, same in-memory secret */

    /* A fork of the checkpoint carries the same process and value. */
    char **forks = must_fork(id, 1, "with-python");
    char *in_fork = python_says(forks[0]);
    assert_string_equal(in_fork, before);
    free(in_fork);
    assert_int_equal(itest_delete_sandbox(&itest_vh, forks[0]), GRPC_STATUS_OK);
    free(forks[0]);
    free(forks);

    grpc_status_code st;
    char *details = NULL;
    assert_null(fork_sandbox(id, 1, "missing-one", &st, &details));
    itest_assert_status_naming(st, &details, GRPC_STATUS_NOT_FOUND, "missing-one");
    assert_int_equal(itest_delete_sandbox(&itest_vh, id), GRPC_STATUS_OK);
    assert_no_temporaries();
    free(before);
    free(after);
    free(id);
}

static void test_fork_live_sandbox(void **state)
{
    (void)state;
    char *id = itest_assert_create(&itest_vh);
    free(sh_out(id, "echo origin > /root/origin"));
    char **forks = must_fork(id, 2, NULL);
    char *a = forks[0], *b = forks[1];
    free(forks);
    assert_string_not_equal(a, b);
    assert_string_not_equal(a, id);

    /* Both run, both start from the source's files, each its own disk. */
    assert_sh_out(a, "cat /root/origin", "origin\n");
    assert_sh_out(b, "cat /root/origin", "origin\n");
    free(sh_out(a, "echo only-a > /root/mine"));
    assert_sh_out(b, "test -e /root/mine && echo present || echo absent", "absent\n");
    assert_sh_out(id, "test -e /root/mine && echo present || echo absent", "absent\n");
    /* The forks' random numbers differ (their CRNGs were reseeded). */
    char *ra = sh_out(a, "od -An -tx1 -N32 /dev/urandom");
    char *rb = sh_out(b, "od -An -tx1 -N32 /dev/urandom");
    assert_string_not_equal(ra, rb);
    free(ra);
    free(rb);
    char want_host[80];
    snprintf(want_host, sizeof(want_host), "%s\n", b);
    assert_sh_out(b, "hostname", want_host);

    /* The source continues, and bad counts are refused. */
    assert_sh_out(id, "cat /root/origin", "origin\n");
    grpc_status_code st;
    char *details = NULL;
    assert_null(fork_sandbox(id, 17, NULL, &st, &details));
    itest_assert_status_naming(st, &details, GRPC_STATUS_INVALID_ARGUMENT, "count");

    /* One fork: the source writes straight into the fork's pipe. */
    char **one = must_fork(id, 1, NULL);
    assert_sh_out(one[0], "cat /root/origin", "origin\n");
    assert_int_equal(itest_delete_sandbox(&itest_vh, one[0]), GRPC_STATUS_OK);
    free(one[0]);
    free(one);

    assert_int_equal(itest_delete_sandbox(&itest_vh, a), GRPC_STATUS_OK);
    assert_int_equal(itest_delete_sandbox(&itest_vh, b), GRPC_STATUS_OK);
    assert_int_equal(itest_delete_sandbox(&itest_vh, id), GRPC_STATUS_OK);
    assert_no_temporaries();
    free(a);
    free(b);
    free(id);
}

static void test_failed_fork_leaves_nothing(void **state)
{
    (void)state;
    char *id = itest_assert_create(&itest_vh);
    free(sh_out(id, "echo origin > /root/origin"));
    /* Four forks of a live sandbox on a node with room for three more: one
     * is refused, the stream to the others is cut, all or nothing. */
    grpc_status_code st;
    char *details = NULL;
    assert_null(fork_sandbox(id, 4, NULL, &st, &details));
    itest_assert_status_naming(st, &details, GRPC_STATUS_RESOURCE_EXHAUSTED, "full");
    /* The source was stopped while it streamed; it runs again. */
    assert_sh_out(id, "cat /root/origin", "origin\n");
    Airlock__Vmhost__V1__ListSandboxesResponse *list = itest_list_sandboxes(&itest_vh);
    assert_non_null(list);
    assert_int_equal(list->n_sandboxes, 1);
    assert_string_equal(list->sandboxes[0]->id, id);
    protobuf_c_message_free_unpacked(&list->base, NULL);
    assert_int_equal(itest_delete_sandbox(&itest_vh, id), GRPC_STATUS_OK);
    assert_no_temporaries();
    free(id);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_disk_checkpoint_reverts_rm_rf),
        cmocka_unit_test(test_full_checkpoint_restores_memory),
        cmocka_unit_test(test_fork_live_sandbox),
        cmocka_unit_test(test_failed_fork_leaves_nothing),
    };
    return cmocka_run_group_tests(tests, group_setup, itest_group_teardown);
}
