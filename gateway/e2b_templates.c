/* GET /templates (E2B): the default template ("base") and the newest
 * version of each of the project's templates (docs/e2b.md). */
#include <stdio.h>
#include <string.h>

#include "e2b_convert.h"
#include "e2b_reply.h"
#include "e2b_routes.h"
#include "reply.h"
#include "sandbox_access.h"

static json_t *template_json(const char *id, const char *build, uint32_t cpus, uint32_t memory_mb,
                             int64_t created_ms, unsigned builds)
{
    char created[40];
    reply_rfc3339(created_ms, created, sizeof(created));
    return json_pack("{s:s,s:s,s:i,s:i,s:i,s:b,s:[s],s:[s],s:s,s:s,s:n,s:n,s:i,s:i,s:s,s:s}",
                     "templateID", id, "buildID", build, "cpuCount", (json_int_t)cpus, "memoryMB",
                     (json_int_t)memory_mb, "diskSizeMB", (json_int_t)0, "public", 0, "aliases",
                     id, "names", id, "createdAt", created, "updatedAt", created, "createdBy",
                     "lastSpawnedAt", "spawnCount", (json_int_t)0, "buildCount",
                     (json_int_t)builds, "envdVersion", E2B_ENVD_VERSION, "buildStatus", "ready");
}

enum MHD_Result e2b_template_list(struct gw_request *r)
{
    Airlock__Scheduler__V1__ListTemplatesRequest req =
        AIRLOCK__SCHEDULER__V1__LIST_TEMPLATES_REQUEST__INIT;
    req.request_id = r->id;
    req.project_id = r->project_id;
    Airlock__Scheduler__V1__ListTemplatesResponse *list = NULL;
    struct airlock_error e;
    if (gw_unary(r->gw->scheduler, SCHEDULER_METHOD("ListTemplates"), &req.base,
                 &airlock__scheduler__v1__list_templates_response__descriptor,
                 (ProtobufCMessage **)&list, GW_SCHEDULER_TIMEOUT_MS, &e) < 0)
        return e2b_reply_airlock_error(r, &e);
    /* The default's size is the scheduler's default create's. */
    json_t *out = json_array();
    json_array_append_new(out, template_json(E2B_DEFAULT_TEMPLATE, "default", 1, 512, 0, 1));
    /* By name then version: a name's last row is its newest. */
    for (size_t i = 0; i < list->n_templates; i++) {
        const Airlock__Scheduler__V1__Template *t = list->templates[i];
        if (i + 1 < list->n_templates && strcmp(list->templates[i + 1]->name, t->name) == 0)
            continue;
        char build[200];
        snprintf(build, sizeof(build), "%s:%u", t->name, t->version);
        json_array_append_new(out, template_json(t->name, build, t->cpus, t->memory_mb,
                                                 t->created_unix_ms, t->version));
    }
    protobuf_c_message_free_unpacked(&list->base, NULL);
    return reply_json(r, 200, out);
}
