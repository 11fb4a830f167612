/* Files through vmhost's gRPC API in a real microVM: a 64 MiB round trip,
 * non-UTF-8 names, directory operations, and their errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "itest.h"
#include "itest_assert.h"
#include "itest_group.h"

#define P(s) (const uint8_t *)(s), strlen(s)

/* A simple xorshift stream: reproducible, incompressible test data. */
static void fill_pseudo_random(uint8_t *buf, size_t len, uint64_t seed)
{
    uint64_t x = seed;
    for (size_t i = 0; i < len; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        buf[i] = (uint8_t)x;
    }
}

static void test_64mib_round_trip(void **state)
{
    (void)state;
    size_t len = 64u << 20;
    uint8_t *data = malloc(len);
    fill_pseudo_random(data, len, 0x5eed);
    char *details = NULL;
    assert_int_equal(
        itest_write_file(&itest_vh, itest_sandbox_id, P("/root/big.bin"), data, len, &details),
        GRPC_STATUS_OK);
    free(details);

    /* The guest sees the same bytes: compare its SHA-256 with ours. */
    uint8_t digest[32];
    unsigned digest_len = 0;
    assert_int_equal(EVP_Digest(data, len, digest, &digest_len, EVP_sha256(), NULL), 1);
    char want[80];
    for (unsigned i = 0; i < digest_len; i++)
        sprintf(want + 2 * i, "%02x", digest[i]);
    strcat(want, "  -\n");
    struct itest_exec_result r;
    itest_sh(&itest_vh, itest_sandbox_id, "sha256sum < /root/big.bin", &r);
    assert_int_equal(r.status, GRPC_STATUS_OK);
    assert_string_equal((char *)r.out, want);
    itest_exec_result_free(&r);

    uint8_t *back = NULL;
    size_t back_len = 0;
    assert_int_equal(
        itest_read_file(&itest_vh, itest_sandbox_id, P("/root/big.bin"), &back, &back_len, NULL),
        GRPC_STATUS_OK);
    assert_int_equal(back_len, len);
    assert_memory_equal(back, data, len);
    free(back);
    free(data);
}

static void test_non_utf8_file_name(void **state)
{
    (void)state;
    const char name[] = "/tmp/caf\xe9-\xff.txt";
    assert_int_equal(
        itest_write_file(&itest_vh, itest_sandbox_id, P(name), P("latin-1 name"), NULL),
        GRPC_STATUS_OK);
    uint8_t *back = NULL;
    size_t back_len = 0;
    assert_int_equal(itest_read_file(&itest_vh, itest_sandbox_id, P(name), &back, &back_len, NULL),
                     GRPC_STATUS_OK);
    assert_int_equal(back_len, strlen("latin-1 name"));
    assert_memory_equal(back, "latin-1 name", back_len);
    free(back);

    Airlock__Guest__V1__ListRequest lr = AIRLOCK__GUEST__V1__LIST_REQUEST__INIT;
    lr.path = (ProtobufCBinaryData){ .len = 4, .data = (uint8_t *)"/tmp" };
    Airlock__Vmhost__V1__ListDirRequest req = AIRLOCK__VMHOST__V1__LIST_DIR_REQUEST__INIT;
    req.sandbox_id = itest_sandbox_id;
    req.request = &lr;
    Airlock__Vmhost__V1__ListDirResponse *list = NULL;
    assert_int_equal(rpc_unary(itest_vh.ch, ITEST_METHOD("ListDir"), &req.base,
                               &airlock__vmhost__v1__list_dir_response__descriptor,
                               (ProtobufCMessage **)&list, NULL, ITEST_CALL_TIMEOUT_MS),
                     GRPC_STATUS_OK);
    bool found = false;
    for (size_t i = 0; i < list->n_entries; i++) {
        const ProtobufCBinaryData *n = &list->entries[i]->name;
        if (n->len == strlen(name) - 5 && memcmp(n->data, name + 5, n->len) == 0) {
            found = true;
            assert_int_equal(list->entries[i]->type, AIRLOCK__GUEST__V1__FILE_TYPE__FILE_TYPE_FILE);
            assert_int_equal(list->entries[i]->size, strlen("latin-1 name"));
        }
    }
    assert_true(found);
    protobuf_c_message_free_unpacked(&list->base, NULL);
}

/* RemoveFile (recursive or not) or StatFile of path. */
static grpc_status_code path_call(const char *method, const char *path, bool recursive,
                                  char **details)
{
    ProtobufCBinaryData p = { .len = strlen(path), .data = (uint8_t *)path };
    Airlock__Guest__V1__RemoveRequest rm = AIRLOCK__GUEST__V1__REMOVE_REQUEST__INIT;
    rm.path = p;
    rm.recursive = recursive;
    Airlock__Vmhost__V1__RemoveFileRequest remove = AIRLOCK__VMHOST__V1__REMOVE_FILE_REQUEST__INIT;
    remove.sandbox_id = itest_sandbox_id;
    remove.request = &rm;
    Airlock__Guest__V1__StatRequest sr = AIRLOCK__GUEST__V1__STAT_REQUEST__INIT;
    sr.path = p;
    Airlock__Vmhost__V1__StatFileRequest stat = AIRLOCK__VMHOST__V1__STAT_FILE_REQUEST__INIT;
    stat.sandbox_id = itest_sandbox_id;
    stat.request = &sr;
    bool is_stat = strstr(method, "Stat") != NULL;
    const ProtobufCMessageDescriptor *d = is_stat ? &airlock__guest__v1__file_info__descriptor
                                                  : &airlock__vmhost__v1__empty__descriptor;
    return itest_call(&itest_vh, method, is_stat ? &stat.base : &remove.base, d, details);
}

static void test_directory_operations(void **state)
{
    (void)state;
    Airlock__Guest__V1__MkdirRequest m = AIRLOCK__GUEST__V1__MKDIR_REQUEST__INIT;
    m.path = (ProtobufCBinaryData){ .len = strlen("/work/a/b/c"),
                                    .data = (uint8_t *)"/work/a/b/c" };
    m.parents = true;
    Airlock__Vmhost__V1__MakeDirRequest mk = AIRLOCK__VMHOST__V1__MAKE_DIR_REQUEST__INIT;
    mk.sandbox_id = itest_sandbox_id;
    mk.request = &m;
    assert_int_equal(itest_call(&itest_vh, ITEST_METHOD("MakeDir"), &mk.base,
                                &airlock__vmhost__v1__empty__descriptor, NULL),
                     GRPC_STATUS_OK);
    assert_int_equal(
        itest_write_file(&itest_vh, itest_sandbox_id, P("/work/a/b/c/f.txt"), P("x"), NULL),
        GRPC_STATUS_OK);

    Airlock__Guest__V1__RenameRequest r = AIRLOCK__GUEST__V1__RENAME_REQUEST__INIT;
    r.from = (ProtobufCBinaryData){ .len = strlen("/work/a/b/c/f.txt"),
                                    .data = (uint8_t *)"/work/a/b/c/f.txt" };
    r.to = (ProtobufCBinaryData){ .len = strlen("/work/a/g.txt"), .data = (uint8_t *)"/work/a/g.txt" };
    Airlock__Vmhost__V1__RenameFileRequest mv = AIRLOCK__VMHOST__V1__RENAME_FILE_REQUEST__INIT;
    mv.sandbox_id = itest_sandbox_id;
    mv.request = &r;
    assert_int_equal(itest_call(&itest_vh, ITEST_METHOD("RenameFile"), &mv.base,
                                &airlock__vmhost__v1__empty__descriptor, NULL),
                     GRPC_STATUS_OK);

    Airlock__Guest__V1__ChmodRequest c = AIRLOCK__GUEST__V1__CHMOD_REQUEST__INIT;
    c.path = r.to;
    c.mode = 0600;
    Airlock__Vmhost__V1__ChmodFileRequest cm = AIRLOCK__VMHOST__V1__CHMOD_FILE_REQUEST__INIT;
    cm.sandbox_id = itest_sandbox_id;
    cm.request = &c;
    assert_int_equal(itest_call(&itest_vh, ITEST_METHOD("ChmodFile"), &cm.base,
                                &airlock__vmhost__v1__empty__descriptor, NULL),
                     GRPC_STATUS_OK);

    Airlock__Guest__V1__StatRequest sr = AIRLOCK__GUEST__V1__STAT_REQUEST__INIT;
    sr.path = r.to;
    Airlock__Vmhost__V1__StatFileRequest st_req = AIRLOCK__VMHOST__V1__STAT_FILE_REQUEST__INIT;
    st_req.sandbox_id = itest_sandbox_id;
    st_req.request = &sr;
    Airlock__Guest__V1__FileInfo *info = NULL;
    assert_int_equal(rpc_unary(itest_vh.ch, ITEST_METHOD("StatFile"), &st_req.base,
                               &airlock__guest__v1__file_info__descriptor,
                               (ProtobufCMessage **)&info, NULL, ITEST_CALL_TIMEOUT_MS),
                     GRPC_STATUS_OK);
    assert_int_equal(info->mode & 07777, 0600);
    assert_int_equal(info->size, 1);
    assert_int_equal(info->type, AIRLOCK__GUEST__V1__FILE_TYPE__FILE_TYPE_FILE);
    protobuf_c_message_free_unpacked(&info->base, NULL);

    char *details = NULL;
    assert_int_equal(path_call(ITEST_METHOD("RemoveFile"), "/work/a", false, &details),
                     GRPC_STATUS_FAILED_PRECONDITION);
    free(details);
    assert_int_equal(path_call(ITEST_METHOD("RemoveFile"), "/work/a", true, NULL), GRPC_STATUS_OK);
    details = NULL;
    assert_int_equal(path_call(ITEST_METHOD("StatFile"), "/work/a", false, &details),
                     GRPC_STATUS_NOT_FOUND);
    assert_non_null(strstr(details, "/work/a"));
    free(details);
}

static void test_file_errors(void **state)
{
    (void)state;
    char *details = NULL;
    uint8_t *data = NULL;
    size_t len = 0;
    assert_int_equal(
        itest_read_file(&itest_vh, itest_sandbox_id, P("/no/such/file"), &data, &len, &details),
        GRPC_STATUS_NOT_FOUND);
    assert_non_null(strstr(details, "/no/such/file"));
    free(details);
    free(data);

    details = NULL;
    assert_int_equal(
        itest_write_file(&itest_vh, itest_sandbox_id, P("/no/such/dir/f"), P("x"), &details),
        GRPC_STATUS_NOT_FOUND);
    free(details);

    details = NULL;
    const uint8_t nul_path[] = { '/', 't', 'm', 'p', '/', 'a', 0, 'b' };
    assert_int_equal(itest_read_file(&itest_vh, itest_sandbox_id, nul_path, sizeof(nul_path), &data,
                                     &len, &details),
                     GRPC_STATUS_INVALID_ARGUMENT);
    assert_non_null(strstr(details, "path"));
    free(details);
    free(data);

    details = NULL;
    assert_int_equal(
        itest_read_file(&itest_vh, "sb_nope", P("/etc/hostname"), &data, &len, &details),
        GRPC_STATUS_NOT_FOUND);
    assert_non_null(strstr(details, "sb_nope"));
    free(details);
    free(data);

    /* An atomic write that failed left no temp files behind. */
    struct itest_exec_result r;
    itest_sh(&itest_vh, itest_sandbox_id, "ls -a /tmp /root | grep -c airlock || true", &r);
    assert_string_equal((char *)r.out, "0\n");
    itest_exec_result_free(&r);
}

/* The forwarded operations (vmhost/service_forward.c) check what they
 * carry before the guest sees it: no guest request, a path with a NUL, a
 * mode beyond 07777, an empty rename target — each INVALID_ARGUMENT naming
 * the field; a sandbox that does not exist NOT_FOUND naming it. */
static void expect_refused(const char *method, const ProtobufCMessage *req,
                           grpc_status_code want, const char *fragment)
{
    char *details = NULL;
    grpc_status_code st =
        itest_call(&itest_vh, method, req, &airlock__vmhost__v1__empty__descriptor, &details);
    itest_assert_status_naming(st, &details, want, fragment);
}

static void test_forwarded_requests_checked(void **state)
{
    (void)state;
    Airlock__Vmhost__V1__MakeDirRequest mk = AIRLOCK__VMHOST__V1__MAKE_DIR_REQUEST__INIT;
    mk.sandbox_id = itest_sandbox_id;
    expect_refused(ITEST_METHOD("MakeDir"), &mk.base, GRPC_STATUS_INVALID_ARGUMENT,
                   "request: required");

    Airlock__Guest__V1__MkdirRequest m = AIRLOCK__GUEST__V1__MKDIR_REQUEST__INIT;
    m.path = (ProtobufCBinaryData){ .len = 8, .data = (uint8_t *)"/tmp/a\0b" };
    mk.request = &m;
    expect_refused(ITEST_METHOD("MakeDir"), &mk.base, GRPC_STATUS_INVALID_ARGUMENT,
                   "path: contains a NUL byte");

    Airlock__Guest__V1__ChmodRequest c = AIRLOCK__GUEST__V1__CHMOD_REQUEST__INIT;
    c.path = (ProtobufCBinaryData){ .len = 4, .data = (uint8_t *)"/tmp" };
    c.mode = 010000;
    Airlock__Vmhost__V1__ChmodFileRequest cm = AIRLOCK__VMHOST__V1__CHMOD_FILE_REQUEST__INIT;
    cm.sandbox_id = itest_sandbox_id;
    cm.request = &c;
    expect_refused(ITEST_METHOD("ChmodFile"), &cm.base, GRPC_STATUS_INVALID_ARGUMENT, "mode:");

    Airlock__Guest__V1__RenameRequest r = AIRLOCK__GUEST__V1__RENAME_REQUEST__INIT;
    r.from = (ProtobufCBinaryData){ .len = 4, .data = (uint8_t *)"/tmp" };
    Airlock__Vmhost__V1__RenameFileRequest mv = AIRLOCK__VMHOST__V1__RENAME_FILE_REQUEST__INIT;
    mv.sandbox_id = itest_sandbox_id;
    mv.request = &r;
    expect_refused(ITEST_METHOD("RenameFile"), &mv.base, GRPC_STATUS_INVALID_ARGUMENT,
                   "to: required");

    c.mode = 0644;
    cm.sandbox_id = "sb_nope";
    expect_refused(ITEST_METHOD("ChmodFile"), &cm.base, GRPC_STATUS_NOT_FOUND, "sb_nope");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_64mib_round_trip),
        cmocka_unit_test(test_non_utf8_file_name),
        cmocka_unit_test(test_directory_operations),
        cmocka_unit_test(test_file_errors),
        cmocka_unit_test(test_forwarded_requests_checked),
    };
    return cmocka_run_group_tests(tests, itest_group_setup_with_sandbox,
                                  itest_group_teardown_with_sandbox);
}
