/* The VmHost service's methods, one table (protos/vmhost.proto): the ones
 * that stream or that only the gRPC API has, the file operations
 * forwarded to the guest as they are (service_forward.c), and ops.h's
 * operations (service_op.c). Above every handler file: it only names
 * them. */
#include <pthread.h>
#include <stdio.h>

#include "vmhost_metrics.h"
#include "vmhost_service.h"

#define VMHOST_METHOD(name) "/airlock.vmhost.v1.VmHost/" name
#define VMHOST_METHOD_MAX 80 /* "/airlock.vmhost.v1.VmHost/" and the longest name */
#define VMHOST_METHODS_MAX 64

/* With mutual TLS, who may call: the data path (exec, processes, files,
 * logs) is the gateway's and the scheduler's; the rest (sandbox
 * operations, templates, node stats) the scheduler's; vmhostctl on this
 * node runs as this node's vmhost and may call all. */
#define OWN_NODE (PEER_VMHOST | RPC_CALLER_SAME_NODE)
#define DATA_PATH (PEER_GATEWAY | PEER_SCHEDULER | OWN_NODE)
#define NODE_CONTROL (PEER_SCHEDULER | OWN_NODE)

/* The methods that stream, or that only the gRPC API has; the rest are
 * ops.h's table (service_op.c serves them) and the file operations
 * forwarded to the guest as they are (service_forward.c). */
static const struct rpc_method own_methods[] = {
    { VMHOST_METHOD("GetNodeStats"), service_node_stats, NODE_CONTROL },
    { VMHOST_METHOD("ListConnections"), service_connections, DATA_PATH },
    { VMHOST_METHOD("GetConsoleLog"), service_console_log, DATA_PATH },
    { VMHOST_METHOD("Exec"), service_exec, DATA_PATH },
    { VMHOST_METHOD("ExecInput"), service_exec_input, DATA_PATH },
    { VMHOST_METHOD("StartProcess"), service_process_start, DATA_PATH },
    { VMHOST_METHOD("ListProcesses"), service_process_list, DATA_PATH },
    { VMHOST_METHOD("AttachProcess"), service_process_attach, DATA_PATH },
    { VMHOST_METHOD("WriteProcessStdin"), service_process_stdin, DATA_PATH },
    { VMHOST_METHOD("SignalProcess"), service_process_signal, DATA_PATH },
    { VMHOST_METHOD("ResizeProcess"), service_process_resize, DATA_PATH },
    { VMHOST_METHOD("ReadFile"), service_file_read, DATA_PATH },
    { VMHOST_METHOD("WriteFile"), service_file_write, DATA_PATH },
    { VMHOST_METHOD("ListDir"), service_file_list, DATA_PATH },
    { VMHOST_METHOD("ListPorts"), service_list_ports, DATA_PATH },
    { VMHOST_METHOD("GetSandboxMetrics"), service_sandbox_metrics, DATA_PATH },
    { VMHOST_METHOD("PortForward"), service_port_forward, DATA_PATH },
    { VMHOST_METHOD("WatchDir"), service_watch_dir, DATA_PATH },
    { VMHOST_METHOD("BuildTemplate"), service_build_template, NODE_CONTROL },
    { VMHOST_METHOD("ListTemplates"), service_list_templates, NODE_CONTROL },
    { VMHOST_METHOD("GetTemplate"), service_get_template, NODE_CONTROL },
};

/* own_methods and the tables', made once (the tables are fixed). */
static struct rpc_method methods[VMHOST_METHODS_MAX];
static char op_paths[VMHOST_METHODS_MAX][VMHOST_METHOD_MAX];
static size_t n_methods;
static pthread_once_t methods_once = PTHREAD_ONCE_INIT;

static void method_add(const char *name, rpc_handler_fn handler, unsigned callers)
{
    if (n_methods == VMHOST_METHODS_MAX)
        return; /* not reached: VmHost has 38 methods */
    size_t k = n_methods++;
    snprintf(op_paths[k], sizeof(op_paths[k]), VMHOST_METHOD("%s"), name);
    methods[k] = (struct rpc_method){ op_paths[k], handler, callers };
}

static void methods_make(void)
{
    for (size_t i = 0; i < sizeof(own_methods) / sizeof(*own_methods); i++)
        methods[n_methods++] = own_methods[i];
    const char *name;
    for (size_t i = 0; (name = service_forward_method(i)); i++)
        method_add(name, service_file_forward, DATA_PATH);
    for (size_t i = 0; i < vmhost_ops_count; i++)
        if (vmhost_ops[i].grpc_method)
            method_add(vmhost_ops[i].grpc_method, service_op, NODE_CONTROL);
}

struct rpc_server *vmhost_service_start(struct vmhost *vh, const char *addr, char *err,
                                        size_t errlen)
{
    pthread_once(&methods_once, methods_make);
    struct rpc_security sec = { .bearer_token = vh->cfg.internal_token,
                                .tls = vh->cfg.internal_tls,
                                .calls = vmhost_metrics_calls(vh->metrics) };
    return rpc_server_start(addr, methods, n_methods, vh, &sec, err, errlen);
}
