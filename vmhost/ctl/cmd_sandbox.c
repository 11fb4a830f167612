/* Sandbox lifecycle: create, get, ls, rm. */
#include "args.h"
#include "ctl.h"
#include "json.h"
#include "output.h"

#include <stdio.h>

typedef Airlock__Vmhost__V1__Sandbox Sandbox;

static void format_state(const Sandbox *sb, char *buf, size_t len)
{
    ctl_format_enum(&airlock__vmhost__v1__sandbox_state__descriptor, sb->state, "SANDBOX_STATE_",
                    buf, len);
}

static void sandbox_json(struct json *j, const char *key, const Sandbox *sb)
{
    char state[32];
    format_state(sb, state, sizeof(state));
    json_object_begin(j, key);
    json_string(j, "id", sb->id);
    json_string(j, "state", state);
    json_string(j, "template", sb->template_);
    json_int(j, "vcpus", sb->vcpus);
    json_int(j, "memory_mb", sb->memory_mb);
    json_int(j, "created_unix_ms", sb->created_unix_ms);
    json_int(j, "last_activity_unix_ms", sb->last_activity_unix_ms);
    json_int(j, "qemu_pid", sb->qemu_pid);
    json_string(j, "accel", sb->accel);
    json_string(j, "image_hash", sb->image_hash);
    json_string(j, "error", sb->error);
    json_object_end(j);
}

static void print_sandbox(const struct ctl *ctl, const Sandbox *sb)
{
    if (ctl->json) {
        struct json j;
        json_begin(&j, stdout);
        sandbox_json(&j, NULL, sb);
        json_end(&j);
        return;
    }
    char state[32], created[32], active[32];
    format_state(sb, state, sizeof(state));
    ctl_format_time(sb->created_unix_ms, created, sizeof(created));
    ctl_format_time(sb->last_activity_unix_ms, active, sizeof(active));
    printf("id:            %s\n"
           "state:         %s\n"
           "template:      %s\n"
           "vcpus:         %u\n"
           "memory:        %u MiB\n"
           "created:       %s\n"
           "last activity: %s\n"
           "qemu pid:      %d\n"
           "accel:         %s\n"
           "image:         %s\n",
           sb->id, state, sb->template_, sb->vcpus, sb->memory_mb, created, active, sb->qemu_pid,
           sb->accel, sb->image_hash);
    if (*sb->error)
        printf("error:         %s\n", sb->error);
}

int ctl_cmd_create(struct ctl *ctl, int argc, char **argv)
{
    static const struct option options[] = {
        {"id", required_argument, NULL, 'i'},
        {"template", required_argument, NULL, 't'},
        {"cpus", required_argument, NULL, 'c'},
        {"memory", required_argument, NULL, 'm'},
        {0},
    };
    Airlock__Vmhost__V1__CreateSandboxRequest req =
        AIRLOCK__VMHOST__V1__CREATE_SANDBOX_REQUEST__INIT;
    unsigned long n;
    int opt;
    while ((opt = ctl_next_option(argc, argv, ":", options)) != -1) {
        switch (opt) {
        case 'i':
            req.id = optarg;
            break;
        case 't':
            req.template_ = optarg;
            break;
        case 'c':
            if (ctl_parse_uint(optarg, UINT32_MAX, &n) < 0)
                return ctl_usage_error(argv[0], "invalid --cpus '%s'", optarg);
            req.vcpus = (uint32_t)n;
            break;
        case 'm':
            if (ctl_parse_uint(optarg, UINT32_MAX, &n) < 0)
                return ctl_usage_error(argv[0], "invalid --memory '%s'", optarg);
            req.memory_mb = (uint32_t)n;
            break;
        default:
            return CTL_EXIT_USAGE;
        }
    }
    if (ctl_expect_operands(argc, argv, 0))
        return CTL_EXIT_USAGE;
    Sandbox *sb = NULL;
    if (ctl_unary(ctl, VMHOST_METHOD("CreateSandbox"), &req.base,
                  &airlock__vmhost__v1__sandbox__descriptor, (ProtobufCMessage **)&sb) < 0)
        return CTL_EXIT_ERROR;
    print_sandbox(ctl, sb);
    protobuf_c_message_free_unpacked(&sb->base, NULL);
    return 0;
}

/* GetSandbox, PauseSandbox, ResumeSandbox and SuspendSandbox: a
 * SandboxRef in, the sandbox out. */
static int sandbox_id_call(struct ctl *ctl, int argc, char **argv, const char *method)
{
    if (ctl_operands_only(argc, argv, 1))
        return CTL_EXIT_USAGE;
    Airlock__Vmhost__V1__SandboxRef req = AIRLOCK__VMHOST__V1__SANDBOX_REF__INIT;
    req.id = argv[optind];
    Sandbox *sb = NULL;
    if (ctl_unary(ctl, method, &req.base, &airlock__vmhost__v1__sandbox__descriptor,
                  (ProtobufCMessage **)&sb) < 0)
        return CTL_EXIT_ERROR;
    print_sandbox(ctl, sb);
    protobuf_c_message_free_unpacked(&sb->base, NULL);
    return 0;
}

int ctl_cmd_get(struct ctl *ctl, int argc, char **argv)
{
    return sandbox_id_call(ctl, argc, argv, VMHOST_METHOD("GetSandbox"));
}

int ctl_cmd_pause(struct ctl *ctl, int argc, char **argv)
{
    return sandbox_id_call(ctl, argc, argv, VMHOST_METHOD("PauseSandbox"));
}

int ctl_cmd_resume(struct ctl *ctl, int argc, char **argv)
{
    return sandbox_id_call(ctl, argc, argv, VMHOST_METHOD("ResumeSandbox"));
}

int ctl_cmd_suspend(struct ctl *ctl, int argc, char **argv)
{
    return sandbox_id_call(ctl, argc, argv, VMHOST_METHOD("SuspendSandbox"));
}

static void print_sandbox_table(const Airlock__Vmhost__V1__ListSandboxesResponse *resp)
{
    printf("%-24s %-10s %5s %8s %-20s %s\n", "ID", "STATE", "VCPUS", "MEMORY", "CREATED",
           "TEMPLATE");
    for (size_t i = 0; i < resp->n_sandboxes; i++) {
        const Sandbox *sb = resp->sandboxes[i];
        char state[32], created[32], memory[16];
        format_state(sb, state, sizeof(state));
        ctl_format_time(sb->created_unix_ms, created, sizeof(created));
        snprintf(memory, sizeof(memory), "%uM", sb->memory_mb);
        printf("%-24s %-10s %5u %8s %-20s %s\n", sb->id, state, sb->vcpus, memory, created,
               sb->template_);
    }
}

int ctl_cmd_ls(struct ctl *ctl, int argc, char **argv)
{
    if (ctl_operands_only(argc, argv, 0))
        return CTL_EXIT_USAGE;
    Airlock__Vmhost__V1__ListSandboxesRequest req =
        AIRLOCK__VMHOST__V1__LIST_SANDBOXES_REQUEST__INIT;
    Airlock__Vmhost__V1__ListSandboxesResponse *resp = NULL;
    if (ctl_unary(ctl, VMHOST_METHOD("ListSandboxes"), &req.base,
                  &airlock__vmhost__v1__list_sandboxes_response__descriptor,
                  (ProtobufCMessage **)&resp) < 0)
        return CTL_EXIT_ERROR;
    if (ctl->json) {
        struct json j;
        json_begin(&j, stdout);
        json_array_begin(&j, NULL);
        for (size_t i = 0; i < resp->n_sandboxes; i++)
            sandbox_json(&j, NULL, resp->sandboxes[i]);
        json_array_end(&j);
        json_end(&j);
    } else {
        print_sandbox_table(resp);
    }
    protobuf_c_message_free_unpacked(&resp->base, NULL);
    return 0;
}

int ctl_cmd_rm(struct ctl *ctl, int argc, char **argv)
{
    if (ctl_operands_only(argc, argv, 1))
        return CTL_EXIT_USAGE;
    Airlock__Vmhost__V1__SandboxRef req = AIRLOCK__VMHOST__V1__SANDBOX_REF__INIT;
    req.id = argv[optind];
    ProtobufCMessage *resp = NULL;
    if (ctl_unary(ctl, VMHOST_METHOD("DeleteSandbox"), &req.base,
                  &airlock__vmhost__v1__empty__descriptor, &resp) < 0)
        return CTL_EXIT_ERROR;
    protobuf_c_message_free_unpacked(resp, NULL);
    return 0;
}
