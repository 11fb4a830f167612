/* vmhost/vm_socket: vmhost connects to QEMU's sockets in the jail's
 * directory only when the name there is a socket itself, never through a
 * link a taken-over QEMU could leave naming another sandbox's socket. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "fsutil.h"
#include "vm_socket.h"

static char dir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/test_vm_socket.XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    return fs_remove_tree(dir, NULL, 0);
}

/* A listener at dir/name, as QEMU's chardev server is. */
static int listen_at(const char *name)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%s", dir, name);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(listen(fd, 4), 0);
    return fd;
}

static void test_connects_to_a_socket(void **state)
{
    (void)state;
    int l = listen_at("qmp.sock");
    char path[128], err[512] = "";
    snprintf(path, sizeof(path), "%s/qmp.sock", dir);
    int fd = vm_socket_connect(path, err, sizeof(err));
    assert_true(fd >= 0);
    int c = accept(l, NULL, NULL);
    assert_true(c >= 0);
    close(c);
    close(fd);
    close(l);
}

static void test_refuses_a_link_to_another_sandboxs_socket(void **state)
{
    (void)state;
    int other = listen_at("other-sandbox.sock");
    char path[128], target[128], err[512] = "";
    snprintf(target, sizeof(target), "%s/other-sandbox.sock", dir);
    snprintf(path, sizeof(path), "%s/agent.sock", dir);
    assert_int_equal(symlink(target, path), 0);
    assert_int_equal(vm_socket_connect(path, err, sizeof(err)), -1);
    assert_int_equal(errno, ELOOP);
    assert_non_null(strstr(err, "symbolic link"));
    assert_int_equal(accept(other, NULL, NULL), -1); /* nothing reached it */
    assert_int_equal(errno, EAGAIN);
    close(other);
}

static void test_refuses_other_files_and_reports_missing(void **state)
{
    (void)state;
    char path[128], err[512] = "";
    snprintf(path, sizeof(path), "%s/console.sock", dir);
    assert_int_equal(fs_write_file_atomic(path, "x", 1, 0600, err, sizeof(err)), 0);
    assert_int_equal(vm_socket_connect(path, err, sizeof(err)), -1);
    assert_int_equal(errno, ENOTSOCK);
    snprintf(path, sizeof(path), "%s/none.sock", dir);
    assert_int_equal(vm_socket_connect(path, err, sizeof(err)), -1);
    assert_int_equal(errno, ENOENT); /* QEMU not there yet: callers wait */
    assert_non_null(strstr(err, path));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_connects_to_a_socket, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refuses_a_link_to_another_sandboxs_socket, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_refuses_other_files_and_reports_missing, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
