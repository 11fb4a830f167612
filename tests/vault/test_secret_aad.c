/* secret_aad: one encoding per secret whatever order its bindings come
 * in, and no two secrets that differ in a covered field share one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "secret_aad.h"

static char *aad_of(const char *project, const char *sandbox, bool plaintext,
                    struct secret_binding *b, size_t n)
{
    struct secret_aad_fields f = { "sec_1", project, "", sandbox, plaintext, b, n };
    char *aad = secret_aad(&f, SECRET_AAD_VERSION);
    assert_non_null(aad);
    return aad;
}

static void test_binding_order_does_not_matter(void **state)
{
    (void)state;
    struct secret_binding ab[] = { { "a.example.com", "A: {secret}" },
                                   { "b.example.com", "B: {secret}" } };
    struct secret_binding ba[] = { { "b.example.com", "B: {secret}" },
                                   { "a.example.com", "A: {secret}" } };
    char *x = aad_of("p", "", false, ab, 2), *y = aad_of("p", "", false, ba, 2);
    assert_string_equal(x, y);
    assert_string_equal(x, "airlock-vault/secret/v2/5:sec_1,1:p,0:,0:,1:0,1:2,"
                           "13:a.example.com,11:A: {secret},13:b.example.com,11:B: {secret},");
    free(x);
    free(y);
}

/* Bytes moved from one field to the next, a rule swapped between two
 * bindings, a binding dropped, scope or plaintext changed: all differ. */
static void test_every_field_counts(void **state)
{
    (void)state;
    struct secret_binding one[] = { { "a.example.com", "A: {secret}" },
                                    { "b.example.com", "B: {secret}" } };
    struct secret_binding swapped[] = { { "a.example.com", "B: {secret}" },
                                        { "b.example.com", "A: {secret}" } };
    char *base = aad_of("p", "", false, one, 2);
    char *others[] = {
        aad_of("p", "", false, swapped, 2), aad_of("p", "", false, one, 1),
        aad_of("p", "s", false, one, 2),    aad_of("p", "", true, one, 2),
        aad_of("ps", "", false, one, 2),    aad_of("", "p", false, one, 2),
    };
    for (size_t i = 0; i < sizeof(others) / sizeof(*others); i++) {
        assert_string_not_equal(base, others[i]);
        free(others[i]);
    }
    free(base);
    struct secret_aad_fields f = { "sec_1", "p", "", "", false, one, 2 };
    char *v1 = secret_aad(&f, 1);
    assert_string_equal(v1, "airlock-vault/secret/sec_1");
    free(v1);
    assert_null(secret_aad(&f, 3));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_binding_order_does_not_matter),
        cmocka_unit_test(test_every_field_counts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
