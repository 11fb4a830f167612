/* The node's template and warm-pool operations (ops.h). */
#include "ops.h"
#include "template_registry.h"

/* The scheduler's warm-pool target for "default" or a named template (its
 * newest version, or name:N). */
int op_pool_set(struct vmhost *vh, const ProtobufCMessage *msg, struct op_answer *out,
                struct airlock_error *e)
{
    const Airlock__Node__V1__WarmPool *req = (const void *)msg;
    (void)out;
    return template_set_pool(vh, req->template_, req->target, e);
}

int op_template_delete(struct vmhost *vh, const ProtobufCMessage *msg, struct op_answer *out,
                       struct airlock_error *e)
{
    const Airlock__Vmhost__V1__TemplateRef *req = (const void *)msg;
    (void)out;
    return template_delete(vh, req->name, e);
}
