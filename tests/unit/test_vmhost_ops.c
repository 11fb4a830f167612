/* vmhost's table of operations (vmhost/ops.c) against the contracts it
 * serves, without a VM: every VmHost method it names exists in
 * vmhost.proto's service with the same request type and the answer type
 * its answer kind encodes to; every NodeOp of node.proto but the template
 * build (the agent's own, answered by events) is served exactly once; no
 * method or node operation is served twice; lookups by either name
 * find the entry; and a request an operation refuses before it reaches a
 * sandbox fails with a class and message that map to INVALID_ARGUMENT. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "ops.h"
#include "rpc_err.h"

/* What each answer kind is sent as on the gRPC API (service_op.c). */
static const ProtobufCMessageDescriptor *grpc_answer_type(enum op_answer_kind k)
{
    switch (k) {
    case OP_ANSWER_EMPTY: return &airlock__vmhost__v1__empty__descriptor;
    case OP_ANSWER_SANDBOX: return &airlock__vmhost__v1__sandbox__descriptor;
    case OP_ANSWER_SANDBOXES: return &airlock__vmhost__v1__list_sandboxes_response__descriptor;
    case OP_ANSWER_FORKS: return &airlock__vmhost__v1__fork_sandbox_response__descriptor;
    case OP_ANSWER_CHECKPOINT: return &airlock__vmhost__v1__checkpoint__descriptor;
    case OP_ANSWER_CHECKPOINTS: return &airlock__vmhost__v1__list_checkpoints_response__descriptor;
    case OP_ANSWER_MIGRATION: return &airlock__vmhost__v1__migration__descriptor;
    case OP_ANSWER_VOLUME: return &airlock__vmhost__v1__volume__descriptor;
    }
    return NULL;
}

static void test_grpc_methods_match_the_service(void **state)
{
    (void)state;
    const ProtobufCServiceDescriptor *svc = &airlock__vmhost__v1__vm_host__descriptor;
    unsigned served = 0;
    for (size_t i = 0; i < vmhost_ops_count; i++) {
        const struct vmhost_op *op = &vmhost_ops[i];
        if (!op->grpc_method)
            continue;
        const ProtobufCMethodDescriptor *m =
            protobuf_c_service_descriptor_get_method_by_name(svc, op->grpc_method);
        if (!m)
            fail_msg("%s is not a VmHost method", op->grpc_method);
        if (m->input != op->request)
            fail_msg("%s takes %s, the table says %s", op->grpc_method, m->input->name,
                     op->request->name);
        if (m->output != grpc_answer_type(op->answer))
            fail_msg("%s answers %s, the table's answer kind is sent as %s", op->grpc_method,
                     m->output->name, grpc_answer_type(op->answer)->name);
        assert_ptr_equal(vmhost_op_for_grpc(op->grpc_method), op);
        for (size_t j = i + 1; j < vmhost_ops_count; j++)
            if (vmhost_ops[j].grpc_method && strcmp(vmhost_ops[j].grpc_method, op->grpc_method) == 0)
                fail_msg("%s is in the table twice", op->grpc_method);
        served++;
    }
    assert_true(served >= 14);
    assert_null(vmhost_op_for_grpc("Exec")); /* a stream: vmhost_service.c's own */
    assert_null(vmhost_op_for_grpc(""));
}

static void test_every_node_op_served_once(void **state)
{
    (void)state;
    const ProtobufCEnumDescriptor *d = &airlock__node__v1__node_op__descriptor;
    for (unsigned i = 0; i < d->n_values; i++) {
        node_op node = (node_op)d->values[i].value;
        if (node == AIRLOCK__NODE__V1__NODE_OP__NODE_OP_UNSPECIFIED)
            continue; /* the entries only the gRPC API serves */
        unsigned entries = 0;
        for (size_t j = 0; j < vmhost_ops_count; j++)
            entries += vmhost_ops[j].node == node;
        bool own = node == AIRLOCK__NODE__V1__NODE_OP__NODE_OP_TEMPLATE_BUILD;
        if (entries != (own ? 0u : 1u))
            fail_msg("%s: %u table entries", d->values[i].name, entries);
        if (!own)
            assert_int_equal(vmhost_op_for_node(node)->node, node);
    }
    assert_null(vmhost_op_for_node(AIRLOCK__NODE__V1__NODE_OP__NODE_OP_UNSPECIFIED));
    assert_null(vmhost_op_for_node(AIRLOCK__NODE__V1__NODE_OP__NODE_OP_TEMPLATE_BUILD));
}

/* Runs op on req with no node behind it (the refusal comes first). */
static void assert_refused(op_fn run, const ProtobufCMessage *req, const char *message)
{
    struct op_answer a = { 0 };
    struct airlock_error e = { 0 };
    assert_int_equal(run(NULL, req, &a, &e), -1);
    assert_int_equal(e.class, AIRLOCK_ERR_INVALID);
    assert_int_equal(airlock_error_status(&e), GRPC_STATUS_INVALID_ARGUMENT);
    assert_string_equal(e.message, message);
    assert_int_equal(a.n_sandboxes, 0);
}

static void test_refused_requests_are_invalid(void **state)
{
    (void)state;
    Airlock__Vmhost__V1__SandboxRef ref = AIRLOCK__VMHOST__V1__SANDBOX_REF__INIT;
    ref.id = "";
    assert_refused(op_sandbox_get, &ref.base, "id: required");
    assert_refused(op_sandbox_delete, &ref.base, "id: required");
    assert_refused(op_sandbox_pause, &ref.base, "id: required");
    Airlock__Vmhost__V1__CreateSandboxRequest create =
        AIRLOCK__VMHOST__V1__CREATE_SANDBOX_REQUEST__INIT;
    create.id = "";
    assert_refused(op_sandbox_create_named, &create.base,
                   "id: required (the scheduler names every sandbox)");
    Airlock__Vmhost__V1__CreateCheckpointRequest cp =
        AIRLOCK__VMHOST__V1__CREATE_CHECKPOINT_REQUEST__INIT;
    cp.sandbox_id = "sb_x";
    assert_refused(op_checkpoint_create, &cp.base, "kind: required (DISK or FULL)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grpc_methods_match_the_service),
        cmocka_unit_test(test_every_node_op_served_once),
        cmocka_unit_test(test_refused_requests_are_invalid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
