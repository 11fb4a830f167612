/* The scheduler's table of node operations (scheduler/service_op.c)
 * against the protos, without a stack: every row's method is a Scheduler
 * method taking its request, the request has the fields the pipeline
 * reads, and each row has the stages the pipeline calls. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "service_op.h"

static void rows_agree_with_the_protos(void **state)
{
    (void)state;
    char err[256] = "";
    assert_true(service_ops_check(err, sizeof(err)));
    assert_string_equal(err, "");
}

static void every_row_is_whole_and_named_once(void **state)
{
    (void)state;
    assert_true(service_ops_count > 0);
    for (size_t i = 0; i < service_ops_count; i++) {
        const struct service_op *op = &service_ops[i];
        assert_non_null(op->name);
        assert_non_null(op->valid);
        assert_non_null(op->node_request);
        assert_non_null(op->done);
        assert_true(op->node != AIRLOCK__NODE__V1__NODE_OP__NODE_OP_UNSPECIFIED);
        for (size_t j = 0; j < i; j++) {
            assert_string_not_equal(op->method, service_ops[j].method);
            assert_string_not_equal(op->name, service_ops[j].name);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rows_agree_with_the_protos),
        cmocka_unit_test(every_row_is_whole_and_named_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
