/* Turns an ExecRequest into a spawn_spec: validates argv/env/cwd, looks the
 * user up, builds the environment and resolves argv[0] in PATH. Everything
 * is checked here, in the daemon, so errors get precise messages. */
#ifndef GUESTD_EXEC_SPEC_H
#define GUESTD_EXEC_SPEC_H

#include <stddef.h>

#include "frame.h"
#include "spawn.h"

struct exec_spec {
    struct spawn_spec spawn; /* points into the fields below */
    char **argv;
    char **envp;
    size_t nenv;
    char *path;
    char *cwd;
    gid_t *groups;
};

/* Returns 0, or an errno with msg set; exec_spec_free is needed either way. */
int exec_spec_build(struct exec_spec *es, const Airlock__Guest__V1__ExecRequest *req,
                    char *msg, size_t msglen);
void exec_spec_free(struct exec_spec *es);

#endif
