/* Runs a client test program (argv[1..]) against a real control plane
 * (cp_stack.h). The program gets AIRLOCK_URL (the gateway) and
 * AIRLOCK_ADMIN_KEY in its environment; the harness exits with its status,
 * or 1 when some part of the stack did not stop cleanly. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cp_stack.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: cp_harness PROGRAM [ARGS...]\n");
        return 2;
    }
    struct cp_stack st;
    int rc = cp_stack_start(&st);
    if (rc != 0) {
        cp_stack_stop(&st);
        return rc == 77 ? 77 : 1;
    }
    setenv("AIRLOCK_URL", st.gateway_url, 1);
    setenv("AIRLOCK_ADMIN_KEY", st.admin_key, 1);
    setenv("AIRLOCK_TEST_VMHOST_DIR", st.vmhost.data_dir, 1);
    pid_t pid = fork();
    if (pid == 0) {
        execv(argv[1], argv + 1);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    int client_rc = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    if (client_rc != 0)
        fprintf(stderr, "cp_harness: %s failed (wait status %d); logs in %s\n", argv[1], status,
                st.dir);
    if (cp_stack_stop(&st) < 0 && client_rc == 0)
        client_rc = 1;
    return client_rc;
}
