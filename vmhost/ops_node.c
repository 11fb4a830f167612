/* The node's template and warm-pool operations (ops.h). */
#include "ops.h"
#include "template_registry.h"
#include "template_shared.h"

/* The scheduler's warm-pool target for "default" or a named template (its
 * newest version, or name:N). */
int op_pool_set(struct vmhost *vh, const ProtobufCMessage *msg, struct op_answer *out,
                struct airlock_error *e)
{
    const Airlock__Node__V1__WarmPool *req = (const void *)msg;
    (void)out;
    return template_set_pool(vh, req->template_, req->target, req->max, e);
}

int op_template_delete(struct vmhost *vh, const ProtobufCMessage *msg, struct op_answer *out,
                       struct airlock_error *e)
{
    const Airlock__Vmhost__V1__TemplateRef *req = (const void *)msg;
    (void)out;
    /* One in use stays everywhere; one this node lacks still leaves the
     * store (the node that built it may be gone). */
    int rc = template_delete(vh, req->name, e);
    if ((rc == 0 || e->class == AIRLOCK_ERR_NOT_FOUND) && *req->store_object) {
        struct airlock_error fe;
        airlock_error_clear(&fe);
        if (template_shared_forget(vh, req->store_object, &fe) < 0) {
            *e = fe;
            return -1;
        }
    }
    return rc;
}
