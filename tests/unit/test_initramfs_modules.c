/* Module load order from modules.dep, and the /init script built from it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "initramfs.h"
#include "initramfs_modules.h"

/* The real 6.1.0-57-cloud-amd64 lines, shuffled, plus unrelated ones. */
static const char sample_dep[] =
    "kernel/drivers/net/virtio_net.ko: kernel/drivers/virtio/virtio.ko "
    "kernel/drivers/virtio/virtio_ring.ko kernel/drivers/net/net_failover.ko "
    "kernel/net/core/failover.ko\n"
    "kernel/fs/fuse/virtiofs.ko: kernel/fs/fuse/fuse.ko kernel/drivers/virtio/virtio.ko "
    "kernel/drivers/virtio/virtio_ring.ko\n"
    "kernel/drivers/char/virtio_console.ko: kernel/drivers/virtio/virtio.ko "
    "kernel/drivers/virtio/virtio_ring.ko\n"
    "kernel/drivers/net/net_failover.ko: kernel/net/core/failover.ko\n"
    "kernel/drivers/block/virtio_blk.ko: kernel/drivers/virtio/virtio.ko "
    "kernel/drivers/virtio/virtio_ring.ko\n"
    "kernel/drivers/virtio/virtio.ko: kernel/drivers/virtio/virtio_ring.ko\n"
    "kernel/net/core/failover.ko:\n"
    "kernel/drivers/virtio/virtio_mmio.ko: kernel/drivers/virtio/virtio.ko "
    "kernel/drivers/virtio/virtio_ring.ko\n"
    "kernel/fs/fuse/fuse.ko:\n"
    "kernel/drivers/virtio/virtio_ring.ko:\n";

static size_t index_of(const struct module_list *l, const char *name)
{
    char have[128];
    for (size_t i = 0; i < l->count; i++) {
        module_name_of(l->paths[i], have, sizeof(have));
        if (strcmp(have, name) == 0)
            return i;
    }
    fail_msg("module %s not in the list", name);
    return 0;
}

static void test_dependencies_come_first(void **state)
{
    (void)state;
    struct module_list l;
    char err[256];
    assert_int_equal(modules_resolve(sample_dep, initramfs_module_names, initramfs_module_count,
                                     &l, err, sizeof(err)),
                     0);
    assert_int_equal(l.count, 8); /* no fuse/virtiofs, nothing twice */
    assert_true(index_of(&l, "virtio_ring") < index_of(&l, "virtio"));
    assert_true(index_of(&l, "virtio") < index_of(&l, "virtio_mmio"));
    assert_true(index_of(&l, "virtio") < index_of(&l, "virtio_blk"));
    assert_true(index_of(&l, "failover") < index_of(&l, "net_failover"));
    assert_true(index_of(&l, "net_failover") < index_of(&l, "virtio_net"));
    assert_true(index_of(&l, "virtio") < index_of(&l, "virtio_console"));
    assert_string_equal(l.paths[0], "kernel/drivers/virtio/virtio_ring.ko");

    struct strbuf script = { 0 };
    initramfs_init_script(&l, &script);
    const char *s = strbuf_str(&script);
    assert_true(strncmp(s, "#!/bin/sh\n", 10) == 0);
    assert_true(strstr(s, "insmod /lib/modules/virtio_ring.ko") <
                strstr(s, "insmod /lib/modules/virtio.ko"));
    assert_non_null(strstr(s, "airlock.probe=1"));
    assert_non_null(strstr(s, INITRAMFS_PROBE_MARKER));
    /* The probe answers before waiting for a disk. */
    assert_true(strstr(s, INITRAMFS_PROBE_MARKER) < strstr(s, "/dev/vda"));
    assert_non_null(strstr(s, "exec switch_root /newroot /usr/sbin/airlock-guestd"));
    strbuf_free(&script);
    module_list_free(&l);
}

static void test_dash_and_underscore_match(void **state)
{
    (void)state;
    const char dep[] = "kernel/drivers/char/hw_random/virtio-rng.ko: a/virtio.ko\na/virtio.ko:\n";
    const char *names[] = { "virtio_rng" };
    struct module_list l;
    char err[256];
    assert_int_equal(modules_resolve(dep, names, 1, &l, err, sizeof(err)), 0);
    assert_int_equal(l.count, 2);
    assert_string_equal(l.paths[1], "kernel/drivers/char/hw_random/virtio-rng.ko");
    module_list_free(&l);
}

static void test_clear_failures(void **state)
{
    (void)state;
    struct module_list l;
    char err[256];
    const char *blk[] = { "virtio_blk" };

    assert_int_equal(modules_resolve("a/other.ko:\n", blk, 1, &l, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "virtio_blk is not in modules.dep"));
    assert_null(l.paths);

    const char compressed[] = "d/virtio_blk.ko.xz: d/virtio.ko.xz\nd/virtio.ko.xz:\n";
    assert_int_equal(modules_resolve(compressed, blk, 1, &l, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "compressed"));

    const char cycle[] = "d/virtio_blk.ko: d/a.ko\nd/a.ko: d/virtio_blk.ko\n";
    assert_int_equal(modules_resolve(cycle, blk, 1, &l, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "cycle"));

    const char dangling[] = "d/virtio_blk.ko: d/gone.ko\n";
    assert_int_equal(modules_resolve(dangling, blk, 1, &l, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "d/gone.ko"));

    assert_int_equal(modules_resolve("garbage without colons\n\n::\n", blk, 1, &l, err,
                                     sizeof(err)),
                     -1);
    assert_int_equal(modules_resolve("", blk, 1, &l, err, sizeof(err)), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dependencies_come_first),
        cmocka_unit_test(test_dash_and_underscore_match),
        cmocka_unit_test(test_clear_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
