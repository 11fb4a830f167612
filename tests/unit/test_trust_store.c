/* guestd's sandbox CA in the trust store (guest/trust_store.h), on files in
 * a temp directory: the CA goes to the end of the bundle after a marker,
 * replaces an earlier session's, leaves the rest of the bundle as it was,
 * and a malformed certificate changes nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "trust_store.h"

#define PEM_A "-----BEGIN CERTIFICATE-----\nQUFBQQ==\n-----END CERTIFICATE-----\n"
#define PEM_B "-----BEGIN CERTIFICATE-----\nQkJCQg==\n-----END CERTIFICATE-----\n"
/* The image's own bundle, its last line without a newline. */
#define SYSTEM_CAS "-----BEGIN CERTIFICATE-----\nU1lTVEVN\n-----END CERTIFICATE-----"

static char dir[64], bundle[128], ca_file[160];

static char *slurp(const char *path)
{
    char *data = NULL, err[256];
    size_t len;
    assert_int_equal(fs_read_file(path, 1 << 20, &data, &len, err, sizeof(err)), 0);
    return data;
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/airlock-trust-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    snprintf(bundle, sizeof(bundle), "%s/etc/ssl/certs/ca-certificates.crt", dir);
    snprintf(ca_file, sizeof(ca_file), "%s/usr/local/share/ca-certificates/airlock.crt", dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return fs_remove_tree(dir, NULL, 0);
}

static void test_ca_replaces_the_last_sessions(void **state)
{
    (void)state;
    char err[256], msg[256];
    assert_int_equal(fs_mkdir_p(dir, 0755, err, sizeof(err)), 0);
    char certs[160];
    snprintf(certs, sizeof(certs), "%s/etc/ssl/certs", dir);
    assert_int_equal(fs_mkdir_p(certs, 0755, err, sizeof(err)), 0);
    assert_int_equal(fs_write_file_atomic(bundle, SYSTEM_CAS, strlen(SYSTEM_CAS), 0644, err,
                                          sizeof(err)),
                     0);
    assert_int_equal(trust_store_install_ca(PEM_A, bundle, ca_file, msg, sizeof(msg)), 0);
    char *got = slurp(bundle);
    assert_string_equal(got, SYSTEM_CAS "\n" TRUST_STORE_MARKER PEM_A);
    free(got);
    got = slurp(ca_file);
    assert_string_equal(got, PEM_A);
    free(got);

    /* The same CA again (a resume): the bundle is left alone. */
    struct stat before, after;
    assert_int_equal(stat(bundle, &before), 0);
    assert_int_equal(trust_store_install_ca(PEM_A, bundle, ca_file, msg, sizeof(msg)), 0);
    assert_int_equal(stat(bundle, &after), 0);
    assert_int_equal(before.st_ino, after.st_ino);

    /* Another sandbox's CA (a fork): the old one is gone, the system's stay. */
    assert_int_equal(trust_store_install_ca(PEM_B, bundle, ca_file, msg, sizeof(msg)), 0);
    got = slurp(bundle);
    assert_string_equal(got, SYSTEM_CAS "\n" TRUST_STORE_MARKER PEM_B);
    free(got);
    got = slurp(ca_file);
    assert_string_equal(got, PEM_B);
    free(got);
}

static void test_malformed_certificate_changes_nothing(void **state)
{
    (void)state;
    char msg[256];
    const char *bad[] = { "", "not a certificate", PEM_A "trailing",
                          "-----BEGIN CERTIFICATE-----\nQU\x01\n-----END CERTIFICATE-----\n" };
    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
        assert_int_equal(trust_store_install_ca(bad[i], bundle, ca_file, msg, sizeof(msg)),
                         EINVAL);
        assert_non_null(strstr(msg, "trust store"));
    }
    char *got = slurp(bundle);
    assert_string_equal(got, SYSTEM_CAS "\n" TRUST_STORE_MARKER PEM_B);
    free(got);
}

static void test_missing_bundle_is_created(void **state)
{
    (void)state;
    char msg[256];
    assert_int_equal(unlink(bundle), 0);
    assert_int_equal(trust_store_install_ca(PEM_A, bundle, ca_file, msg, sizeof(msg)), 0);
    char *got = slurp(bundle);
    assert_string_equal(got, TRUST_STORE_MARKER PEM_A);
    free(got);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ca_replaces_the_last_sessions),
        cmocka_unit_test(test_malformed_certificate_changes_nothing),
        cmocka_unit_test(test_missing_bundle_is_created),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
