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

    assert_int_equal(ctl(out, sizeof(out), "ls"), 0);
    assert_non_null(strstr(out, id));

    assert_int_equal(ctl(out, sizeof(out), "exec %s -- sh -c 'echo from-guest; exit 5'", id), 5);
    assert_non_null(strstr(out, "from-guest"));

    assert_int_equal(ctl(out, sizeof(out), "exec %s --timeout 1 -- sleep 100", id), 124);

    assert_int_equal(ctl(out, sizeof(out), "put %s /root/via-cli.txt < /etc/os-release", id), 0);
    assert_int_equal(ctl(out, sizeof(out), "cat %s /root/via-cli.txt | cmp - /etc/os-release && echo same", id), 0);
    assert_non_null(strstr(out, "same"));

    assert_int_equal(ctl(out, sizeof(out), "ls-files %s /root", id), 0);
    assert_non_null(strstr(out, "via-cli.txt"));

    /* Errors: one line naming the status and what was wrong, exit 1. */
    assert_int_equal(ctl(out, sizeof(out), "cat %s /no/such/file", id), 1);
    assert_non_null(strstr(out, "vmhostctl: NOT_FOUND"));
    assert_non_null(strstr(out, "/no/such/file"));
    assert_int_equal(ctl(out, sizeof(out), "exec sb_nope -- true"), 1);
    assert_non_null(strstr(out, "sb_nope"));
    assert_int_equal(ctl(out, sizeof(out), "exec %s -- no-such-binary", id), 1);
    assert_non_null(strstr(out, "not found"));
    /* Usage errors: exit 2 with usage text. */
    assert_int_equal(ctl(out, sizeof(out), "exec"), 2);
    assert_non_null(strstr(out, "usage"));

    /* Lifecycle: each prints the sandbox in its new state. */
    assert_int_equal(ctl(out, sizeof(out), "pause %s", id), 0);
    assert_non_null(strstr(out, "paused"));
    assert_int_equal(ctl(out, sizeof(out), "pause %s", id), 1);
    assert_non_null(strstr(out, "FAILED_PRECONDITION"));
    assert_int_equal(ctl(out, sizeof(out), "resume %s", id), 0);
    assert_non_null(strstr(out, "running"));
    assert_int_equal(ctl(out, sizeof(out), "suspend %s", id), 0);
    assert_non_null(strstr(out, "suspended"));
    assert_int_equal(ctl(out, sizeof(out), "resume %s", id), 0);
    assert_int_equal(ctl(out, sizeof(out), "cat %s /root/via-cli.txt | cmp - /etc/os-release && echo same", id), 0);
    assert_non_null(strstr(out, "same"));

    assert_int_equal(ctl(out, sizeof(out), "rm %s", id), 0);
    assert_int_equal(ctl(out, sizeof(out), "get %s", id), 1);
    assert_non_null(strstr(out, "NOT_FOUND"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cli_session),
    };
    return cmocka_run_group_tests(tests, group_setup, itest_group_teardown);
}
