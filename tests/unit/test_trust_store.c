/* guestd's sandbox CA in the trust store (guest/trust_store.h), on files in
 * a temp directory: the bundle gets a page-aligned slot at its end, a
 * session's CA goes into the slot and its tmpfs copy through the mappings,
 * the rest of the bundle stays as it was; a bundle replaced, truncated or
 * missing is handled; update-ca-certificates' hook puts the slot back; a
 * malformed certificate changes nothing. */
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

static char dir[64], bundle[128], copy[128], hook[160];
static const struct trust_store_paths paths = { bundle, copy, hook };

static char *slurp(const char *path, size_t *len)
{
    char *data = NULL, err[256];
    assert_int_equal(fs_read_file(path, 1 << 20, &data, len, err, sizeof(err)), 0);
    return data;
}

static void write_file(const char *path, const char *text)
{
    char err[256];
    assert_int_equal(fs_write_file_atomic(path, text, strlen(text), 0644, err, sizeof(err)), 0);
}

static void make_dir(const char *fmt)
{
    char path[PATH_MAX], err[256];
    snprintf(path, sizeof(path), fmt, dir);
    assert_int_equal(fs_mkdir_p(path, 0755, err, sizeof(err)), 0);
}

/* The bundle is head, newlines to the next page, then a slot holding pem
 * (NULL: empty); the copy is the same slot. */
static void assert_slot(const char *head, const char *pem)
{
    size_t len, head_len = strlen(head);
    char *got = slurp(bundle, &len);
    size_t at = (head_len + TRUST_STORE_PAGE - 1) / TRUST_STORE_PAGE * TRUST_STORE_PAGE;
    assert_int_equal(len, at + TRUST_STORE_SLOT_SIZE);
    assert_memory_equal(got, head, head_len);
    for (size_t i = head_len; i < at; i++)
        assert_int_equal(got[i], '\n');
    char *slot = got + at;
    size_t marker_len = strlen(TRUST_STORE_MARKER), pem_len = pem ? strlen(pem) : 0;
    assert_memory_equal(slot, TRUST_STORE_MARKER, marker_len);
    if (pem)
        assert_memory_equal(slot + marker_len, pem, pem_len);
    for (size_t i = marker_len + pem_len; i < TRUST_STORE_SLOT_SIZE; i++)
        assert_int_equal(slot[i], '\n');
    size_t copy_len;
    char *c = slurp(copy, &copy_len);
    assert_int_equal(copy_len, TRUST_STORE_SLOT_SIZE);
    assert_memory_equal(c, slot, TRUST_STORE_SLOT_SIZE);
    free(c);
    free(got);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/airlock-trust-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    snprintf(bundle, sizeof(bundle), "%s/etc/ssl/certs/ca-certificates.crt", dir);
    snprintf(copy, sizeof(copy), "%s/run/airlock/trust-slot", dir);
    snprintf(hook, sizeof(hook), "%s/etc/ca-certificates/update.d/airlock-sandbox-ca", dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    trust_store_release();
    return fs_remove_tree(dir, NULL, 0);
}

static void prepare_system(void)
{
    char msg[256];
    make_dir("%s/etc/ssl/certs");
    make_dir("%s/etc/ca-certificates/update.d");
    write_file(bundle, SYSTEM_CAS);
    assert_int_equal(trust_store_prepare(&paths, msg, sizeof(msg)), 0);
}

static void test_prepare_reserves_the_slot(void **state)
{
    (void)state;
    prepare_system();
    assert_slot(SYSTEM_CAS "\n", NULL);
    struct stat st;
    assert_int_equal(stat(hook, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0755);
    /* Again (the next boot): nothing changes, not even the inode. */
    struct stat before, after;
    assert_int_equal(stat(bundle, &before), 0);
    trust_store_release();
    char msg[256];
    assert_int_equal(trust_store_prepare(&paths, msg, sizeof(msg)), 0);
    assert_int_equal(stat(bundle, &after), 0);
    assert_int_equal(before.st_ino, after.st_ino);
    assert_slot(SYSTEM_CAS "\n", NULL);
}

static void test_ca_replaces_the_last_sessions(void **state)
{
    (void)state;
    char msg[256];
    prepare_system();
    struct stat before, after;
    assert_int_equal(stat(bundle, &before), 0);
    assert_int_equal(trust_store_set_ca(&paths, PEM_A, msg, sizeof(msg)), 0);
    assert_slot(SYSTEM_CAS "\n", PEM_A);
    /* Another sandbox's CA (a fork): the old one is gone, the system's
     * stay, written in place. */
    assert_int_equal(trust_store_set_ca(&paths, PEM_B, msg, sizeof(msg)), 0);
    assert_slot(SYSTEM_CAS "\n", PEM_B);
    assert_int_equal(stat(bundle, &after), 0);
    assert_int_equal(before.st_ino, after.st_ino);
}

static void test_malformed_certificate_changes_nothing(void **state)
{
    (void)state;
    char msg[256];
    prepare_system();
    assert_int_equal(trust_store_set_ca(&paths, PEM_A, msg, sizeof(msg)), 0);
    const char *bad[] = { "not a certificate", PEM_A "trailing",
                          "-----BEGIN CERTIFICATE-----\nQU\x01\n-----END CERTIFICATE-----\n" };
    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
        assert_int_equal(trust_store_set_ca(&paths, bad[i], msg, sizeof(msg)), EINVAL);
        assert_non_null(strstr(msg, "trust store"));
    }
    assert_slot(SYSTEM_CAS "\n", PEM_A);
}

/* No CA in a session: a slot holding one is emptied; an empty one and a
 * store never prepared are left alone. */
static void test_no_ca_empties_the_slot(void **state)
{
    (void)state;
    char msg[256];
    assert_int_equal(trust_store_set_ca(&paths, "", msg, sizeof(msg)), 0);
    assert_int_equal(access(bundle, F_OK), -1);
    assert_int_equal(access(copy, F_OK), -1);
    prepare_system();
    assert_int_equal(trust_store_set_ca(&paths, PEM_A, msg, sizeof(msg)), 0);
    assert_int_equal(trust_store_set_ca(&paths, "", msg, sizeof(msg)), 0);
    assert_slot(SYSTEM_CAS "\n", NULL);
    assert_int_equal(trust_store_set_ca(&paths, "", msg, sizeof(msg)), 0);
    assert_slot(SYSTEM_CAS "\n", NULL);
}

/* Without prepare (guestd not PID 1), without a bundle: both are made. */
static void test_missing_bundle_is_created(void **state)
{
    (void)state;
    char msg[256];
    assert_int_equal(trust_store_set_ca(&paths, PEM_A, msg, sizeof(msg)), 0);
    assert_slot("", PEM_A);
}

/* A bundle replaced by rename (the mapped inode has no links left) or cut
 * short: the next install finds the mapping stale and reserves anew. */
static void test_replaced_or_truncated_bundle(void **state)
{
    (void)state;
    char msg[256];
    prepare_system();
    assert_int_equal(trust_store_set_ca(&paths, PEM_A, msg, sizeof(msg)), 0);
    write_file(bundle, SYSTEM_CAS "\n" SYSTEM_CAS "\n");
    assert_int_equal(trust_store_set_ca(&paths, PEM_B, msg, sizeof(msg)), 0);
    assert_slot(SYSTEM_CAS "\n" SYSTEM_CAS "\n", PEM_B);
    assert_int_equal(truncate(bundle, 10), 0);
    assert_int_equal(trust_store_set_ca(&paths, PEM_A, msg, sizeof(msg)), 0);
    assert_slot("-----BEGIN\n", PEM_A);
}

/* update-ca-certificates writes a new bundle without the slot, then runs
 * the hook, which appends the copy: the CA stays trusted, and the next
 * session writes into the new bundle's slot. */
static void test_hook_keeps_the_ca_through_a_rebuild(void **state)
{
    (void)state;
    char msg[256], cmd[256];
    prepare_system();
    assert_int_equal(trust_store_set_ca(&paths, PEM_A, msg, sizeof(msg)), 0);
    write_file(bundle, SYSTEM_CAS "\n" SYSTEM_CAS "\n");
    snprintf(cmd, sizeof(cmd), "sh %s </dev/null", hook);
    assert_int_equal(system(cmd), 0);
    assert_slot(SYSTEM_CAS "\n" SYSTEM_CAS "\n", PEM_A);
    struct stat before, after;
    assert_int_equal(stat(bundle, &before), 0);
    assert_int_equal(trust_store_set_ca(&paths, PEM_B, msg, sizeof(msg)), 0);
    assert_slot(SYSTEM_CAS "\n" SYSTEM_CAS "\n", PEM_B);
    assert_int_equal(stat(bundle, &after), 0);
    assert_int_equal(before.st_ino, after.st_ino);
}

/* A bundle from before slots (the marker and one CA at its end, not
 * aligned) gets a slot without the old CA. */
static void test_bundle_before_slots_is_converted(void **state)
{
    (void)state;
    char msg[256];
    make_dir("%s/etc/ssl/certs");
    write_file(bundle, SYSTEM_CAS "\n" TRUST_STORE_MARKER PEM_A);
    assert_int_equal(trust_store_prepare(&paths, msg, sizeof(msg)), 0);
    assert_slot(SYSTEM_CAS "\n", NULL);
    /* No update.d directory: no update-ca-certificates, no hook. */
    assert_int_equal(access(hook, F_OK), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_prepare_reserves_the_slot, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ca_replaces_the_last_sessions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_malformed_certificate_changes_nothing, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_no_ca_empties_the_slot, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_bundle_is_created, setup, teardown),
        cmocka_unit_test_setup_teardown(test_replaced_or_truncated_bundle, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hook_keeps_the_ca_through_a_rebuild, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_bundle_before_slots_is_converted, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
