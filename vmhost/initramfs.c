#include "initramfs.h"

#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cpio.h"

const char *const initramfs_module_names[] = { "virtio_mmio", "virtio_blk", "virtio_net",
                                               "virtio_console" };
const size_t initramfs_module_count =
    sizeof(initramfs_module_names) / sizeof(initramfs_module_names[0]);

/* The busybox applets /init uses, as /bin symlinks. */
static const char *const applets[] = { "sh",     "mount", "insmod", "usleep",     "cat",
                                       "mkdir",  "poweroff", "switch_root", "sleep" };

/* Modules sit flat in /lib/modules of the initramfs under their file name. */
static const char *module_file(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

void initramfs_init_script(const struct module_list *modules, struct strbuf *out)
{
    strbuf_append(out,
                  "#!/bin/sh\n"
                  "# airlock initramfs: load the virtio drivers, mount the root disk and\n"
                  "# hand over to the guest daemon.\n"
                  "export PATH=/bin\n"
                  "fail() { echo \"airlock-init: $*\"; sleep 1; poweroff -f; }\n"
                  "mount -t devtmpfs devtmpfs /dev || fail 'cannot mount devtmpfs'\n"
                  "mount -t proc proc /proc || fail 'cannot mount /proc'\n"
                  "mount -t sysfs sysfs /sys || fail 'cannot mount /sys'\n");
    for (size_t i = 0; i < modules->count; i++) {
        const char *f = module_file(modules->paths[i]);
        strbuf_appendf(out, "insmod /lib/modules/%s || fail 'insmod %s failed'\n", f, f);
    }
    strbuf_append(out,
                  "case \" $(cat /proc/cmdline) \" in\n"
                  "*\" airlock.probe=1 \"*)\n"
                  "    echo " INITRAMFS_PROBE_MARKER "\n"
                  "    poweroff -f ;;\n"
                  "esac\n"
                  "i=0\n"
                  "while [ ! -b /dev/vda ]; do\n"
                  "    [ $i -ge 50 ] && fail 'no root disk /dev/vda after 5 s (virtio-blk "
                  "device missing?)'\n"
                  "    usleep 100000\n"
                  "    i=$((i + 1))\n"
                  "done\n"
                  /* Without ext4's lazy-init thread (zeroing inode tables,
                   * prefetching bitmaps) that runs for seconds after boot
                   * and so again in every restored sandbox. The image is
                   * made from scratch on a sparse file: its tables are
                   * zero. */
                  "mount -t ext4 -o rw,noinit_itable,no_prefetch_block_bitmaps /dev/vda /newroot ||\n"
                  "    fail 'cannot mount /dev/vda as ext4'\n"
                  "[ -x /newroot" INITRAMFS_GUESTD_PATH " ] || fail '" INITRAMFS_GUESTD_PATH
                  " is missing from the root disk'\n"
                  "mount --move /dev /newroot/dev && mount --move /proc /newroot/proc &&\n"
                  "    mount --move /sys /newroot/sys || fail 'cannot move mounts to /newroot'\n"
                  "echo '" INITRAMFS_HANDOVER_MARKER "'\n"
                  "exec switch_root /newroot " INITRAMFS_GUESTD_PATH "\n");
}

/* A dynamically linked busybox would find no libc in the initramfs. */
static int check_static_elf(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rbe");
    Elf64_Ehdr eh;
    bool has_interp = false;
    if (!f || fread(&eh, sizeof(eh), 1, f) != 1 || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
        eh.e_ident[EI_CLASS] != ELFCLASS64) {
        snprintf(err, errlen, "%s: %s", path, f ? "not a 64-bit ELF executable" : strerror(errno));
        goto fail;
    }
    for (unsigned i = 0; i < eh.e_phnum; i++) {
        Elf64_Phdr ph;
        if (fseek(f, (long)(eh.e_phoff + (Elf64_Off)i * eh.e_phentsize), SEEK_SET) != 0 ||
            fread(&ph, sizeof(ph), 1, f) != 1) {
            snprintf(err, errlen, "%s: truncated ELF program headers", path);
            goto fail;
        }
        has_interp |= ph.p_type == PT_INTERP;
    }
    fclose(f);
    if (has_interp) {
        snprintf(err, errlen,
                 "%s is dynamically linked; the initramfs needs a static busybox "
                 "(apt-get install busybox-static)",
                 path);
        return -1;
    }
    return 0;
fail:
    if (f)
        fclose(f);
    return -1;
}

int initramfs_write(const char *path, const char *busybox, const char *modules_dir,
                    const struct module_list *modules, const char *init_script, char *err,
                    size_t errlen)
{
    struct cpio_writer w;
    if (check_static_elf(busybox, err, errlen) < 0)
        return -1;
    if (cpio_writer_open(&w, path, err, errlen) < 0)
        return -1;
    static const char *const dirs[] = { "bin", "dev", "proc", "sys", "newroot", "lib",
                                        "lib/modules" };
    for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
        cpio_add_dir(&w, dirs[i], 0755);
    /* The kernel opens /dev/console for init before devtmpfs is mounted. */
    cpio_add_chardev(&w, "dev/console", 0600, 5, 1);
    cpio_add_chardev(&w, "dev/null", 0666, 1, 3);
    cpio_add_file_from(&w, "bin/busybox", 0755, busybox);
    for (size_t i = 0; i < sizeof(applets) / sizeof(applets[0]); i++) {
        char name[64];
        snprintf(name, sizeof(name), "bin/%s", applets[i]);
        cpio_add_symlink(&w, name, "busybox");
    }
    for (size_t i = 0; i < modules->count; i++) {
        char src[4096], name[256];
        snprintf(src, sizeof(src), "%s/%s", modules_dir, modules->paths[i]);
        snprintf(name, sizeof(name), "lib/modules/%s", module_file(modules->paths[i]));
        cpio_add_file_from(&w, name, 0644, src);
    }
    cpio_add_file(&w, "init", 0755, init_script, strlen(init_script));
    return cpio_writer_close(&w, err, errlen);
}
