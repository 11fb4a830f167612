/* Named, versioned templates on a real vmhost: BuildTemplate from a spec
 * (a file, run commands, env, workdir, a start command, a size) streams
 * the run commands' output and ends with the template; a sandbox of it is
 * restored at the template's size with the file, the run command's marker,
 * the env and workdir as exec defaults (an exec's own env wins) and the
 * start command running. A second build is version 2 ("name" takes it,
 * "name:1" the first) with a warm pool of its own. Unknown templates are
 * NOT_FOUND naming them; bad specs INVALID_ARGUMENT naming the field; a
 * failing run command fails the build naming it; none of those leave a
 * directory, namespace or VM. A package in the spec is installed. A
 * template in use cannot be deleted; a restarted vmhost still has the
 * templates it built. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsutil.h"
#include "itest.h"
#include "itest_assert.h"
#include "itest_group.h"
#include "itest_template.h"

#define TEMPLATE "itest-tpl"
#define POOL_FILL_TIMEOUT_MS 180000

typedef Airlock__Vmhost__V1__TemplateSpec TemplateSpec;
typedef Airlock__Vmhost__V1__TemplateFile TemplateFile;
typedef Airlock__Vmhost__V1__TemplateSpec__EnvEntry EnvEntry;

/* The spec the tests build: one file, two run commands, env, workdir,
 * a start command and a size other than the default's. */
static TemplateFile config_file = AIRLOCK__VMHOST__V1__TEMPLATE_FILE__INIT;
static EnvEntry greeting = AIRLOCK__VMHOST__V1__TEMPLATE_SPEC__ENV_ENTRY__INIT;
static EnvEntry *env_entries[] = { &greeting };
static TemplateFile *files[] = { &config_file };
static char *run_cmds[] = { "echo building-marker; echo to-stderr >&2",
                            "mkdir -p /opt && echo \"marker $GREETING $(pwd)\" > /opt/marker" };

static TemplateSpec spec_v1(void)
{
    config_file.path = "/opt/app/config.txt";
    config_file.content.data = (uint8_t *)"from-the-spec\n";
    config_file.content.len = strlen("from-the-spec\n");
    config_file.mode = 0600;
    greeting.key = "GREETING";
    greeting.value = "hello-template";
    TemplateSpec s = AIRLOCK__VMHOST__V1__TEMPLATE_SPEC__INIT;
    s.name = TEMPLATE;
    s.n_files = 1;
    s.files = files;
    s.n_run = 2;
    s.run = run_cmds;
    s.n_env = 1;
    s.env = env_entries;
    s.workdir = "/opt/app";
    s.start_cmd = "exec sleep 86400";
    s.memory_mb = 384;
    return s;
}

static char *create_from(const char *tmpl, grpc_status_code *st, char **details)
{
    Airlock__Vmhost__V1__CreateSandboxRequest req = AIRLOCK__VMHOST__V1__CREATE_SANDBOX_REQUEST__INIT;
    req.template_ = (char *)tmpl;
    return itest_create_sandbox_with(&itest_vh, &req, st, details);
}

static char *must_create_from(const char *tmpl)
{
    char *details = NULL;
    grpc_status_code st;
    char *id = create_from(tmpl, &st, &details);
    if (!id) {
        itest_vmhost_print_log_tail(&itest_vh);
        fail_msg("create from %s: %s %s", tmpl, rpc_status_name(st), details ? details : "");
    }
    free(details);
    return id;
}

static Airlock__Vmhost__V1__Sandbox *get_sandbox(const char *id)
{
    grpc_status_code st;
    Airlock__Vmhost__V1__Sandbox *sb =
        itest_sandbox_call(&itest_vh, ITEST_METHOD("GetSandbox"), id, &st, NULL);
    assert_int_equal(st, GRPC_STATUS_OK);
    return sb;
}

static char *sh_out(const char *id, const char *script)
{
    struct itest_exec_result r;
    itest_sh(&itest_vh, id, script, &r);
    if (r.status != GRPC_STATUS_OK || r.exit_code != 0)
        fail_msg("sh %s: %s %s exit %d: %s", script, rpc_status_name(r.status),
                 r.details ? r.details : "", r.exit_code, r.err ? (char *)r.err : "");
    char *out = strdup((char *)r.out);
    itest_exec_result_free(&r);
    return out;
}

static Airlock__Vmhost__V1__Template *get_template(const char *ref, grpc_status_code *st,
                                                   char **details)
{
    Airlock__Vmhost__V1__TemplateRef req = AIRLOCK__VMHOST__V1__TEMPLATE_REF__INIT;
    req.name = (char *)ref;
    ProtobufCMessage *resp = NULL;
    *st = rpc_unary(itest_vh.ch, ITEST_METHOD("GetTemplate"), &req.base,
                    &airlock__vmhost__v1__template__descriptor, &resp, details,
                    ITEST_CALL_TIMEOUT_MS);
    return (Airlock__Vmhost__V1__Template *)resp;
}

static grpc_status_code delete_template(const char *ref, char **details)
{
    Airlock__Vmhost__V1__TemplateRef req = AIRLOCK__VMHOST__V1__TEMPLATE_REF__INIT;
    req.name = (char *)ref;
    return itest_call(&itest_vh, ITEST_METHOD("DeleteTemplate"), &req.base,
                      &airlock__vmhost__v1__empty__descriptor, details);
}

/* Entries of dir whose names start with prefix. */
static size_t count_entries(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    size_t n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0)
            n++;
    if (d)
        closedir(d);
    return n;
}

static char templates_dir[PATH_MAX];

/* No build directory, template namespace or extra VM is left. */
static void assert_nothing_left(size_t qemus_before, size_t netns_before)
{
    assert_int_equal(count_entries(templates_dir, ".build-"), 0);
    assert_int_equal(count_entries("/run/netns", "airlock-template-"), netns_before);
    assert_int_equal(itest_count_qemus(itest_vh.data_dir), qemus_before);
}

static void test_build_and_create(void **state)
{
    (void)state;
    assert_int_equal(
        fs_path(templates_dir, sizeof(templates_dir), "%s/store/templates", itest_vh.data_dir), 0);
    TemplateSpec spec = spec_v1();
    struct itest_build r;
    itest_must_build(&itest_vh, &spec, &r);
    /* The run commands' output (stdout and stderr) is the build log. */
    assert_non_null(strstr(r.log, "| building-marker\n"));
    assert_non_null(strstr(r.log, "| to-stderr\n"));
    assert_non_null(strstr(r.log, "run[1]: mkdir -p /opt"));
    Airlock__Vmhost__V1__Template *t = r.done->done;
    assert_int_equal(r.done->event_case, AIRLOCK__VMHOST__V1__BUILD_TEMPLATE_EVENT__EVENT_DONE);
    assert_string_equal(t->ref, TEMPLATE ":1");
    assert_int_equal(t->version, 1);
    assert_int_equal(t->memory_mb, 384);
    assert_int_equal(t->cpus, 1);
    assert_string_equal(t->workdir, "/opt/app");
    assert_int_equal(t->n_env, 1);
    assert_string_equal(t->env[0]->value, "hello-template");
    itest_build_free(&r);

    char *id = must_create_from(TEMPLATE);
    Airlock__Vmhost__V1__Sandbox *sb = get_sandbox(id);
    assert_true(sb->restored);
    assert_int_equal(sb->memory_mb, 384);
    assert_string_equal(sb->template_, TEMPLATE ":1");
    protobuf_c_message_free_unpacked(&sb->base, NULL);

    char *out = sh_out(id, "cat /opt/app/config.txt; stat -c %a /opt/app/config.txt; cat /opt/marker;"
                           " echo \"$GREETING\"; pwd");
    assert_string_equal(out, "from-the-spec\n600\nmarker hello-template /opt/app\n"
                             "hello-template\n/opt/app\n");
    free(out);
    /* An exec's own env and cwd win over the template's. */
    const char *const argv[] = { "sh", "-c", "echo \"$GREETING\"; pwd", NULL };
    const char *const env[] = { "GREETING=mine", NULL };
    struct itest_exec_options opts = { .env = env, .cwd = "/tmp" };
    struct itest_exec_result er;
    itest_exec(&itest_vh, id, argv, &opts, &er);
    assert_int_equal(er.status, GRPC_STATUS_OK);
    assert_string_equal((char *)er.out, "mine\n/tmp\n");
    itest_exec_result_free(&er);
    /* The start command was running when the snapshot was taken. */
    out = sh_out(id, "ps -eo args | grep -c '^sleep 86400$'");
    assert_string_equal(out, "1\n");
    free(out);
    assert_int_equal(itest_delete_sandbox(&itest_vh, id), GRPC_STATUS_OK);
    free(id);
}

static void test_versions_and_pool(void **state)
{
    (void)state;
    TemplateSpec spec = spec_v1();
    EnvEntry v2 = AIRLOCK__VMHOST__V1__TEMPLATE_SPEC__ENV_ENTRY__INIT;
    v2.key = "GREETING";
    v2.value = "second";
    EnvEntry *v2_env[] = { &v2 };
    spec.env = v2_env;
    spec.warm_pool = 1;
    struct itest_build r;
    itest_must_build(&itest_vh, &spec, &r);
    assert_string_equal(r.done->done->ref, TEMPLATE ":2");
    itest_build_free(&r);

    /* Its pool fills; "name" takes the newest version, from the pool. */
    Airlock__Vmhost__V1__Template *t = NULL;
    grpc_status_code st;
    for (int waited = 0; waited < POOL_FILL_TIMEOUT_MS; waited += 200) {
        t = get_template(TEMPLATE, &st, NULL);
        assert_int_equal(st, GRPC_STATUS_OK);
        if (t->pool_ready == 1)
            break;
        protobuf_c_message_free_unpacked(&t->base, NULL);
        t = NULL;
        usleep(200 * 1000);
    }
    assert_non_null(t);
    assert_string_equal(t->ref, TEMPLATE ":2");
    assert_int_equal(t->pool_target, 1);
    protobuf_c_message_free_unpacked(&t->base, NULL);

    char *newest = must_create_from(TEMPLATE);
    Airlock__Vmhost__V1__Sandbox *sb = get_sandbox(newest);
    assert_string_equal(sb->template_, TEMPLATE ":2");
    assert_true(sb->from_pool);
    protobuf_c_message_free_unpacked(&sb->base, NULL);
    char *out = sh_out(newest, "echo \"$GREETING\"; cat /opt/marker");
    assert_string_equal(out, "second\nmarker second /opt/app\n");
    free(out);

    char *first = must_create_from(TEMPLATE ":1");
    sb = get_sandbox(first);
    assert_string_equal(sb->template_, TEMPLATE ":1");
    protobuf_c_message_free_unpacked(&sb->base, NULL);
    out = sh_out(first, "echo \"$GREETING\"");
    assert_string_equal(out, "hello-template\n");
    free(out);

    /* In use: refused, naming the sandbox; once it is gone, deleted. */
    char *details = NULL;
    itest_assert_status_naming(delete_template(TEMPLATE ":1", &details), &details,
                               GRPC_STATUS_FAILED_PRECONDITION, first);
    assert_int_equal(itest_delete_sandbox(&itest_vh, first), GRPC_STATUS_OK);
    details = NULL;
    assert_int_equal(delete_template(TEMPLATE ":1", &details), GRPC_STATUS_OK);
    free(details);
    char dir[PATH_MAX];
    assert_int_equal(fs_path(dir, sizeof(dir), "%s/named/" TEMPLATE "/1", templates_dir), 0);
    assert_int_equal(access(dir, F_OK), -1);
    details = NULL;
    assert_null(get_template(TEMPLATE ":1", &st, &details));
    itest_assert_status_naming(st, &details, GRPC_STATUS_NOT_FOUND, TEMPLATE ":1");
    assert_int_equal(itest_delete_sandbox(&itest_vh, newest), GRPC_STATUS_OK);
    free(first);
    free(newest);
}

static void test_unknown_template_is_not_found(void **state)
{
    (void)state;
    const char *refs[] = { "no-such-template", TEMPLATE ":99", "Bad Name!" };
    for (size_t i = 0; i < sizeof(refs) / sizeof(*refs); i++) {
        grpc_status_code st;
        char *details = NULL;
        assert_null(create_from(refs[i], &st, &details));
        itest_assert_status_naming(st, &details, GRPC_STATUS_NOT_FOUND, refs[i]);
    }
    grpc_status_code st;
    char *details = NULL;
    assert_null(get_template("no-such-template", &st, &details));
    itest_assert_status_naming(st, &details, GRPC_STATUS_NOT_FOUND, "no-such-template");
    details = NULL;
    itest_assert_status_naming(delete_template("no-such-template", &details), &details,
                               GRPC_STATUS_NOT_FOUND, "no-such-template");
    /* A named template has its size: another one is refused. */
    Airlock__Vmhost__V1__CreateSandboxRequest req = AIRLOCK__VMHOST__V1__CREATE_SANDBOX_REQUEST__INIT;
    req.template_ = TEMPLATE;
    req.memory_mb = 512;
    details = NULL;
    assert_null(itest_create_sandbox_with(&itest_vh, &req, &st, &details));
    itest_assert_status_naming(st, &details, GRPC_STATUS_INVALID_ARGUMENT, "memory_mb");
}

static void test_bad_specs_leave_nothing(void **state)
{
    (void)state;
    size_t qemus = itest_count_qemus(itest_vh.data_dir);
    size_t netns = count_entries("/run/netns", "airlock-template-");
    TemplateFile relative = AIRLOCK__VMHOST__V1__TEMPLATE_FILE__INIT;
    relative.path = "etc/relative";
    TemplateFile *relative_files[] = { &relative };
    char *empty_run[] = { "true", "" };
    char *bad_package[] = { "Not_A_Package" };
    struct {
        const char *field;
        TemplateSpec spec;
    } cases[5];
    for (size_t i = 0; i < 5; i++) {
        cases[i].spec = (TemplateSpec)AIRLOCK__VMHOST__V1__TEMPLATE_SPEC__INIT;
        cases[i].spec.name = "bad-spec";
    }
    cases[0].field = "name";
    cases[0].spec.name = "Upper Case";
    cases[1].field = "files[0].path";
    cases[1].spec.n_files = 1;
    cases[1].spec.files = relative_files;
    cases[2].field = "run[1]";
    cases[2].spec.n_run = 2;
    cases[2].spec.run = empty_run;
    cases[3].field = "packages[0]";
    cases[3].spec.n_packages = 1;
    cases[3].spec.packages = bad_package;
    cases[4].field = "memory_mb";
    cases[4].spec.memory_mb = 16;
    for (size_t i = 0; i < 5; i++) {
        struct itest_build r;
        itest_build(&itest_vh, &cases[i].spec, &r);
        assert_null(r.done);
        itest_assert_status_naming(r.status, &r.details, GRPC_STATUS_INVALID_ARGUMENT,
                                   cases[i].field);
        itest_build_free(&r);
    }
    /* A run command that fails: its output is logged, the build fails
     * naming it, and nothing of it remains. */
    char *failing[] = { "echo before-failing; exit 3" };
    TemplateSpec spec = AIRLOCK__VMHOST__V1__TEMPLATE_SPEC__INIT;
    spec.name = "failing-build";
    spec.n_run = 1;
    spec.run = failing;
    struct itest_build r;
    itest_build(&itest_vh, &spec, &r);
    assert_null(r.done);
    assert_non_null(strstr(r.log, "| before-failing\n"));
    itest_assert_status_naming(r.status, &r.details, GRPC_STATUS_INVALID_ARGUMENT,
                               "run[0] (echo before-failing; exit 3): exited with code 3");
    itest_build_free(&r);
    char dir[PATH_MAX];
    assert_int_equal(fs_path(dir, sizeof(dir), "%s/named/failing-build", templates_dir), 0);
    assert_int_equal(access(dir, F_OK), -1);
    assert_nothing_left(qemus, netns);
}

/* packages: the rootfs is built with them (mmdebstrap, cached by content
 * hash: only the first run on a machine pays for it). */
static void test_packages(void **state)
{
    (void)state;
    char *packages[] = { "jq" };
    TemplateSpec spec = AIRLOCK__VMHOST__V1__TEMPLATE_SPEC__INIT;
    spec.name = "with-jq";
    spec.n_packages = 1;
    spec.packages = packages;
    struct itest_build r;
    itest_must_build(&itest_vh, &spec, &r);
    assert_non_null(strstr(r.log, "rootfs: the default image's packages and jq"));
    assert_int_equal(r.done->done->n_packages, 1);
    itest_build_free(&r);
    char *id = must_create_from("with-jq");
    char *out = sh_out(id, "echo '{\"a\":[1,2]}' | jq -c .a");
    assert_string_equal(out, "[1,2]\n");
    free(out);
    assert_int_equal(itest_delete_sandbox(&itest_vh, id), GRPC_STATUS_OK);
    free(id);
    char *details = NULL;
    assert_int_equal(delete_template("with-jq", &details), GRPC_STATUS_OK);
    free(details);
}

/* A restarted vmhost serves the templates it built. */
static void test_templates_survive_restart(void **state)
{
    (void)state;
    assert_int_equal(itest_vmhost_crash_and_restart(&itest_vh), 0);
    char *id = must_create_from(TEMPLATE);
    Airlock__Vmhost__V1__Sandbox *sb = get_sandbox(id);
    assert_string_equal(sb->template_, TEMPLATE ":2");
    protobuf_c_message_free_unpacked(&sb->base, NULL);
    char *out = sh_out(id, "cat /opt/app/config.txt; echo \"$GREETING\"");
    assert_string_equal(out, "from-the-spec\nsecond\n");
    free(out);
    assert_int_equal(itest_delete_sandbox(&itest_vh, id), GRPC_STATUS_OK);
    free(id);
    char *details = NULL;
    assert_int_equal(delete_template(TEMPLATE, &details), GRPC_STATUS_OK);
    free(details);
    char dir[PATH_MAX];
    assert_int_equal(fs_path(dir, sizeof(dir), "%s/named/" TEMPLATE, templates_dir), 0);
    assert_int_equal(access(dir, F_OK), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_build_and_create),
        cmocka_unit_test(test_versions_and_pool),
        cmocka_unit_test(test_unknown_template_is_not_found),
        cmocka_unit_test(test_bad_specs_leave_nothing),
        cmocka_unit_test(test_packages),
        cmocka_unit_test(test_templates_survive_restart),
    };
    return cmocka_run_group_tests(tests, itest_group_setup, itest_group_teardown);
}
