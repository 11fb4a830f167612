#include "itest_assert.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsutil.h"

void itest_assert_transition(struct itest_vmhost *vh, const char *method, const char *id,
                             int want)
{
    grpc_status_code st;
    char *details = NULL;
    Airlock__Vmhost__V1__Sandbox *sb = itest_sandbox_call(vh, method, id, &st, &details);
    if (st != GRPC_STATUS_OK) {
        itest_vmhost_print_log_tail(vh);
        fail_msg("%s: %s", method, details ? details : "?");
    }
    assert_int_equal(sb->state, want);
    protobuf_c_message_free_unpacked(&sb->base, NULL);
    free(details);
}

char *itest_assert_create(struct itest_vmhost *vh)
{
    grpc_status_code st;
    char *details = NULL;
    char *id = itest_create_sandbox(vh, &st, &details);
    if (!id) {
        itest_vmhost_print_log_tail(vh);
        fail_msg("CreateSandbox: %s: %s", rpc_status_name(st), details ? details : "");
    }
    free(details);
    return id;
}

Airlock__Vmhost__V1__Sandbox *itest_assert_get(struct itest_vmhost *vh, const char *id)
{
    grpc_status_code st;
    char *details = NULL;
    Airlock__Vmhost__V1__Sandbox *sb =
        itest_sandbox_call(vh, ITEST_METHOD("GetSandbox"), id, &st, &details);
    if (st != GRPC_STATUS_OK)
        fail_msg("GetSandbox %s: %s", id, details ? details : "?");
    free(details);
    return sb;
}

void itest_assert_refused(struct itest_vmhost *vh, const char *method, const char *id,
                          const char *want_state)
{
    grpc_status_code st;
    char *details = NULL;
    assert_null(itest_sandbox_call(vh, method, id, &st, &details));
    assert_int_equal(st, GRPC_STATUS_FAILED_PRECONDITION);
    assert_non_null(strstr(details, id));
    assert_non_null(strstr(details, want_state));
    free(details);
}

bool itest_sandbox_path_exists(const struct itest_vmhost *vh, const char *id, const char *name)
{
    char path[PATH_MAX];
    assert_int_equal(
        fs_path(path, sizeof(path), "%s/store/sandboxes/%s/%s", vh->data_dir, id, name), 0);
    return access(path, F_OK) == 0;
}

bool itest_netns_exists(const char *id)
{
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "/run/netns/airlock-%s", id);
    return access(path, F_OK) == 0;
}

void itest_assert_status_naming(grpc_status_code st, char **detailsp, grpc_status_code want,
                                const char *named)
{
    char *details = *detailsp;
    if (st != want)
        fail_msg("status %s, want %s: %s", rpc_status_name(st), rpc_status_name(want),
                 details ? details : "");
    if (!details || !strstr(details, named))
        fail_msg("%s: \"%s\" does not name %s", rpc_status_name(st), details ? details : "",
                 named);
    free(details);
    *detailsp = NULL;
}

char *itest_assert_sh(struct itest_vmhost *vh, const char *id, const char *script)
{
    struct itest_exec_result r;
    itest_sh(vh, id, script, &r);
    if (r.status != GRPC_STATUS_OK)
        fail_msg("`%s`: %s: %s", script, rpc_status_name(r.status), r.details ? r.details : "");
    if (r.exit_code != 0)
        fail_msg("`%s` exited %d: %s%s", script, r.exit_code, (char *)r.out, (char *)r.err);
    char *out = strdup((char *)r.out);
    itest_exec_result_free(&r);
    return out;
}

int itest_assert_sh_code(struct itest_vmhost *vh, const char *id, const char *script, char *out,
                         size_t outlen)
{
    struct itest_exec_result r;
    itest_sh(vh, id, script, &r);
    if (r.status != GRPC_STATUS_OK)
        fprintf(stderr, "exec %s: %s\n", script, r.details ? r.details : "");
    assert_int_equal(r.status, GRPC_STATUS_OK);
    assert_true(r.exited);
    if (out)
        snprintf(out, outlen, "%s", r.out ? (char *)r.out : "");
    if (r.exit_code != 0 && r.err && r.err_len)
        fprintf(stderr, "guest: %s: %s\n", script, (char *)r.err);
    int code = r.exit_code;
    itest_exec_result_free(&r);
    return code;
}
