/* Template specs (common/template_spec): the JSON form read into
 * TemplateSpec with every field, base64 and octal modes decoded, and each
 * mistake refused with a message naming the field; template refs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "template_spec.h"

static void test_full_spec(void **state)
{
    (void)state;
    const char *text =
        "{\"name\":\"py-tools.v2\",\"base\":\"default\",\"packages\":[\"jq\",\"python3-venv\"],"
        "\"files\":[{\"path\":\"/opt/a\",\"content\":\"hi\\n\",\"mode\":\"0600\"},"
        "{\"path\":\"/opt/b\",\"content_b64\":\"AAEC/w==\",\"mode\":493},{\"path\":\"/opt/c\"}],"
        "\"run\":[\"echo one\",\"echo two\"],\"env\":{\"A\":\"1\",\"B_2\":\"x y\"},"
        "\"workdir\":\"/opt\",\"start_cmd\":\"sleep 1\",\"cpus\":2,\"memory_mb\":1024,"
        "\"warm_pool\":1,\"network\":{\"default\":\"allow\"}}";
    struct template_spec_json s;
    char err[256] = "";
    assert_int_equal(template_spec_from_json(text, strlen(text), &s, err, sizeof(err)), 0);
    const Airlock__Vmhost__V1__TemplateSpec *m = &s.msg;
    assert_string_equal(m->name, "py-tools.v2");
    assert_string_equal(m->base_template, "default");
    assert_int_equal(m->n_packages, 2);
    assert_string_equal(m->packages[1], "python3-venv");
    assert_int_equal(m->n_files, 3);
    assert_int_equal(m->files[0]->mode, 0600);
    assert_memory_equal(m->files[0]->content.data, "hi\n", 3);
    assert_int_equal(m->files[0]->content.len, 3);
    assert_int_equal(m->files[1]->mode, 0755);
    assert_int_equal(m->files[1]->content.len, 4);
    assert_memory_equal(m->files[1]->content.data, "\x00\x01\x02\xff", 4);
    assert_int_equal(m->files[2]->content.len, 0);
    assert_int_equal(m->n_run, 2);
    assert_int_equal(m->n_env, 2);
    assert_string_equal(m->workdir, "/opt");
    assert_string_equal(m->start_cmd, "sleep 1");
    assert_int_equal(m->cpus, 2);
    assert_int_equal(m->memory_mb, 1024);
    assert_int_equal(m->warm_pool, 1);
    assert_non_null(m->network);
    template_spec_json_free(&s);
}

static void test_mistakes_name_their_field(void **state)
{
    (void)state;
    static const struct {
        const char *json, *field;
    } cases[] = {
        { "{\"name\":", "not valid JSON" },
        { "[]", "JSON object" },
        { "{}", "name: required" },
        { "{\"name\":\"Big\"}", "name:" },
        { "{\"name\":\"-x\"}", "name:" },
        { "{\"name\":\"default\"}", "default" },
        { "{\"name\":\"x\",\"colour\":1}", "colour: unknown field" },
        { "{\"name\":\"x\",\"base\":\"other\"}", "base:" },
        { "{\"name\":\"x\",\"packages\":\"jq\"}", "packages:" },
        { "{\"name\":\"x\",\"packages\":[\"J Q\"]}", "packages[0]" },
        { "{\"name\":\"x\",\"files\":[{\"path\":\"rel\"}]}", "files[0].path" },
        { "{\"name\":\"x\",\"files\":[{\"path\":\"/a\",\"size\":1}]}", "files[0].size: unknown" },
        { "{\"name\":\"x\",\"files\":[{\"path\":\"/a\",\"mode\":\"0999\"}]}", "files[0].mode" },
        { "{\"name\":\"x\",\"files\":[{\"path\":\"/a\",\"mode\":4096}]}", "files[0].mode" },
        { "{\"name\":\"x\",\"files\":[{\"path\":\"/a\",\"content_b64\":\"abc\"}]}",
          "files[0].content_b64" },
        { "{\"name\":\"x\",\"files\":[{\"path\":\"/a\",\"content\":\"a\",\"content_b64\":\"YQ==\"}]}",
          "files[0]: content and content_b64" },
        { "{\"name\":\"x\",\"run\":[\"ok\",\"\"]}", "run[1]" },
        { "{\"name\":\"x\",\"run\":[1]}", "run[0]: must be a string" },
        { "{\"name\":\"x\",\"env\":{\"1A\":\"v\"}}", "env:" },
        { "{\"name\":\"x\",\"env\":{\"A\":2}}", "env.A" },
        { "{\"name\":\"x\",\"workdir\":\"opt\"}", "workdir" },
        { "{\"name\":\"x\",\"cpus\":-1}", "cpus" },
        { "{\"name\":\"x\",\"cpus\":17}", "cpus" },
        { "{\"name\":\"x\",\"memory_mb\":64}", "memory_mb" },
        { "{\"name\":\"x\",\"warm_pool\":99}", "warm_pool" },
        { "{\"name\":\"x\",\"network\":{\"default\":\"maybe\"}}", "network.default" },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        struct template_spec_json s;
        char err[512] = "";
        int rc = template_spec_from_json(cases[i].json, strlen(cases[i].json), &s, err, sizeof(err));
        if (rc == 0 || !strstr(err, cases[i].field))
            fail_msg("%s: rc %d, \"%s\" does not name %s", cases[i].json, rc, err, cases[i].field);
    }
}

static void test_refs(void **state)
{
    (void)state;
    char name[TEMPLATE_NAME_MAX + 1];
    unsigned v;
    assert_true(template_ref_parse("py-tools", name, sizeof(name), &v));
    assert_string_equal(name, "py-tools");
    assert_int_equal(v, 0);
    assert_true(template_ref_parse("prj_1.web:12", name, sizeof(name), &v));
    assert_string_equal(name, "prj_1.web");
    assert_int_equal(v, 12);
    assert_false(template_ref_parse("web:0", name, sizeof(name), &v));
    assert_false(template_ref_parse("web:", name, sizeof(name), &v));
    assert_false(template_ref_parse("web:1x", name, sizeof(name), &v));
    assert_false(template_ref_parse("Web", name, sizeof(name), &v));
    assert_false(template_ref_parse("", name, sizeof(name), &v));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full_spec),
        cmocka_unit_test(test_mistakes_name_their_field),
        cmocka_unit_test(test_refs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
