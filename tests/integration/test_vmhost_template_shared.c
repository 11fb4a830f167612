/* Named templates across two real vmhosts (A, B) on one shared snapshot
 * store (docs/templates.md "Across nodes"): a version built on A is in the
 * store when its build answers; B, which lacks it, refuses a create that
 * names no set (NOT_FOUND), a set the store lacks (NOT_FOUND naming it)
 * and a corrupt memory delta (DATA_LOSS naming the object), keeping
 * nothing each time; then creates from it with the template's file, env,
 * workdir and start command, keeping it as its own version (across a
 * restart, when creates name no set); a delete
 * naming the set removes B's copy and the set. A sandbox of a named
 * template suspended on A resumes on B, which fetches the template. */
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
#include "itest_shared_store.h"
#include "itest_template.h"
#include "rpc_client.h"

typedef Airlock__Vmhost__V1__TemplateSpec TemplateSpec;
typedef Airlock__Vmhost__V1__TemplateFile TemplateFile;
typedef Airlock__Vmhost__V1__TemplateSpec__EnvEntry EnvEntry;

static struct itest_vmhost node_b;
static char store_dir[64] = "/tmp/airlock-template-store-XXXXXX";

static const char *const store_args[] = { "--snapshot-store", store_dir, NULL };

static int group_setup(void **state)
{
    (void)state;
    return itest_store_pair_start(store_dir, &node_b, NULL);
}

static int group_teardown(void **state)
{
    return itest_store_pair_stop(store_dir, &node_b, state);
}

/* A spec with a file, env, workdir and a start command. */
static TemplateFile file = AIRLOCK__VMHOST__V1__TEMPLATE_FILE__INIT;
static EnvEntry env = AIRLOCK__VMHOST__V1__TEMPLATE_SPEC__ENV_ENTRY__INIT;
static EnvEntry *envs[] = { &env };
static TemplateFile *files[] = { &file };

static TemplateSpec spec_named(const char *name)
{
    file.path = "/opt/app/shared.txt";
    file.content.data = (uint8_t *)"built-on-a\n";
    file.content.len = strlen("built-on-a\n");
    file.mode = 0644;
    env.key = "SHARED";
    env.value = "from-the-store";
    TemplateSpec s = AIRLOCK__VMHOST__V1__TEMPLATE_SPEC__INIT;
    s.name = (char *)name;
    s.n_files = 1;
    s.files = files;
    s.n_env = 1;
    s.env = envs;
    s.workdir = "/opt/app";
    s.start_cmd = "exec sleep 86400";
    return s;
}

/* Builds name on A: its set in the store (malloc'd), which holds it. */
static char *build_on_a(const char *name)
{
    TemplateSpec spec = spec_named(name);
    struct itest_build r;
    itest_must_build(&itest_vh, &spec, &r);
    assert_non_null(r.done->done);
    char *set = strdup(r.done->done->store_object);
    assert_non_null(strstr(r.log, set)); /* the build log says where */
    itest_build_free(&r);
    assert_int_equal(strncmp(set, "templates/", 10), 0);
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/%s/manifest.json", store_dir, set);
    assert_int_equal(access(path, F_OK), 0);
    return set;
}

static char *create_on(struct itest_vmhost *vh, const char *tmpl, const char *set,
                       grpc_status_code *st, char **details)
{
    Airlock__Vmhost__V1__CreateSandboxRequest req = AIRLOCK__VMHOST__V1__CREATE_SANDBOX_REQUEST__INIT;
    req.template_ = (char *)tmpl;
    req.template_store_object = (char *)set;
    return itest_create_sandbox_with(vh, &req, st, details);
}

static char *must_create_on(struct itest_vmhost *vh, const char *tmpl, const char *set)
{
    grpc_status_code st;
    char *details = NULL;
    char *id = create_on(vh, tmpl, set, &st, &details);
    if (!id)
        fail_msg("create of %s: %s %s", tmpl, rpc_status_name(st), details ? details : "");
    free(details);
    return id;
}

static grpc_status_code delete_template(struct itest_vmhost *vh, const char *ref,
                                        const char *set)
{
    Airlock__Vmhost__V1__TemplateRef req = AIRLOCK__VMHOST__V1__TEMPLATE_REF__INIT;
    req.name = (char *)ref;
    req.store_object = (char *)set;
    char *details = NULL;
    grpc_status_code st = itest_call(vh, ITEST_METHOD("DeleteTemplate"), &req.base,
                                     &airlock__vmhost__v1__empty__descriptor, &details);
    if (st != GRPC_STATUS_OK)
        print_message("DeleteTemplate %s: %s\n", ref, details ? details : "");
    free(details);
    return st;
}

/* Whether vh keeps anything of name: its version directory or a build
 * (fetch) directory. */
static bool keeps_any(const struct itest_vmhost *vh, const char *name)
{
    char path[PATH_MAX];
    assert_int_equal(fs_path(path, sizeof(path), "%s/store/templates/named/%s", vh->data_dir,
                             name), 0);
    if (access(path, F_OK) == 0)
        return true;
    assert_int_equal(fs_path(path, sizeof(path), "%s/store/templates", vh->data_dir), 0);
    DIR *d = opendir(path);
    struct dirent *e;
    bool building = false;
    while (d && (e = readdir(d)))
        building = building || strncmp(e->d_name, ".build-", 7) == 0;
    if (d)
        closedir(d);
    return building;
}

/* The template's file, env, workdir and running start command. */
static void assert_has_template(struct itest_vmhost *vh, const char *id)
{
    char *out = itest_assert_sh(
        vh, id,
        "cat shared.txt; echo \"$SHARED $(pwd)\";"
        " for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline; echo; done"
        " | grep -c '^sleep 86400'");
    assert_string_equal(out, "built-on-a\nfrom-the-store /opt/app\n1\n");
    free(out);
}

static void test_built_on_a_created_on_b(void **state)
{
    (void)state;
    char *set = build_on_a("itest-anywhere");
    grpc_status_code st;
    char *details = NULL;

    /* B lacks it: no set named, a set the store lacks, a corrupt one. */
    assert_null(create_on(&node_b, "itest-anywhere:1", "", &st, &details));
    itest_assert_status_naming(st, &details, GRPC_STATUS_NOT_FOUND, "itest-anywhere:1");
    const char *missing = "templates/0000000000000000000000000000000000000000000000000000000000000000-0000000000000000";
    assert_null(create_on(&node_b, "itest-anywhere:1", missing, &st, &details));
    itest_assert_status_naming(st, &details, GRPC_STATUS_NOT_FOUND, missing);
    assert_false(keeps_any(&node_b, "itest-anywhere"));
    char path[PATH_MAX], object[300];
    snprintf(path, sizeof(path), "%s/%s/mem.delta", store_dir, set);
    snprintf(object, sizeof(object), "%s/mem.delta", set);
    itest_flip_middle_byte(path);
    assert_null(create_on(&node_b, "itest-anywhere:1", set, &st, &details));
    itest_assert_status_naming(st, &details, GRPC_STATUS_DATA_LOSS, object);
    assert_false(keeps_any(&node_b, "itest-anywhere"));
    assert_int_equal(itest_count_qemus(node_b.data_dir), 0);
    itest_flip_middle_byte(path);

    /* Whole again: B fetches it and creates from it, and keeps it. */
    char *id = must_create_on(&node_b, "itest-anywhere:1", set);
    assert_has_template(&node_b, id);
    assert_int_equal(fs_path(path, sizeof(path),
                             "%s/store/templates/named/itest-anywhere/1/manifest.json",
                             node_b.data_dir), 0);
    assert_int_equal(access(path, F_OK), 0);
    assert_int_equal(itest_delete_sandbox(&node_b, id), GRPC_STATUS_OK);
    /* B's own version now: loaded again at its restart, no set needed. */
    assert_int_equal(itest_vmhost_restart_with(&node_b, store_args), 0);
    char *again = must_create_on(&node_b, "itest-anywhere", "");
    assert_has_template(&node_b, again);
    assert_int_equal(itest_delete_sandbox(&node_b, again), GRPC_STATUS_OK);

    /* Deleted with its set: B's copy and the store's go; A's stays until
     * A is told. */
    assert_int_equal(delete_template(&node_b, "itest-anywhere", set), GRPC_STATUS_OK);
    assert_false(keeps_any(&node_b, "itest-anywhere"));
    snprintf(path, sizeof(path), "%s/%s", store_dir, set);
    assert_int_not_equal(access(path, F_OK), 0);
    assert_int_equal(delete_template(&itest_vh, "itest-anywhere", ""), GRPC_STATUS_OK);
    free(again);
    free(id);
    free(set);
}

static void test_named_sandbox_resumes_where_its_template_is_not(void **state)
{
    (void)state;
    char *set = build_on_a("itest-mover");
    char *id = must_create_on(&itest_vh, "itest-mover", "");
    free(itest_assert_sh(&itest_vh, id, "echo moved > /root/moved"));
    char *object = itest_assert_suspend_to_store(&itest_vh, id);
    assert_false(keeps_any(&node_b, "itest-mover"));

    itest_assert_resume_from(&node_b, id, object);
    char *out = itest_assert_sh(&node_b, id, "cat /root/moved");
    assert_string_equal(out, "moved\n");
    free(out);
    assert_has_template(&node_b, id);

    assert_int_equal(itest_delete_sandbox(&node_b, id), GRPC_STATUS_OK);
    assert_int_equal(itest_delete_sandbox(&itest_vh, id), GRPC_STATUS_OK);
    assert_int_equal(delete_template(&node_b, "itest-mover", set), GRPC_STATUS_OK);
    assert_int_equal(delete_template(&itest_vh, "itest-mover", ""), GRPC_STATUS_OK);
    free(object);
    free(id);
    free(set);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_built_on_a_created_on_b),
        cmocka_unit_test(test_named_sandbox_resumes_where_its_template_is_not),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
