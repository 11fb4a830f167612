/* vmhostctl, the operator's CLI, against a real vmhost and VM: what a
 * person typing the commands sees, exit codes included. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <jansson.h>

#include "itest.h"
#include "itest_group.h"

static int group_setup(void **state)
{
    if (itest_group_setup(state) < 0)
        return -1;
    setenv("AIRLOCK_VMHOST_ADDR", itest_vh.addr, 1);
    return 0;
}

/* Runs "vmhostctl ARGS" through sh; returns the exit code, output in out. */
static int ctl(char *out, size_t outlen, const char *fmt, ...)
{
    char args[2048], cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof(args), fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof(cmd), "%s %s 2>&1", AIRLOCK_VMHOSTCTL_BIN, args);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t n = fread(out, 1, outlen - 1, p);
    out[n] = '\0';
    int status = pclose(p);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The session after create, in order: each call's arguments (%s: the
 * sandbox's id), the exit code it must end with and what its output must
 * contain (%s: the id). */
struct ctl_step {
    const char *args;
    int code;
    const char *says[2];
};

static const struct ctl_step session[] = {
    { "ls", 0, { "%s" } },
    { "exec %s -- sh -c 'echo from-guest; exit 5'", 5, { "from-guest" } },
    { "exec %s --timeout 1 -- sleep 100", 124, { NULL } },
    { "put %s /root/via-cli.txt < /etc/os-release", 0, { NULL } },
    { "cat %s /root/via-cli.txt | cmp - /etc/os-release && echo same", 0, { "same" } },
    { "ls-files %s /root", 0, { "via-cli.txt" } },
    /* Errors: one line naming the status and what was wrong, exit 1. */
    { "cat %s /no/such/file", 1, { "vmhostctl: NOT_FOUND", "/no/such/file" } },
    { "exec sb_nope -- true", 1, { "sb_nope" } },
    { "exec %s -- no-such-binary", 1, { "not found" } },
    /* Usage errors: exit 2 with usage text. */
    { "exec", 2, { "usage" } },
    /* Lifecycle: each prints the sandbox in its new state. */
    { "pause %s", 0, { "paused" } },
    { "pause %s", 1, { "FAILED_PRECONDITION" } },
    { "resume %s", 0, { "running" } },
    { "suspend %s", 0, { "suspended" } },
    { "resume %s", 0, { NULL } },
    { "cat %s /root/via-cli.txt | cmp - /etc/os-release && echo same", 0, { "same" } },
    { "rm %s", 0, { NULL } },
    { "get %s", 1, { "NOT_FOUND" } },
};

static void test_cli_session(void **state)
{
    (void)state;
    char out[65536], id[128];
    assert_int_equal(ctl(out, sizeof(out), "--json create"), 0);
    json_error_t jerr;
    json_t *created = json_loads(out, 0, &jerr);
    assert_non_null(created);
    const char *created_id = json_string_value(json_object_get(created, "id"));
    assert_non_null(created_id);
    snprintf(id, sizeof(id), "%s", created_id);
    assert_string_equal(json_string_value(json_object_get(created, "state")), "running");
    json_decref(created);
    assert_memory_equal(id, "sb_", 3);

    for (size_t i = 0; i < sizeof(session) / sizeof(*session); i++) {
        const struct ctl_step *step = &session[i];
        char args[1024];
        snprintf(args, sizeof(args), step->args, id);
        if (ctl(out, sizeof(out), "%s", args) != step->code)
            fail_msg("vmhostctl %s: want exit %d; output:\n%s", args, step->code, out);
        for (size_t j = 0; j < 2 && step->says[j]; j++) {
            char want[256];
            snprintf(want, sizeof(want), step->says[j], id);
            if (!strstr(out, want))
                fail_msg("vmhostctl %s: no \"%s\" in:\n%s", args, want, out);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cli_session),
    };
    return cmocka_run_group_tests(tests, group_setup, itest_group_teardown);
}
