/* The ExecRequest that `exec` and `start` build from their arguments:
 * ID [--pty] [--stdin] [--env K=V]... [--cwd DIR] [--user U]
 * [--timeout SECONDS] -- CMD [ARG]... */
#ifndef AIRLOCK_VMHOSTCTL_EXEC_SPEC_H
#define AIRLOCK_VMHOSTCTL_EXEC_SPEC_H

#include "vmhost.pb-c.h"

#include <stdbool.h>

struct exec_spec {
    Airlock__Vmhost__V1__ExecRequest req; /* points into argv and the arrays below */
    bool stdin_requested;                 /* --stdin */
    ProtobufCBinaryData *argv;
    Airlock__Vmhost__V1__ExecRequest__EnvEntry *env;
    Airlock__Vmhost__V1__ExecRequest__EnvEntry **env_ptrs;
};

/* 0, or CTL_EXIT_USAGE after a usage error, or CTL_EXIT_ERROR when out of
 * memory. argv's strings must outlive spec (K=V is split in place). */
int ctl_exec_spec_parse(struct exec_spec *spec, int argc, char **argv);
void ctl_exec_spec_free(struct exec_spec *spec);

#endif
