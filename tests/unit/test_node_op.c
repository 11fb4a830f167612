/* The NATS subjects of node operations (common/node_op.h): every NodeOp
 * of protos/node.proto has a lower-case name that reads back as the same
 * operation, subjects are airlock.node.<node>.<name>, and what names no
 * operation (UNSPECIFIED, values beyond the enum, unknown or differently
 * spelled names) is refused rather than guessed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "node_op.h"

static void test_every_op_round_trips(void **state)
{
    (void)state;
    const ProtobufCEnumDescriptor *d = &airlock__node__v1__node_op__descriptor;
    unsigned named = 0;
    for (unsigned i = 0; i < d->n_values; i++) {
        node_op op = (node_op)d->values[i].value;
        if (op == AIRLOCK__NODE__V1__NODE_OP__NODE_OP_UNSPECIFIED)
            continue;
        const char *name = node_op_name(op);
        assert_non_null(name);
        for (const char *c = name; *c; c++)
            assert_true((*c >= 'a' && *c <= 'z') || *c == '_');
        assert_int_equal(node_op_from_name(name), op);
        named++;
    }
    assert_int_equal(named, d->n_values - 1);
}

static void test_names_the_scheduler_sends(void **state)
{
    (void)state;
    assert_string_equal(node_op_name(AIRLOCK__NODE__V1__NODE_OP__NODE_OP_CREATE), "create");
    assert_string_equal(node_op_name(AIRLOCK__NODE__V1__NODE_OP__NODE_OP_CHECKPOINT_DELETE),
                        "checkpoint_delete");
    assert_string_equal(node_op_name(AIRLOCK__NODE__V1__NODE_OP__NODE_OP_TEMPLATE_BUILD),
                        "template_build");
    char subject[128];
    assert_int_equal(node_op_subject("n1", AIRLOCK__NODE__V1__NODE_OP__NODE_OP_SET_POOL, subject,
                                     sizeof(subject)),
                     0);
    assert_string_equal(subject, "airlock.node.n1.set_pool");
}

static void test_what_names_no_operation(void **state)
{
    (void)state;
    assert_null(node_op_name(AIRLOCK__NODE__V1__NODE_OP__NODE_OP_UNSPECIFIED));
    assert_null(node_op_name((node_op)9999));
    assert_null(node_op_name((node_op)-1));
    const char *unknown[] = { "", "unspecified", "frobnicate", "CREATE", "create ", "node_op_get" };
    for (size_t i = 0; i < sizeof(unknown) / sizeof(*unknown); i++)
        assert_int_equal(node_op_from_name(unknown[i]), AIRLOCK__NODE__V1__NODE_OP__NODE_OP_UNSPECIFIED);
    char subject[128];
    assert_int_equal(node_op_subject("n1", AIRLOCK__NODE__V1__NODE_OP__NODE_OP_UNSPECIFIED, subject,
                                     sizeof(subject)),
                     -1);
    char small[16]; /* "airlock.node.n1." alone fills it */
    assert_int_equal(node_op_subject("n1", AIRLOCK__NODE__V1__NODE_OP__NODE_OP_GET, small,
                                     sizeof(small)),
                     -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_op_round_trips),
        cmocka_unit_test(test_names_the_scheduler_sends),
        cmocka_unit_test(test_what_names_no_operation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
