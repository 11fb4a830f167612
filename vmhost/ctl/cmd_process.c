/* Background processes: start, ps, attach, kill, stdin. */
#include "args.h"
#include "ctl.h"
#include "ctl_exec_events.h"
#include "ctl_exec_spec.h"
#include "json.h"
#include "output.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define STDIN_CHUNK (64 * 1024)

typedef Airlock__Guest__V1__ProcessInfo ProcessInfo;

static void process_json(struct json *j, const ProcessInfo *p)
{
    json_object_begin(j, NULL);
    json_int(j, "pid", p->pid);
    json_array_begin(j, "argv");
    for (size_t i = 0; i < p->n_argv; i++)
        json_bytes(j, NULL, p->argv[i].data, p->argv[i].len);
    json_array_end(j);
    json_bool(j, "running", p->running);
    json_int(j, "exit_code", p->exit_code);
    json_int(j, "signal", p->signal);
    json_int(j, "started_unix_ms", p->started_unix_ms);
    json_bool(j, "pty", p->pty);
    json_object_end(j);
}

/* "running", "exited 3" or "killed KILL". */
static void format_process_state(const ProcessInfo *p, char *buf, size_t len)
{
    if (p->running)
        snprintf(buf, len, "running");
    else if (p->signal > 0)
        snprintf(buf, len, "killed %s",
                 p->signal < NSIG && sigabbrev_np(p->signal) ? sigabbrev_np(p->signal) : "?");
    else
        snprintf(buf, len, "exited %d", p->exit_code);
}

int ctl_cmd_start(struct ctl *ctl, int argc, char **argv)
{
    struct exec_spec spec;
    int rc = ctl_exec_spec_parse(&spec, argc, argv);
    if (rc != 0)
        return rc;
    /* --stdin keeps stdin open for `vmhostctl stdin`. */
    spec.req.stdin_open = spec.stdin_requested;
    ProcessInfo *p = NULL;
    rc = ctl_unary(ctl, VMHOST_METHOD("StartProcess"), &spec.req.base,
                   &airlock__guest__v1__process_info__descriptor, (ProtobufCMessage **)&p);
    ctl_exec_spec_free(&spec);
    if (rc < 0)
        return CTL_EXIT_ERROR;
    if (ctl->json) {
        struct json j;
        json_begin(&j, stdout);
        process_json(&j, p);
        json_end(&j);
    } else {
        printf("%d\n", p->pid);
    }
    protobuf_c_message_free_unpacked(&p->base, NULL);
    return 0;
}

static void print_process_table(const Airlock__Vmhost__V1__ListProcessesResponse *resp)
{
    printf("%7s %-12s %-20s %-3s %s\n", "PID", "STATE", "STARTED", "PTY", "COMMAND");
    for (size_t i = 0; i < resp->n_processes; i++) {
        const ProcessInfo *p = resp->processes[i];
        char state[32], started[32];
        format_process_state(p, state, sizeof(state));
        ctl_format_time(p->started_unix_ms, started, sizeof(started));
        printf("%7d %-12s %-20s %-3s ", p->pid, state, started, p->pty ? "yes" : "no");
        ctl_print_argv(stdout, p->argv, p->n_argv);
        putchar('\n');
    }
}

int ctl_cmd_ps(struct ctl *ctl, int argc, char **argv)
{
    if (ctl_operands_only(argc, argv, 1))
        return CTL_EXIT_USAGE;
    Airlock__Vmhost__V1__ListProcessesRequest req =
        AIRLOCK__VMHOST__V1__LIST_PROCESSES_REQUEST__INIT;
    req.sandbox_id = argv[optind];
    Airlock__Vmhost__V1__ListProcessesResponse *resp = NULL;
    if (ctl_unary(ctl, VMHOST_METHOD("ListProcesses"), &req.base,
                  &airlock__vmhost__v1__list_processes_response__descriptor,
                  (ProtobufCMessage **)&resp) < 0)
        return CTL_EXIT_ERROR;
    if (ctl->json) {
        struct json j;
        json_begin(&j, stdout);
        json_array_begin(&j, NULL);
        for (size_t i = 0; i < resp->n_processes; i++)
            process_json(&j, resp->processes[i]);
        json_array_end(&j);
        json_end(&j);
    } else {
        print_process_table(resp);
    }
    protobuf_c_message_free_unpacked(&resp->base, NULL);
    return 0;
}

/* ID PID operands into sandbox_id / pid; CTL_EXIT_USAGE when wrong. */
static int parse_process_operands(int argc, char **argv, char **sandbox_id, int32_t *pid)
{
    if (ctl_expect_operands(argc, argv, 2))
        return CTL_EXIT_USAGE;
    *sandbox_id = argv[optind];
    if (ctl_parse_int32(argv[optind + 1], pid) < 0 || *pid <= 0)
        return ctl_usage_error(argv[0], "invalid PID '%s'", argv[optind + 1]);
    return 0;
}

int ctl_cmd_attach(struct ctl *ctl, int argc, char **argv)
{
    static const struct option options[] = {{"follow", no_argument, NULL, 'f'}, {0}};
    Airlock__Vmhost__V1__AttachProcessRequest req =
        AIRLOCK__VMHOST__V1__ATTACH_PROCESS_REQUEST__INIT;
    int opt;
    while ((opt = ctl_next_option(argc, argv, ":f", options)) != -1) {
        if (opt != 'f')
            return CTL_EXIT_USAGE;
        req.follow = true;
    }
    if (parse_process_operands(argc, argv, &req.sandbox_id, &req.pid))
        return CTL_EXIT_USAGE;
    if (ctl_connect(ctl) < 0)
        return CTL_EXIT_ERROR;
    struct rpc_stream *s = rpc_stream_open(ctl->channel, VMHOST_METHOD("AttachProcess"),
                                           req.follow ? 0 : ctl->call_timeout_ms);
    if (!s)
        return CTL_EXIT_ERROR;
    struct exec_outcome outcome = {0};
    if (rpc_stream_send(s, &req.base) == 0 && rpc_stream_close_send(s) == 0)
        exec_events_relay(s, NULL, NULL, &outcome);
    if (ctl_finish_stream(s) < 0)
        return CTL_EXIT_ERROR;
    /* Without --follow a running process has no exit yet: that is success. */
    return outcome.exited ? exec_outcome_exit_code(&outcome) : 0;
}

int ctl_cmd_kill(struct ctl *ctl, int argc, char **argv)
{
    static const struct option options[] = {{"signal", required_argument, NULL, 's'}, {0}};
    Airlock__Vmhost__V1__SignalProcessRequest req =
        AIRLOCK__VMHOST__V1__SIGNAL_PROCESS_REQUEST__INIT;
    req.signal = SIGTERM;
    int opt;
    while ((opt = ctl_next_option(argc, argv, ":s:", options)) != -1) {
        if (opt != 's')
            return CTL_EXIT_USAGE;
        if (ctl_parse_signal(optarg, &req.signal) < 0)
            return ctl_usage_error(argv[0], "invalid --signal '%s'", optarg);
    }
    if (parse_process_operands(argc, argv, &req.sandbox_id, &req.pid))
        return CTL_EXIT_USAGE;
    ProtobufCMessage *resp = NULL;
    if (ctl_unary(ctl, VMHOST_METHOD("SignalProcess"), &req.base,
                  &airlock__vmhost__v1__empty__descriptor, &resp) < 0)
        return CTL_EXIT_ERROR;
    protobuf_c_message_free_unpacked(resp, NULL);
    return 0;
}

static int write_process_stdin(struct ctl *ctl, Airlock__Vmhost__V1__ProcessStdinRequest *req)
{
    ProtobufCMessage *resp = NULL;
    if (ctl_unary(ctl, VMHOST_METHOD("WriteProcessStdin"), &req->base,
                  &airlock__vmhost__v1__empty__descriptor, &resp) < 0)
        return -1;
    protobuf_c_message_free_unpacked(resp, NULL);
    return 0;
}

int ctl_cmd_stdin(struct ctl *ctl, int argc, char **argv)
{
    Airlock__Vmhost__V1__ProcessStdinRequest req =
        AIRLOCK__VMHOST__V1__PROCESS_STDIN_REQUEST__INIT;
    if (ctl_operands_only(argc, argv, 2) ||
        parse_process_operands(argc, argv, &req.sandbox_id, &req.pid))
        return CTL_EXIT_USAGE;
    static uint8_t buf[STDIN_CHUNK];
    for (;;) {
        ssize_t n = read(STDIN_FILENO, buf, sizeof(buf));
        if (n < 0) {
            perror("vmhostctl: reading stdin");
            return CTL_EXIT_ERROR;
        }
        req.data = (ProtobufCBinaryData){.len = (size_t)n, .data = buf};
        req.eof = n == 0;
        if (write_process_stdin(ctl, &req) < 0)
            return CTL_EXIT_ERROR;
        if (req.eof)
            return 0;
    }
}
