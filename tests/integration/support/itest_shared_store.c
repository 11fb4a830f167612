#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "itest_assert.h"
#include "itest_group.h"
#include "itest_shared_store.h"

#define STATE(s) AIRLOCK__VMHOST__V1__SANDBOX_STATE__SANDBOX_STATE_##s

int itest_store_pair_start(char *dir, struct itest_vmhost *b, const char *const b_extra[])
{
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return -1;
    }
    const char *args[32] = { "--snapshot-store", dir };
    size_t n = 2;
    for (size_t i = 0; b_extra && b_extra[i] && n < 31; i++)
        args[n++] = b_extra[i];
    args[n] = NULL;
    const char *const a_args[] = { "--snapshot-store", dir, NULL };
    if (itest_vmhost_start(&itest_vh, a_args) < 0 || itest_vmhost_start(b, args) < 0)
        return -1;
    return 0;
}

int itest_store_pair_stop(const char *dir, struct itest_vmhost *b, void **state)
{
    int rc = itest_vmhost_stop(b) < 0 ? -1 : 0;
    if (itest_group_teardown(state) < 0)
        rc = -1;
    char err[256];
    if (fs_remove_tree(dir, err, sizeof(err)) < 0) {
        fprintf(stderr, "itest: remove %s: %s\n", dir, err);
        rc = -1;
    }
    return rc;
}

grpc_status_code itest_call_with_object(struct itest_vmhost *vh, const char *method,
                                        const char *id, const char *object,
                                        const ProtobufCMessageDescriptor *resp, char **details)
{
    Airlock__Vmhost__V1__SandboxRef req = AIRLOCK__VMHOST__V1__SANDBOX_REF__INIT;
    req.id = (char *)id;
    req.store_object = (char *)object;
    return itest_call(vh, method, &req.base, resp, details);
}

grpc_status_code itest_resume_from(struct itest_vmhost *vh, const char *id, const char *object,
                                   char **details)
{
    return itest_call_with_object(vh, ITEST_METHOD("ResumeSandbox"), id, object,
                                  &airlock__vmhost__v1__sandbox__descriptor, details);
}

char *itest_assert_suspend_to_store(struct itest_vmhost *vh, const char *id)
{
    grpc_status_code st;
    char *details = NULL;
    Airlock__Vmhost__V1__Sandbox *sb =
        itest_sandbox_call(vh, ITEST_METHOD("SuspendSandbox"), id, &st, &details);
    if (st != GRPC_STATUS_OK) {
        itest_vmhost_print_log_tail(vh);
        fail_msg("SuspendSandbox %s: %s", id, details ? details : "?");
    }
    free(details);
    assert_int_equal(sb->state, STATE(SUSPENDED));
    assert_true(strncmp(sb->store_object, "sandboxes/", 10) == 0);
    assert_non_null(strstr(sb->store_object, id));
    char *object = strdup(sb->store_object);
    protobuf_c_message_free_unpacked(&sb->base, NULL);
    return object;
}

void itest_assert_resume_from(struct itest_vmhost *vh, const char *id, const char *object)
{
    char *details = NULL;
    if (itest_resume_from(vh, id, object, &details) != GRPC_STATUS_OK) {
        itest_vmhost_print_log_tail(vh);
        fail_msg("ResumeSandbox %s from %s: %s", id, object, details ? details : "?");
    }
    free(details);
    Airlock__Vmhost__V1__Sandbox *sb = itest_assert_get(vh, id);
    assert_int_equal(sb->state, STATE(RUNNING));
    protobuf_c_message_free_unpacked(&sb->base, NULL);
}

void itest_workload_start(struct itest_vmhost *vh, const char *id)
{
    free(itest_assert_sh(
        vh, id,
        "setsid sh -c 'i=0; while true; do i=$((i+1)); echo $i > /root/counter.tmp;"
        " mv /root/counter.tmp /root/counter; sleep 0.2; done' </dev/null >/dev/null 2>&1 &"
        " echo $! > /root/pids;"
        "setsid python3 -c 'import os, time\n"
        "secret = os.urandom(8).hex()\n"
        "while True:\n"
        "    open(\"/root/py.tmp\", \"w\").write(secret)\n"
        "    os.rename(\"/root/py.tmp\", \"/root/py.txt\")\n"
        "    time.sleep(0.2)\n' </dev/null >/dev/null 2>&1 & echo $! >> /root/pids;"
        "head -c 4M /dev/urandom > /root/blob; sha256sum /root/blob > /root/blob.sum;"
        "for i in $(seq 600); do [ -s /root/py.txt ] && [ -s /root/counter ] && break;"
        " sleep 0.1; done; sleep 0.5"));
}

void itest_workload_read(struct itest_vmhost *vh, const char *id, struct itest_workload *w)
{
    char *out = itest_assert_sh(vh, id,
                                "cat /root/pids | tr '\\n' ,; echo; cat /root/counter;"
                                " cat /root/py.txt; echo; sha256sum -c --quiet /root/blob.sum"
                                " && echo blob-ok");
    char blob[16] = "";
    assert_int_equal(sscanf(out, "%127s %ld %63s %15s", w->pids, &w->counter, w->secret, blob),
                     4);
    assert_string_equal(blob, "blob-ok");
    free(out);
}

void itest_assert_workload_carried_on(struct itest_vmhost *vh, const char *id,
                                      const struct itest_workload *before)
{
    free(itest_assert_sh(vh, id, "sleep 1"));
    struct itest_workload after;
    itest_workload_read(vh, id, &after);
    assert_string_equal(after.pids, before->pids);
    assert_string_equal(after.secret, before->secret);
    assert_true(after.counter > before->counter);
}

void itest_flip_middle_byte(const char *path)
{
    int fd = open(path, O_RDWR | O_CLOEXEC);
    assert_true(fd >= 0);
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    unsigned char b;
    assert_int_equal(pread(fd, &b, 1, st.st_size / 2), 1);
    b ^= 0xa5;
    assert_int_equal(pwrite(fd, &b, 1, st.st_size / 2), 1);
    close(fd);
}
