/* One QEMU -M microvm process per sandbox, driven over QMP.
 *
 * vm_start() launches QEMU with the image's kernel and initramfs, the
 * sandbox disk as virtio-blk, a virtio-serial port named "agent" whose host
 * side is a unix socket (the guest channel), the serial console on a socket
 * vmhost reads into a bounded log file (console_log.h), and a QMP socket; in a jail (jail.h) unless the config has no
 * jailer. QEMU's working directory, and the only one it may write in, is
 * run_dir/vm: its two sockets live there. A monitor thread waits for the process; when it
 * exits without vm_stop() having been called, the exit callback runs with a
 * reason that includes the tail of the console log. */
#ifndef AIRLOCK_VM_H
#define AIRLOCK_VM_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>

#include "jail.h"

enum vm_accel { VM_ACCEL_AUTO = 0, VM_ACCEL_KVM, VM_ACCEL_TCG };

const char *vm_accel_name(enum vm_accel a);
/* Parses "kvm", "tcg" or "auto"; -1 on anything else. */
int vm_accel_parse(const char *s, enum vm_accel *out);

#define VM_VOLUME_SLOTS 4
/* Slot N's disk has serial "airlock-vol<N>" (guestd finds it by it). */
#define VM_VOLUME_SERIAL_PREFIX "airlock-vol"

struct vm_config {
    const char *qemu_binary;   /* NULL = qemu-system-x86_64 from PATH */
    enum vm_accel accel;       /* KVM or TCG (resolve AUTO with vm_accel_probe first) */
    const char *kernel;
    const char *initrd;
    const char *disk;          /* raw ext4 image, writable, owned by this VM; NULL = no disk
                                  (the accelerator probe) */
    unsigned vcpus;
    unsigned memory_mb;
    const char *run_dir;       /* holds vm/qmp.sock, vm/agent.sock, console.log, qemu.pid */
    const char *extra_cmdline; /* appended to the kernel command line, or NULL */
    /* Guest RAM from a file (memory-backend-file "mem") instead of anonymous
     * memory: a template VM maps it shared (the guest writes into the file),
     * a restored VM privately (copy-on-write; clean pages stay shared in the
     * page cache across every VM of the template). NULL = anonymous RAM. */
    const char *mem_path;
    bool mem_shared;
    bool incoming;             /* -incoming defer: wait for vm_load_state() */
    /* The NIC: virtio-net on a TAP opened by the caller in the sandbox's
     * namespace (sandbox_net_open_tap), with the fixed guest MAC. The
     * caller keeps and closes its fd; QEMU gets its own copy. Snapshot and
     * restore must agree on has_nic: it changes the device list. */
    bool has_nic;
    int tap_fd;
    /* > 0: QEMU runs this much nicer than vmhost from its start (a pooled
     * VM being filled in the background yields to the VMs in use);
     * vm_set_nice. */
    int nice;
    /* The jail QEMU runs in (jail.h); NULL runs it unconfined as vmhost's
     * child, which only the bench's jailed-beside-unjailed rows do. */
    struct jailer *jailer;
    const char *netns;         /* jailed: the network namespace QEMU joins (a /run/netns path);
                                  NULL: a new empty one */
    size_t console_max_bytes;  /* console.log's bound; 0: VM_CONSOLE_DEFAULT_MAX_BYTES */
    /* The volume slots (docs/volumes.md): every VM has VM_VOLUME_SLOTS
     * virtio-blk disks after the root disk, serial "airlock-vol<N>", so a
     * snapshot restores into any attachment of volumes (microvm has no
     * hotplug). A slot's image (raw, read-write, cache=writeback: guest
     * flushes reach the store), or NULL: an empty (0-byte) file of the VM's
     * own in run_dir/vm. */
    const char *volumes[VM_VOLUME_SLOTS];
};

/* A guest's console keeps this much of its newest output by default. */
#define VM_CONSOLE_DEFAULT_MAX_BYTES (4u << 20)

struct vm;

typedef void (*vm_exit_fn)(void *arg, int wait_status, const char *reason);

/* Starts QEMU and waits until its QMP socket answers. Does not wait for the
 * guest daemon. On failure nothing is left running and -1 is returned with a
 * message in err (including QEMU's stderr when it exited). */
int vm_start(const struct vm_config *cfg, vm_exit_fn on_exit, void *exit_arg, struct vm **out,
             char *err, size_t errlen);

/* The VM's directory was renamed to run_dir (QEMU keeps its open files
 * and sockets; its working directory moves along): paths follow. */
int vm_move_run_dir(struct vm *vm, const char *run_dir, char *err, size_t errlen);

/* Sets the CPU niceness of every thread of QEMU (a pooled VM handed out
 * runs like any other from then on). Threads QEMU starts later inherit it
 * from the thread that starts them. 0 or -1 with err. */
int vm_set_nice(struct vm *vm, int nice, char *err, size_t errlen);

pid_t vm_pid(const struct vm *vm);
/* The largest file QEMU may write (its RLIMIT_FSIZE: a jail's bound, which
 * an attached volume cannot grow past while this QEMU runs); UINT64_MAX
 * when unbounded or unknown. */
uint64_t vm_max_file_bytes(const struct vm *vm);
const char *vm_agent_socket(const struct vm *vm); /* run_dir/agent.sock */
const char *vm_console_log(const struct vm *vm);  /* run_dir/console.log */

/* Sends a QMP command (e.g. "stop", "cont") and waits for its answer.
 * arguments_json may be NULL. Returns 0 or -1 with QMP's error in err. */
int vm_qmp_command(struct vm *vm, const char *command, const char *arguments_json, char *err,
                   size_t errlen);

/* Saves the stopped VM's device state to state_path (QMP migrate with
 * x-ignore-shared: RAM stays in the shared memory file, only device state is
 * written) and waits for the MIGRATION completed event. The VM must have
 * been started with mem_path + mem_shared and be stopped ("stop"). */
int vm_save_state(struct vm *vm, const char *state_path, int timeout_ms, char *err, size_t errlen);

/* Loads a state saved by either into a VM started with incoming (full:
 * guest RAM in the file too, a suspend's; else device state only, with
 * x-ignore-shared) and waits for the MIGRATION completed event. The VM
 * stays paused until the caller's QMP "cont" (a cont sent during the
 * incoming migration would be ignored), so work that must be done before
 * the guest runs can overlap the load. */
int vm_load_state(struct vm *vm, const char *state_path, bool full, int timeout_ms, char *err,
                  size_t errlen);

/* The same for a suspend: the stopped VM's whole state, guest RAM included
 * (without x-ignore-shared), into state_path; and its load into a VM
 * started with incoming and the same configuration, followed by cont. */
int vm_save_full_state(struct vm *vm, const char *state_path, int timeout_ms, char *err,
                       size_t errlen);
int vm_restore_full_state(struct vm *vm, const char *state_path, int timeout_ms, char *err,
                          size_t errlen);

/* Live migration to another node (sandbox_migrate.c). The source: sends
 * the guest into fd — while it runs when live, else stopped first (all of
 * its memory copied with the guest standing still) — and returns once QEMU
 * stopped it before the switchover (the disk can be finished then);
 * continue sends the rest and
 * waits for the end (the VM stays stopped, postmigrate); abort, at any
 * point before the target runs it, runs the guest here again. The
 * target, started with incoming: loads from fd in the background; wait
 * for the end, then cont. */
int vm_migrate_live_out(struct vm *vm, int fd, bool live, int timeout_ms, char *err,
                        size_t errlen);
int vm_migrate_live_continue(struct vm *vm, int timeout_ms, char *err, size_t errlen);
int vm_migrate_live_abort(struct vm *vm, int timeout_ms, char *err, size_t errlen);
int vm_migrate_live_in(struct vm *vm, int fd, char *err, size_t errlen);
int vm_migrate_live_in_wait(struct vm *vm, int timeout_ms, char *err, size_t errlen);

/* Stops QEMU (QMP quit, SIGKILL after timeout_ms), waits for it, removes the
 * sockets and pid file. The exit callback does not run. Idempotent. */
int vm_stop(struct vm *vm, int timeout_ms);

/* Kills QEMU at once (SIGKILL) without waiting; its exit callback runs
 * as for any death. For a VM whose guest can no longer be trusted. */
void vm_kill(struct vm *vm);

/* vm_stop() if needed, then frees. */
void vm_free(struct vm *vm);

/* Re-adoption after a vmhost restart (vm_adopt.c, docs/vm-driver.md
 * "Durability"). */

/* True when pid is the live QEMU of run_dir that started at start_time
 * (vm_start_time's ticks): a reused pid does not pass. */
bool vm_process_is(pid_t pid, unsigned long long start_time, const char *run_dir);
/* True when pid's working directory is run_dir/vm, where vm_start runs QEMU. */
bool vm_runs_in(pid_t pid, const char *run_dir);
/* The QEMU process's start time, for vm_process_is later; -1 once it is gone. */
int vm_start_time(const struct vm *vm, unsigned long long *out);
/* Takes over the QEMU of run_dir that an earlier vmhost started (pid,
 * started at start_time), in its jail when jailer is set: connects to its
 * QMP and console sockets and watches it; the exit callback and vm_stop/vm_free work as
 * for a VM from vm_start. */
int vm_adopt(const char *run_dir, pid_t pid, unsigned long long start_time, struct jailer *jailer,
             size_t console_max_bytes, vm_exit_fn on_exit, void *exit_arg, struct vm **out,
             char *err, size_t errlen);
/* QEMU's run state: "running", "paused", "postmigrate", ... */
int vm_run_state(struct vm *vm, char *out, size_t outlen, char *err, size_t errlen);
/* Cancels an outgoing migration that a crashed vmhost left in flight and
 * waits for it to end (no migration: returns at once). */
int vm_settle_migration(struct vm *vm, int timeout_ms, char *err, size_t errlen);
/* SIGKILLs (through a pidfd) every QEMU running in run_dir
 * except keep, and waits for each to go; returns how many. */
size_t vm_kill_strays(const char *run_dir, pid_t keep);

/* The last max_bytes of the console log, NUL-terminated, into buf. */
void vm_console_tail(const char *console_log, char *buf, size_t max_bytes);

/* `qemu --version` output (malloc'd) of qemu_binary (NULL = from PATH):
 * part of every cache key that depends on the QEMU build. */
char *vm_qemu_version(const char *qemu_binary, char *err, size_t errlen);

/* Decides the accelerator. KVM is used only when a tiny guest really boots
 * under it (on nested/PVM hosts /dev/kvm exists but standard kernels fail);
 * otherwise TCG with one warning. requested KVM/TCG is returned as is
 * (KVM fails later with a clear error if it does not work). The probe result
 * is cached in cache_dir keyed by kernel and QEMU binary. */
enum vm_accel vm_accel_probe(enum vm_accel requested, struct jailer *jailer,
                             const char *qemu_binary, const char *kernel,
                             const char *initrd, const char *cache_dir);

#endif
