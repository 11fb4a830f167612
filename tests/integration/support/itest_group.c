#include "itest_group.h"

#include <stdio.h>
#include <stdlib.h>

struct itest_vmhost itest_vh;
char *itest_sandbox_id;

int itest_group_setup(void **state)
{
    (void)state;
    return itest_vmhost_start(&itest_vh, NULL);
}

int itest_group_teardown(void **state)
{
    (void)state;
    return itest_vmhost_stop(&itest_vh);
}

int itest_group_setup_with_sandbox(void **state)
{
    if (itest_group_setup(state) < 0)
        return -1;
    char *details = NULL;
    grpc_status_code st;
    itest_sandbox_id = itest_create_sandbox(&itest_vh, &st, &details);
    if (!itest_sandbox_id) {
        fprintf(stderr, "CreateSandbox failed: %s: %s\n", rpc_status_name(st),
                details ? details : "");
        itest_vmhost_print_log_tail(&itest_vh);
    }
    free(details);
    return itest_sandbox_id ? 0 : -1;
}

int itest_group_teardown_with_sandbox(void **state)
{
    if (itest_sandbox_id)
        itest_delete_sandbox(&itest_vh, itest_sandbox_id);
    free(itest_sandbox_id);
    itest_sandbox_id = NULL;
    return itest_group_teardown(state);
}
