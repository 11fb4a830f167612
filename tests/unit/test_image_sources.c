/* Which host apt entries the image builder hands to mmdebstrap, and how it
 * reads apt-cache policy. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "image_apt.h"
#include "image_sources.h"

/* parse of text for suite bookworm must give exactly want. */
static void expect_parsed(void (*parse)(const char *, const char *, struct strbuf *),
                          const char *text, const char *want)
{
    struct strbuf out = { 0 };
    parse(text, "bookworm", &out);
    assert_string_equal(strbuf_str(&out), want);
    strbuf_free(&out);
}

static void test_one_line_list(void **state)
{
    (void)state;
    const char *text =
        "# a comment\n"
        "deb http://deb.debian.org/debian bookworm main contrib\n"
        "deb-src http://deb.debian.org/debian bookworm main\n"
        "deb [arch=amd64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] "
        "http://security.debian.org/debian-security bookworm-security main # trailing\n"
        "deb http://deb.debian.org/debian bookworm-updates main non-free-firmware\n"
        "deb http://deb.debian.org/debian bookworm-backports main\n"
        "deb http://deb.debian.org/debian trixie main\n"
        "deb https://packages.cloud.google.com/apt cloud-sdk-bookworm main\n"
        "deb [signed-by=/usr/share/keyrings/docker.gpg] https://download.docker.com/linux/debian "
        "bookworm stable\n"
        "deb https://download.docker.com/linux/debian bookworm stable\n"
        "deb http://apt.postgresql.org/pub/repos/apt bookworm-pgdg main\n"
        "deb cdrom:[Debian]/ bookworm main\n"
        "   \n"
        "deb http://broken\n";
    expect_parsed(apt_sources_parse_list, text,
                  "deb http://deb.debian.org/debian bookworm main contrib\n"
                  "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] "
                  "http://security.debian.org/debian-security bookworm-security main\n"
                  "deb http://deb.debian.org/debian bookworm-updates main non-free-firmware\n"
                  "deb http://deb.debian.org/debian bookworm-backports main\n");
}

static void test_deb822_sources(void **state)
{
    (void)state;
    /* The host's own file, plus foreign and disabled entries. */
    const char *text =
        "Types: deb\n"
        "# http://snapshot.debian.org/archive/debian/20250520T000000Z\n"
        "URIs: http://deb.debian.org/debian\n"
        "Suites: bookworm bookworm-updates\n"
        "Components: main\n"
        "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n"
        "\n"
        "Types: deb\n"
        "URIs: http://deb.debian.org/debian-security\n"
        "Suites: bookworm-security\n"
        "Components: main\n"
        "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n"
        "\n"
        "Types: deb-src\n"
        "URIs: http://deb.debian.org/debian\n"
        "Suites: bookworm\n"
        "Components: main\n"
        "\n"
        "Types: deb\n"
        "URIs: https://deb.nodesource.com/node_20.x\n"
        "Suites: nodistro\n"
        "Components: main\n"
        "Signed-By: /usr/share/keyrings/nodesource.gpg\n"
        "\n"
        "Types: deb\n"
        "URIs: https://example.org/debian\n"
        "Suites: bookworm\n"
        "Components: main\n"
        "Signed-By:\n"
        " -----BEGIN PGP PUBLIC KEY BLOCK-----\n"
        " .\n"
        " xyz\n"
        "\n"
        "Types: deb deb-src\n"
        "URIs: http://ftp.de.debian.org/debian\n"
        "Suites: bookworm\n"
        "Components: main\n"
        "Enabled: no\n"
        "\n"
        "types: deb deb-src\n"
        "uris: http://mirror.example.net/debian\n"
        "suites: bookworm-backports\n"
        "components: main contrib extras\n";
    expect_parsed(apt_sources_parse_deb822, text,
                  "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] "
                  "http://deb.debian.org/debian bookworm main\n"
                  "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] "
                  "http://deb.debian.org/debian bookworm-updates main\n"
                  "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] "
                  "http://deb.debian.org/debian-security bookworm-security main\n"
                  "deb http://mirror.example.net/debian bookworm-backports main contrib\n");
}

static void test_directory_scan(void **state)
{
    (void)state;
    char dir[] = "/tmp/test_sources.XXXXXX", path[128], err[512];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/sources.list.d", dir);
    assert_int_equal(fs_mkdir_p(path, 0755, err, sizeof(err)), 0);

    /* Nothing usable yet: a clear error. */
    struct strbuf out = { 0 };
    assert_int_equal(apt_sources_for_suite(dir, "bookworm", &out, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "no Debian mirror for suite 'bookworm'"));

    snprintf(path, sizeof(path), "%s/sources.list.d/debian.sources", dir);
    const char *deb822 = "Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm\n"
                         "Components: main\n";
    assert_int_equal(fs_write_file_atomic(path, deb822, strlen(deb822), 0644, err, sizeof(err)),
                     0);
    snprintf(path, sizeof(path), "%s/sources.list.d/google.list.disabled", dir);
    const char *disabled = "deb http://deb.debian.org/debian bookworm contrib\n";
    assert_int_equal(
        fs_write_file_atomic(path, disabled, strlen(disabled), 0644, err, sizeof(err)), 0);
    snprintf(path, sizeof(path), "%s/sources.list", dir);
    const char *list = "deb http://security.debian.org/debian-security bookworm-security main\n";
    assert_int_equal(fs_write_file_atomic(path, list, strlen(list), 0644, err, sizeof(err)), 0);

    assert_int_equal(apt_sources_for_suite(dir, "bookworm", &out, err, sizeof(err)), 0);
    assert_string_equal(strbuf_str(&out),
                        "deb http://security.debian.org/debian-security bookworm-security main\n"
                        "deb http://deb.debian.org/debian bookworm main\n");
    strbuf_free(&out);
    fs_remove_tree(dir, NULL, 0);
}

static void test_apt_policy_parse(void **state)
{
    (void)state;
    const char *out = "linux-image-cloud-amd64:\n"
                      "  Installed: (none)\n"
                      "  Candidate: 6.1.192-3\n"
                      "  Version table:\n"
                      "     6.1.192-3 500\n"
                      "python3:\n"
                      "  Installed: 3.11.2-1+b1\n"
                      "  Candidate: 3.11.2-1+b1\n"
                      "python3-foo:\n"
                      "  Installed: (none)\n"
                      "  Candidate: (none)\n";
    char v[APT_VERSION_MAX];
    assert_int_equal(apt_parse_policy(out, "linux-image-cloud-amd64", v, sizeof(v)), 0);
    assert_string_equal(v, "6.1.192-3");
    assert_int_equal(apt_parse_policy(out, "python3", v, sizeof(v)), 0);
    assert_string_equal(v, "3.11.2-1+b1");
    assert_int_equal(apt_parse_policy(out, "python3-foo", v, sizeof(v)), -1);
    assert_int_equal(apt_parse_policy(out, "python", v, sizeof(v)), -1);
    assert_int_equal(apt_parse_policy(out, "git", v, sizeof(v)), -1);
    assert_int_equal(apt_parse_policy("", "git", v, sizeof(v)), -1);
    char tiny[4];
    assert_int_equal(apt_parse_policy(out, "python3", tiny, sizeof(tiny)), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_line_list),
        cmocka_unit_test(test_deb822_sources),
        cmocka_unit_test(test_directory_scan),
        cmocka_unit_test(test_apt_policy_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
