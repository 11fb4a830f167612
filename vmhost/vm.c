#include "vm.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "fsutil.h"
#include "qemu_child.h"
#include "qmp.h"
#include "sandbox_netdefs.h"
#include "strbuf.h"
#include "vm_internal.h"
#include "vm_tsc.h"

#define VM_DEFAULT_QEMU "qemu-system-x86_64"
/* QEMU starts in 20-60 ms; a loaded node with a jail to build (a cgroup
 * join is an RCU grace period per v1 hierarchy) has been seen slower. */
#define VM_QMP_START_TIMEOUT_MS 20000
#define VM_QMP_COMMAND_TIMEOUT_MS 10000
#define VM_QUIT_TIMEOUT_MS 2000
#define VM_CONSOLE_TAIL_BYTES 2048
#define VM_QEMU_LOG_TAIL_BYTES 1024
#define VM_CONSOLE_DRAIN_MS 500
/* MiB; within the jail's memory overhead (vmhost/main.c) with QEMU's heap
 * and libraries (docs/jail.md). */
#define VM_TCG_TB_MIB "128"
#define VM_MAX_ARGS 96
/* The number the TAP fd gets in QEMU (the first after stdio). */
#define VM_CHILD_TAP_FD 3
/* A migration's state beyond guest RAM (devices, the stream's framing). */
#define VM_JAIL_FILE_SLACK_BYTES (256ull << 20)
/* How much an attached volume may grow without a restart of its QEMU:
 * RLIMIT_FSIZE stays what the start set. */
#define VM_JAIL_VOLUME_GROWTH 16ull

/* Fast, quiet boot on microvm (see docs/vm-driver.md for each option). */
#define VM_BASE_CMDLINE                                                                  \
    "console=ttyS0 quiet panic=-1 reboot=t tsc=reliable no_timer_check mitigations=off " \
    "cryptomgr.notests audit=0 8250.nr_uarts=1 i8042.noaux i8042.nomux i8042.nopnp "   \
    "nowatchdog psi=0"

int vm_set_paths(struct vm *vm, const char *run_dir, char *err, size_t errlen)
{
    if (fs_path(vm->run_dir, sizeof(vm->run_dir), "%s", run_dir) ||
        fs_path(vm->vm_dir, sizeof(vm->vm_dir), "%s/vm", run_dir) ||
        fs_path(vm->qmp_path, sizeof(vm->qmp_path), "%s/vm/qmp.sock", run_dir) ||
        fs_path(vm->agent_path, sizeof(vm->agent_path), "%s/vm/agent.sock", run_dir) ||
        fs_path(vm->console_sock, sizeof(vm->console_sock), "%s/vm/console.sock", run_dir) ||
        fs_path(vm->console_path, sizeof(vm->console_path), "%s/console.log", run_dir) ||
        fs_path(vm->qemu_log_path, sizeof(vm->qemu_log_path), "%s/qemu.log", run_dir) ||
        fs_path(vm->pid_path, sizeof(vm->pid_path), "%s/qemu.pid", run_dir)) {
        snprintf(err, errlen,
                 "run_dir %s is too long: unix socket paths in it must stay below %zu bytes",
                 run_dir, sizeof(vm->qmp_path));
        return -1;
    }
    return 0;
}

int vm_move_run_dir(struct vm *vm, const char *run_dir, char *err, size_t errlen)
{
    struct vm moved;
    if (vm_set_paths(&moved, run_dir, err, errlen) < 0)
        return -1;
    pthread_mutex_lock(&vm->lock);
    memcpy(vm->run_dir, moved.run_dir, sizeof(vm->run_dir));
    memcpy(vm->vm_dir, moved.vm_dir, sizeof(vm->vm_dir));
    memcpy(vm->qmp_path, moved.qmp_path, sizeof(vm->qmp_path));
    memcpy(vm->agent_path, moved.agent_path, sizeof(vm->agent_path));
    memcpy(vm->console_sock, moved.console_sock, sizeof(vm->console_sock));
    memcpy(vm->console_path, moved.console_path, sizeof(vm->console_path));
    memcpy(vm->qemu_log_path, moved.qemu_log_path, sizeof(vm->qemu_log_path));
    memcpy(vm->pid_path, moved.pid_path, sizeof(vm->pid_path));
    pthread_mutex_unlock(&vm->lock);
    return vm->console ? console_log_move(vm->console, moved.console_path, err, errlen) : 0;
}

/* Not fsynced: it only has to outlive vmhost, not the machine (after a
 * power cut there is no QEMU to find), and a create should not wait for
 * the disk. */
static int write_pid_file(const struct vm *vm, char *err, size_t errlen)
{
    char text[32];
    int n = snprintf(text, sizeof(text), "%d\n", (int)vm->pid);
    int fd = open(vm->pid_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || fs_write_all(fd, text, (size_t)n) < 0) {
        snprintf(err, errlen, "write %s: %s", vm->pid_path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    close(fd);
    return 0;
}

static void remove_runtime_files(const struct vm *vm)
{
    unlink(vm->qmp_path);
    unlink(vm->agent_path);
    unlink(vm->console_sock);
    unlink(vm->pid_path);
}

void vm_console_tail(const char *console_log, char *buf, size_t max_bytes)
{
    if (max_bytes == 0)
        return;
    buf[0] = '\0';
    char *tail;
    size_t n;
    bool truncated;
    if (fs_read_tail(console_log, max_bytes - 1, &tail, &n, &truncated) < 0)
        return;
    /* A NUL from the guest would cut the text short for the reader. */
    for (size_t i = 0; i < n; i++)
        buf[i] = tail[i] ? tail[i] : '?';
    buf[n] = '\0';
    free(tail);
}

/* "QEMU exited with status 1" + console and QEMU log tails. */
static void describe_exit(const struct vm *vm, int status, struct strbuf *out)
{
    if (vm->adopted)
        strbuf_appendf(out, "QEMU (pid %d, adopted after a vmhost restart, so its exit status "
                            "is unknown) exited", vm->pid);
    else if (WIFEXITED(status))
        strbuf_appendf(out, "QEMU (pid %d) exited with status %d", vm->pid,
                       WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        strbuf_appendf(out, "QEMU (pid %d) was killed by signal %d (SIG%s)", vm->pid,
                       WTERMSIG(status),
                       sigabbrev_np(WTERMSIG(status)) ? sigabbrev_np(WTERMSIG(status)) : "?");
    else
        strbuf_appendf(out, "QEMU (pid %d) ended with wait status %#x", vm->pid, status);
    char limit[128] = "";
    if (vm->jail)
        jail_limit_reason(vm->jail, limit, sizeof(limit));
    if (limit[0])
        strbuf_appendf(out, ": %s", limit);
    char tail[VM_CONSOLE_TAIL_BYTES + 1];
    vm_console_tail(vm->console_path, tail, sizeof(tail));
    strbuf_appendf(out, "; console tail:\n%s", tail[0] ? tail : "(empty)\n");
    vm_console_tail(vm->qemu_log_path, tail, VM_QEMU_LOG_TAIL_BYTES);
    if (tail[0])
        strbuf_appendf(out, "\nqemu.log tail:\n%s", tail);
}

struct vm *vm_alloc(vm_exit_fn on_exit, void *exit_arg)
{
    struct vm *vm = calloc(1, sizeof(*vm));
    if (!vm)
        return NULL;
    vm->on_exit = on_exit;
    vm->exit_arg = exit_arg;
    vm->qmp.fd = -1;
    vm->pidfd = -1;
    pthread_mutex_init(&vm->lock, NULL);
    pthread_mutex_init(&vm->qmp_lock, NULL);
    pthread_condattr_t cattr;
    pthread_condattr_init(&cattr);
    pthread_condattr_setclock(&cattr, CLOCK_MONOTONIC); /* wait_exited_locked's deadlines */
    pthread_cond_init(&vm->exited_cond, &cattr);
    pthread_condattr_destroy(&cattr);
    return vm;
}

void vm_dealloc(struct vm *vm)
{
    console_log_detach(vm->console);
    jail_close(vm->jail);
    if (vm->pidfd >= 0)
        close(vm->pidfd);
    pthread_cond_destroy(&vm->exited_cond);
    pthread_mutex_destroy(&vm->qmp_lock);
    pthread_mutex_destroy(&vm->lock);
    free(vm);
}

static void *monitor_main(void *arg)
{
    struct vm *vm = arg;
    /* Wait without reaping first: until the pid is reaped below (under the
     * lock), vm_stop() can SIGKILL it without hitting a recycled pid. */
    siginfo_t si;
    while (waitid(P_PID, (id_t)vm->pid, &si, WEXITED | WNOWAIT) < 0 && errno == EINTR)
        ;
    pthread_mutex_lock(&vm->lock);
    int status = 0;
    while (waitpid(vm->pid, &status, 0) < 0) {
        if (errno != EINTR) { /* ECHILD: someone else reaped it (SIGCHLD ignored?) */
            status = 0xff00; /* reads as "exited with status 255" */
            break;
        }
    }
    vm_exit_seen(vm, status);
    return NULL;
}

void vm_exit_seen(struct vm *vm, int status)
{
    vm->exited = true;
    vm->wait_status = status;
    bool expected = vm->stopping;
    pthread_cond_broadcast(&vm->exited_cond);
    pthread_mutex_unlock(&vm->lock);

    if (!expected && vm->on_exit) {
        if (vm->console) /* the console's last lines belong in the reason */
            console_log_drain(vm->console, VM_CONSOLE_DRAIN_MS);
        struct strbuf reason = { 0 };
        describe_exit(vm, status, &reason);
        vm->on_exit(vm->exit_arg, status,
                    strbuf_failed(&reason) ? "QEMU exited" : strbuf_str(&reason));
        strbuf_free(&reason);
    }
}

struct argv_list {
    char *v[VM_MAX_ARGS + 1];
    size_t n;
    bool failed;
};

static void arg_add(struct argv_list *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void arg_add(struct argv_list *a, const char *fmt, ...)
{
    if (a->n == VM_MAX_ARGS) {
        a->failed = true;
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&a->v[a->n], fmt, ap) < 0) {
        a->v[a->n] = NULL;
        a->failed = true;
    } else {
        a->n++;
    }
    va_end(ap);
}

static void argv_free(struct argv_list *a)
{
    for (size_t i = 0; i < a->n; i++)
        free(a->v[i]);
    a->n = 0;
}

static void kernel_cmdline(const struct vm_config *cfg, struct strbuf *out)
{
    strbuf_append(out, VM_BASE_CMDLINE);
    long khz = vm_host_tsc_khz();
    if (khz > 0)
        strbuf_appendf(out, " tsc_early_khz=%ld", khz);
    if (cfg->extra_cmdline && *cfg->extra_cmdline)
        strbuf_appendf(out, " %s", cfg->extra_cmdline);
}

/* The paths on QEMU's command line, as QEMU sees them: inside a jail its
 * fixed names for them (jail_inside_path), else the host's. */
struct vm_seen {
    const char *qemu, *mem, *kernel, *initrd, *console_sock, *disk, *qmp, *agent;
    char disk_relative[PATH_MAX];
    char volumes[VM_VOLUME_SLOTS][PATH_MAX];
};

/* An empty volume slot's file: the VM's own, in its vm directory, which a
 * jail binds at /vm and an unjailed QEMU has as its working directory (so
 * the name stays valid when a pooled VM's directory is renamed). */
#define VM_EMPTY_SLOT_NAME "slot%u.img"

/* What QEMU sees of volume slot i: a jail's /vol<i> for an image, else the
 * image's path; an empty slot's file in the vm directory. */
static int seen_volume(const struct vm_config *cfg, const struct vm *vm, unsigned i, char *out,
                       size_t len)
{
    if (!cfg->volumes[i])
        return fs_path(out, len, "%s" VM_EMPTY_SLOT_NAME, vm->jail ? "/vm/" : "", i);
    return fs_path(out, len, "%s", vm->jail ? jail_inside_path(vm->jail, cfg->volumes[i])
                                            : cfg->volumes[i]);
}

static void seen_paths(const struct vm_config *cfg, const struct vm *vm, const char *qemu,
                       struct vm_seen *out)
{
    if (vm->jail) {
        *out = (struct vm_seen){ .qemu = qemu,
                                 .mem = jail_inside_path(vm->jail, cfg->mem_path ? cfg->mem_path : ""),
                                 .kernel = "/kernel", .initrd = "/initrd",
                                 .console_sock = "/vm/console.sock", .disk = "/disk",
                                 .qmp = "/vm/qmp.sock", .agent = "/vm/agent.sock" };
        return;
    }
    /* Relative to QEMU's working directory (run_dir/vm) when the disk lies
     * in run_dir: a pooled VM's directory is renamed under the running
     * QEMU (vm_move_run_dir), and QEMU opens the image again by name when
     * it inactivates it at the end of a migration to a file (suspend, full
     * checkpoint, fork); an absolute path would name a directory that is
     * gone ("bdrv_inactivate_all() failed"). A jail's /disk never moves. */
    *out = (struct vm_seen){ .qemu = qemu, .mem = cfg->mem_path, .kernel = cfg->kernel,
                             .initrd = cfg->initrd, .console_sock = vm->console_sock,
                             .disk = cfg->disk, .qmp = vm->qmp_path, .agent = vm->agent_path };
    size_t dir_len = strlen(vm->run_dir);
    if (cfg->disk && strncmp(cfg->disk, vm->run_dir, dir_len) == 0 && cfg->disk[dir_len] == '/' &&
        fs_path(out->disk_relative, sizeof(out->disk_relative), "../%s",
                cfg->disk + dir_len + 1) == 0)
        out->disk = out->disk_relative;
}

static int build_argv(const struct vm_config *cfg, const struct vm *vm, const char *qemu,
                      struct argv_list *a, char *err, size_t errlen)
{
    struct strbuf cmdline = { 0 };
    kernel_cmdline(cfg, &cmdline);
    struct vm_seen seen;
    seen_paths(cfg, vm, qemu, &seen);
    for (unsigned i = 0; i < VM_VOLUME_SLOTS; i++)
        if (seen_volume(cfg, vm, i, seen.volumes[i], sizeof(seen.volumes[i])) < 0) {
            strbuf_free(&cmdline);
            snprintf(err, errlen, "volume slot %u: path too long", i);
            return -1;
        }

    arg_add(a, "%s", seen.qemu);
    /* ACPI stays on: without it microvm describes virtio-mmio devices on the
     * kernel command line, which Debian's kernel ignores. */
    arg_add(a, "-M");
    arg_add(a, "%s", cfg->mem_path ? "microvm,memory-backend=mem" : "microvm");
    if (cfg->mem_path) {
        arg_add(a, "-object");
        arg_add(a, "memory-backend-file,id=mem,size=%uM,mem-path=%s,share=%s", cfg->memory_mb,
                seen.mem, cfg->mem_shared ? "on" : "off");
    }
    /* TCG's translated-code buffer defaults to 1 GiB, filled before it is
     * flushed: a busy guest's QEMU would grow past the jail's memory limit
     * (guest RAM + its overhead) on translated code alone. */
    arg_add(a, "-accel");
    arg_add(a, "%s", cfg->accel == VM_ACCEL_KVM ? "kvm" : "tcg,tb-size=" VM_TCG_TB_MIB);
    arg_add(a, "-cpu");
    arg_add(a, "%s", cfg->accel == VM_ACCEL_KVM ? "host" : "max");
    arg_add(a, "-m");
    arg_add(a, "%u", cfg->memory_mb);
    arg_add(a, "-smp");
    arg_add(a, "%u", cfg->vcpus);
    arg_add(a, "-nodefaults");
    arg_add(a, "-no-user-config");
    arg_add(a, "-display");
    arg_add(a, "none");
    arg_add(a, "-no-reboot");
    /* A restored guest's kernel is already in its memory: QEMU need not
     * read kernel and initramfs (the firmware that would load them never
     * runs again). */
    if (!cfg->incoming) {
        arg_add(a, "-kernel");
        arg_add(a, "%s", seen.kernel);
        arg_add(a, "-initrd");
        arg_add(a, "%s", seen.initrd);
        arg_add(a, "-append");
        arg_add(a, "%s", strbuf_str(&cmdline));
    }
    arg_add(a, "-chardev");
    /* QEMU writes no file of its own for the console: vmhost reads the
     * socket into a bounded console.log (console_log.h). wait=on: QEMU
     * starts the guest only once vmhost listens, so no boot line is lost. */
    arg_add(a, "socket,id=con,path=%s,server=on,wait=on", seen.console_sock);
    arg_add(a, "-serial");
    arg_add(a, "chardev:con");
    if (cfg->disk) {
        arg_add(a, "-drive");
        arg_add(a, "id=root,file=%s,format=raw,if=none,cache=unsafe", seen.disk);
        arg_add(a, "-device");
        arg_add(a, "virtio-blk-device,drive=root");
    }
    /* After the root disk, so the guest's vda stays the root; writeback:
     * a guest's flush (fsync, the journal's commits) reaches the store, so
     * a volume is consistent whenever the guest says it is. */
    for (unsigned i = 0; i < VM_VOLUME_SLOTS; i++) {
        arg_add(a, "-drive");
        arg_add(a, "id=vol%u,file=%s,format=raw,if=none,cache=writeback", i, seen.volumes[i]);
        arg_add(a, "-device");
        arg_add(a, "virtio-blk-device,drive=vol%u,serial=" VM_VOLUME_SERIAL_PREFIX "%u", i, i);
    }
    arg_add(a, "-device");
    arg_add(a, "virtio-serial-device");
    arg_add(a, "-chardev");
    arg_add(a, "socket,id=agent,path=%s,server=on,wait=off", seen.agent);
    arg_add(a, "-device");
    arg_add(a, "virtserialport,chardev=agent,name=agent");
    /* The same MAC in every sandbox: a restored guest keeps its ARP cache
     * and its idea of its own address (docs/egress.md). No guest_announce:
     * nobody needs telling (every sandbox's TAP is new, the MAC the same
     * everywhere), and with it QEMU 7.2 frees the NIC's announce timer when
     * a restore has no announce round to run and then dies of SIGSEGV at
     * the guest's first NIC reset (reboot, power off, a driver unbind;
     * docs/security.md F1); one round instead delays a restored guest's
     * first answer by ~30-250 ms. */
    if (cfg->has_nic) {
        arg_add(a, "-netdev");
        arg_add(a, "tap,id=n0,fd=%d", VM_CHILD_TAP_FD);
        arg_add(a, "-device");
        arg_add(a, "virtio-net-device,netdev=n0,mac=%s,guest_announce=off",
                SANDBOX_NET_GUEST_MAC);
    }
    arg_add(a, "-qmp");
    arg_add(a, "unix:%s,server=on,wait=off", seen.qmp);
    /* After an incoming migration QEMU would announce the VM itself (five
     * RARP rounds over ~1 s) while it should be answering its first
     * request: not needed, as above. */
    arg_add(a, "-global");
    arg_add(a, "migration.announce-rounds=0");
    if (cfg->incoming) {
        arg_add(a, "-incoming");
        arg_add(a, "defer");
    }
    /* QEMU's own seccomp filter: no obsolete system calls, no setuid,
     * no fork or exec, no changing its own scheduling or limits. */
    if (vm->jail) {
        arg_add(a, "-sandbox");
        arg_add(a, "on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny");
    }

    bool failed = a->failed || strbuf_failed(&cmdline);
    strbuf_free(&cmdline);
    if (failed) {
        snprintf(err, errlen, "QEMU command line: out of memory or too many arguments");
        argv_free(a);
        return -1;
    }
    a->v[a->n] = NULL;
    return 0;
}

/* In the child between fork and exec: async-signal-safe calls only. QEMU
 * gets a session of its own (a Ctrl-C or a signal to vmhost's process group
 * must not reach it while vmhost suspends it), no PDEATHSIG, and no pipe to
 * vmhost, so it outlives a vmhost that is killed and the next one adopts it
 * (vm_adopt.c). Its working directory is run_dir/vm: that is how a later
 * vmhost recognizes it, even after the directory was renamed (a pooled VM
 * handed out under another id, vm_move_run_dir). Unjailed only: a jail's
 * child does the same and more (jail_child.c). */
static void exec_qemu(char *const argv[], int log_fd, int tap_fd, const char *vm_dir, int nice)
{
    if (qemu_child_begin(nice) < 0 || chdir(vm_dir) < 0 || qemu_child_stdio(log_fd) < 0)
        _exit(126);
    int first_closed = 3;
    if (tap_fd >= 0) {
        /* dup2 onto itself would keep O_CLOEXEC: clear it by hand then. */
        if (tap_fd == VM_CHILD_TAP_FD ? fcntl(tap_fd, F_SETFD, 0) < 0
                                      : dup2(tap_fd, VM_CHILD_TAP_FD) < 0)
            _exit(126);
        first_closed = VM_CHILD_TAP_FD + 1;
    }
    close_range((unsigned)first_closed, ~0u, 0);
    execvp(argv[0], argv);
    static const char msg[] = "vmhost: exec of the QEMU binary failed\n";
    ssize_t ignored = write(2, msg, sizeof(msg) - 1);
    (void)ignored;
    _exit(127);
}

/* Runs with qmp_lock held (events are read while waiting for answers). */
void vm_on_qmp_event(void *arg, const char *event, json_t *data)
{
    struct vm *vm = arg;
    if (strcmp(event, "MIGRATION") == 0) {
        const char *status = json_string_value(json_object_get(data, "status"));
        snprintf(vm->migration_status, sizeof(vm->migration_status), "%s", status ? status : "");
    }
}

/* What a process that should have been QEMU by now is doing: its name
 * says whether it got to exec (a jail's child is still vmhost's copy
 * before), its kernel wait channel where it is stuck. */
static void process_whereabouts(pid_t pid, char *out, size_t outlen)
{
    char path[64], *comm = NULL, *wchan = NULL;
    snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
    fs_read_file(path, 64, &comm, NULL, NULL, 0);
    snprintf(path, sizeof(path), "/proc/%d/wchan", (int)pid);
    fs_read_file(path, 128, &wchan, NULL, NULL, 0);
    if (comm)
        comm[strcspn(comm, "\n")] = '\0';
    snprintf(out, outlen, "pid %d is %s, waiting in %s", (int)pid, comm ? comm : "gone",
             wchan && wchan[0] && strcmp(wchan, "0") ? wchan : "nothing");
    free(comm);
    free(wchan);
}

/* Connects to the console and QMP as soon as QEMU has created their
 * sockets. */
static int wait_for_sockets(struct vm *vm, size_t console_max_bytes, char *err, size_t errlen)
{
    long long deadline = clock_monotonic_ms() + VM_QMP_START_TIMEOUT_MS;
    for (;;) {
        int status;
        pid_t r = waitpid(vm->pid, &status, WNOHANG);
        if (r == vm->pid) {
            if (vm->console)
                console_log_drain(vm->console, VM_CONSOLE_DRAIN_MS);
            struct strbuf why = { 0 };
            describe_exit(vm, status, &why);
            snprintf(err, errlen, "QEMU failed to start: %s", strbuf_str(&why));
            strbuf_free(&why);
            vm->pid = 0; /* reaped */
            return -1;
        }
        long long left = deadline - clock_monotonic_ms();
        /* The console first: QEMU waits for it (wait=on) before the rest. */
        if (!vm->console && access(vm->console_sock, F_OK) == 0)
            console_log_attach(vm->console_sock, vm->console_path, console_max_bytes,
                               &vm->console, err, errlen);
        if (vm->console && access(vm->qmp_path, F_OK) == 0 &&
            qmp_connect(&vm->qmp, vm->qmp_path, vm_on_qmp_event, vm,
                        left > 100 ? (int)left : 100, err, errlen) == 0)
            return 0;
        if (clock_monotonic_ms() >= deadline) {
            char tail[VM_QEMU_LOG_TAIL_BYTES], where[128];
            vm_console_tail(vm->qemu_log_path, tail, sizeof(tail));
            process_whereabouts(vm->pid, where, sizeof(where));
            size_t used = strnlen(err, errlen);
            if (access(vm->qmp_path, F_OK) < 0)
                used = (size_t)snprintf(err, errlen, "QEMU did not create %s", vm->qmp_path);
            if (used < errlen)
                snprintf(err + used, errlen - used, " within %d ms (%s); qemu.log tail:\n%s",
                         VM_QMP_START_TIMEOUT_MS, where, tail[0] ? tail : "(empty)");
            return -1;
        }
        usleep(1000); /* QEMU takes ~20-60 ms: poll finely */
    }
}

/* The empty slots' 0-byte files, QEMU's to open read-write (so a template
 * built with them has writable disks there, which restores then point at
 * volumes): owned by whoever owns the vm directory, the jail's uid when
 * jailed. Truncated: a guest cannot grow a disk, but a file is never
 * trusted to be what an earlier run left. */
static int make_empty_slots(const struct vm_config *cfg, const struct vm *vm, char *err,
                            size_t errlen)
{
    struct stat dir;
    if (stat(vm->vm_dir, &dir) < 0) {
        snprintf(err, errlen, "stat %s: %s", vm->vm_dir, strerror(errno));
        return -1;
    }
    for (unsigned i = 0; i < VM_VOLUME_SLOTS; i++) {
        if (cfg->volumes[i])
            continue;
        char path[PATH_MAX];
        if (fs_path(path, sizeof(path), "%s/" VM_EMPTY_SLOT_NAME, vm->vm_dir, i) < 0) {
            snprintf(err, errlen, "volume slot %u: path too long", i);
            return -1;
        }
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 || fchown(fd, dir.st_uid, dir.st_gid) < 0) {
            snprintf(err, errlen, "empty volume slot %s: %s", path, strerror(errno));
            if (fd >= 0)
                close(fd);
            return -1;
        }
        close(fd);
    }
    return 0;
}

static int check_config(const struct vm_config *cfg, char *err, size_t errlen)
{
    const char *missing = !cfg->incoming && !cfg->kernel   ? "kernel"
                        : !cfg->incoming && !cfg->initrd ? "initrd"
                        : !cfg->run_dir ? "run_dir" : NULL;
    if (missing) {
        snprintf(err, errlen, "vm_start: %s is required", missing);
        return -1;
    }
    if (cfg->accel != VM_ACCEL_KVM && cfg->accel != VM_ACCEL_TCG) {
        snprintf(err, errlen, "vm_start: accel must be kvm or tcg (resolve auto with "
                              "vm_accel_probe)");
        return -1;
    }
    if (cfg->has_nic && cfg->tap_fd <= 2) { /* the child's stdio would overwrite it */
        snprintf(err, errlen, "vm_start: has_nic needs an open tap_fd above 2");
        return -1;
    }
    if (cfg->vcpus == 0 || cfg->memory_mb == 0) {
        snprintf(err, errlen, "vm_start: vcpus and memory_mb must be positive");
        return -1;
    }
    return 0;
}

/* The QEMU binary as an absolute path: a jail has no PATH to search, and
 * only /usr to find it in. */
static int find_qemu(const struct vm_config *cfg, char *out, size_t outlen, char *err,
                     size_t errlen)
{
    const char *name = cfg->qemu_binary ? cfg->qemu_binary : VM_DEFAULT_QEMU;
    if (strchr(name, '/'))
        return realpath(name, out) ? 0 : (snprintf(err, errlen, "QEMU binary %s: %s", name,
                                                   strerror(errno)), -1);
    const char *path = getenv("PATH");
    char dirs[4096];
    snprintf(dirs, sizeof(dirs), "%s", path ? path : "/usr/bin:/bin");
    char *save, *dir = strtok_r(dirs, ":", &save);
    for (; dir; dir = strtok_r(NULL, ":", &save)) {
        char candidate[PATH_MAX];
        if (fs_path(candidate, sizeof(candidate), "%s/%s", dir, name) == 0 &&
            access(candidate, X_OK) == 0 && realpath(candidate, out) && strlen(out) < outlen)
            return 0;
    }
    snprintf(err, errlen, "QEMU binary %s is not in PATH", name);
    return -1;
}

/* What QEMU may write is its own: the vm directory, the console, the
 * disk, and the memory file of a template being built. Every file it
 * writes is bounded: the largest of them plus the state of a migration. */
static int open_jail(const struct vm_config *cfg, struct vm *vm, const char *qemu, char *err,
                     size_t errlen)
{
    unsigned long long largest = (unsigned long long)cfg->memory_mb << 20;
    struct stat st;
    if (cfg->disk && stat(cfg->disk, &st) == 0 && (unsigned long long)st.st_size > largest)
        largest = (unsigned long long)st.st_size;
    /* A volume grown later (GrowVolume) is bounded by its size now: a
     * grow of an attached volume restarts nothing, so the bound leaves
     * room for it (VM_JAIL_VOLUME_GROWTH). */
    for (unsigned i = 0; i < VM_VOLUME_SLOTS; i++)
        if (cfg->volumes[i] && stat(cfg->volumes[i], &st) == 0 &&
            (unsigned long long)st.st_size * VM_JAIL_VOLUME_GROWTH > largest)
            largest = (unsigned long long)st.st_size * VM_JAIL_VOLUME_GROWTH;
    struct jail_spec spec = {
        .qemu_binary = qemu,
        .dir = vm->vm_dir,
        .disk = cfg->disk,
        .mem = cfg->mem_path,
        .mem_writable = cfg->mem_path && cfg->mem_shared,
        .kernel = cfg->incoming ? NULL : cfg->kernel,
        .initrd = cfg->incoming ? NULL : cfg->initrd,
        .netns = cfg->netns,
        .kvm = cfg->accel == VM_ACCEL_KVM,
        .vcpus = cfg->vcpus,
        .memory_mb = cfg->memory_mb,
        .max_file_bytes = largest + VM_JAIL_FILE_SLACK_BYTES,
    };
    _Static_assert(VM_VOLUME_SLOTS == JAIL_VOLUMES, "a jail binds every volume slot");
    for (unsigned i = 0; i < VM_VOLUME_SLOTS; i++)
        spec.volumes[i] = cfg->volumes[i];
    return jail_open(cfg->jailer, &spec, &vm->jail, err, errlen);
}

int vm_start(const struct vm_config *cfg, vm_exit_fn on_exit, void *exit_arg, struct vm **out,
             char *err, size_t errlen)
{
    *out = NULL;
    if (check_config(cfg, err, errlen) < 0)
        return -1;
    struct vm *vm = vm_alloc(on_exit, exit_arg);
    if (!vm) {
        snprintf(err, errlen, "vm_start: out of memory");
        return -1;
    }
    struct argv_list argv = { 0 };
    int log_fd = -1;

    char qemu[PATH_MAX];
    if (vm_set_paths(vm, cfg->run_dir, err, errlen) < 0 ||
        fs_mkdir_p(vm->vm_dir, 0700, err, errlen) < 0 ||
        find_qemu(cfg, qemu, sizeof(qemu), err, errlen) < 0)
        goto fail;
    remove_runtime_files(vm); /* stale sockets from an earlier run make QEMU fail */
    if (cfg->jailer && open_jail(cfg, vm, qemu, err, errlen) < 0)
        goto fail;
    if (make_empty_slots(cfg, vm, err, errlen) < 0)
        goto fail;
    if (build_argv(cfg, vm, qemu, &argv, err, errlen) < 0)
        goto fail;
    log_fd = open(vm->qemu_log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (log_fd < 0) {
        snprintf(err, errlen, "create %s: %s", vm->qemu_log_path, strerror(errno));
        goto fail;
    }
    int tap_fd = cfg->has_nic ? cfg->tap_fd : -1;
    if (vm->jail) {
        vm->pid = jail_spawn(vm->jail, argv.v, log_fd, tap_fd, cfg->nice, err, errlen);
        if (vm->pid < 0) {
            vm->pid = 0;
            goto fail;
        }
    } else {
        vm->pid = fork();
        if (vm->pid < 0) {
            snprintf(err, errlen, "fork for QEMU: %s", strerror(errno));
            vm->pid = 0;
            goto fail;
        }
        if (vm->pid == 0)
            exec_qemu(argv.v, log_fd, tap_fd, vm->vm_dir, cfg->nice);
    }
    close(log_fd);
    log_fd = -1;
    argv_free(&argv);

    size_t console_max = cfg->console_max_bytes ? cfg->console_max_bytes
                                                : VM_CONSOLE_DEFAULT_MAX_BYTES;
    if (write_pid_file(vm, err, errlen) < 0 || wait_for_sockets(vm, console_max, err, errlen) < 0)
        goto fail;
    int rc = pthread_create(&vm->monitor, NULL, monitor_main, vm);
    if (rc != 0) {
        snprintf(err, errlen, "vm_start: cannot start the monitor thread: %s", strerror(rc));
        goto fail;
    }
    vm->monitor_started = true;
    *out = vm;
    return 0;

fail:
    if (log_fd >= 0)
        close(log_fd);
    argv_free(&argv);
    if (vm->pid > 0) {
        kill(vm->pid, SIGKILL);
        while (waitpid(vm->pid, NULL, 0) < 0 && errno == EINTR)
            ;
    }
    qmp_close(&vm->qmp);
    if (vm->run_dir[0])
        remove_runtime_files(vm);
    vm_dealloc(vm);
    return -1;
}

uint64_t vm_max_file_bytes(const struct vm *vm)
{
    /* From /proc: prlimit(2) on a jailed QEMU is EPERM (not dumpable). */
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/%d/limits", (int)vm->pid);
    FILE *f = vm->pid > 0 ? fopen(path, "re") : NULL;
    uint64_t bound = UINT64_MAX;
    unsigned long long soft;
    while (f && fgets(line, sizeof(line), f))
        if (strncmp(line, "Max file size", 13) == 0 && sscanf(line + 13, "%llu", &soft) == 1)
            bound = soft;
    if (f)
        fclose(f);
    return bound;
}

/* One pass over QEMU's threads (d: its /proc/PID/task). 0 or -1 with err. */
static int set_nice_pass(DIR *d, pid_t pid, int nice, char *err, size_t errlen)
{
    rewinddir(d);
    for (struct dirent *e; (e = readdir(d));) {
        char *end;
        long tid = strtol(e->d_name, &end, 10);
        if (e->d_name[0] == '.' || *end)
            continue;
        /* A thread that ended meanwhile is no failure. */
        if (setpriority(PRIO_PROCESS, (id_t)tid, nice) < 0 && errno != ESRCH) {
            snprintf(err, errlen, "QEMU %d thread %ld: niceness %d: %s", (int)pid, tid, nice,
                     strerror(errno));
            return -1;
        }
    }
    return 0;
}

int vm_set_nice(struct vm *vm, int nice, char *err, size_t errlen)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/task", (int)vm->pid);
    DIR *d = opendir(path);
    if (!d) {
        snprintf(err, errlen, "QEMU %d: %s: %s", (int)vm->pid, path, strerror(errno));
        return -1;
    }
    /* Twice: a thread started during the first pass by one not yet
     * changed has the old niceness. */
    int rc = set_nice_pass(d, vm->pid, nice, err, errlen);
    if (rc == 0)
        rc = set_nice_pass(d, vm->pid, nice, err, errlen);
    closedir(d);
    return rc;
}

pid_t vm_pid(const struct vm *vm)
{
    return vm->pid;
}

const char *vm_agent_socket(const struct vm *vm)
{
    return vm->agent_path;
}

const char *vm_console_log(const struct vm *vm)
{
    return vm->console_path;
}

int vm_qmp_command(struct vm *vm, const char *command, const char *arguments_json, char *err,
                   size_t errlen)
{
    json_t *args = NULL;
    if (arguments_json) {
        json_error_t jerr;
        args = json_loads(arguments_json, 0, &jerr);
        if (!json_is_object(args)) {
            snprintf(err, errlen, "QMP %s: arguments are not a JSON object: %s", command,
                     args ? "wrong type" : jerr.text);
            json_decref(args);
            return -1;
        }
    }
    pthread_mutex_lock(&vm->qmp_lock);
    int rc = qmp_execute(&vm->qmp, command, args, NULL, VM_QMP_COMMAND_TIMEOUT_MS, err, errlen);
    pthread_mutex_unlock(&vm->qmp_lock);
    json_decref(args);
    return rc;
}

/* Waits (lock held) until the monitor has reaped QEMU or the deadline passes. */
static bool wait_exited_locked(struct vm *vm, long long deadline_ms)
{
    while (!vm->exited) {
        long long left = deadline_ms - clock_monotonic_ms();
        if (left <= 0)
            return false;
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_sec += left / 1000;
        ts.tv_nsec += (left % 1000) * 1000000;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&vm->exited_cond, &vm->lock, &ts);
    }
    return true;
}

/* SIGKILL to QEMU unless it was reaped (the monitor reaps under vm->lock,
 * so the pid is still ours); an adopted QEMU through its pidfd. Called
 * with vm->lock. */
static void kill_locked(struct vm *vm)
{
    if (vm->exited)
        return;
    if (vm->adopted)
        pidfd_send_signal(vm->pidfd, SIGKILL, NULL, 0);
    else
        kill(vm->pid, SIGKILL);
}

void vm_kill(struct vm *vm)
{
    pthread_mutex_lock(&vm->lock);
    kill_locked(vm);
    pthread_mutex_unlock(&vm->lock);
}

int vm_stop(struct vm *vm, int timeout_ms)
{
    pthread_mutex_lock(&vm->lock);
    if (vm->stopped) {
        pthread_mutex_unlock(&vm->lock);
        return 0;
    }
    vm->stopping = true;
    bool exited = vm->exited;
    pthread_mutex_unlock(&vm->lock);

    if (!exited) {
        char ignored[256];
        int quit_ms = timeout_ms < VM_QUIT_TIMEOUT_MS ? timeout_ms : VM_QUIT_TIMEOUT_MS;
        pthread_mutex_lock(&vm->qmp_lock);
        /* QEMU may close the socket before answering; the wait below decides. */
        qmp_execute(&vm->qmp, "quit", NULL, NULL, quit_ms > 0 ? quit_ms : 1, ignored,
                    sizeof(ignored));
        pthread_mutex_unlock(&vm->qmp_lock);
    }

    pthread_mutex_lock(&vm->lock);
    if (!wait_exited_locked(vm, clock_monotonic_ms() + timeout_ms)) {
        kill_locked(vm);
        while (!vm->exited)
            pthread_cond_wait(&vm->exited_cond, &vm->lock);
    }
    pthread_mutex_unlock(&vm->lock);

    if (vm->monitor_started) {
        pthread_join(vm->monitor, NULL);
        vm->monitor_started = false;
    }
    pthread_mutex_lock(&vm->qmp_lock);
    qmp_close(&vm->qmp);
    pthread_mutex_unlock(&vm->qmp_lock);
    remove_runtime_files(vm);

    pthread_mutex_lock(&vm->lock);
    vm->stopped = true;
    pthread_mutex_unlock(&vm->lock);
    return 0;
}

void vm_free(struct vm *vm)
{
    if (!vm)
        return;
    vm_stop(vm, VM_QUIT_TIMEOUT_MS);
    vm_dealloc(vm);
}

char *vm_qemu_version(const char *qemu_binary, char *err, size_t errlen)
{
    const char *argv[] = { qemu_binary ? qemu_binary : VM_DEFAULT_QEMU, "--version", NULL };
    char *version = NULL;
    if (run_command(argv, NULL, &version, err, errlen) < 0) {
        free(version);
        return NULL;
    }
    return version;
}
