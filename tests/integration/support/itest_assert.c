#include "itest_assert.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

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
