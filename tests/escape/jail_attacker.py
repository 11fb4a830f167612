#!/usr/bin/python3
"""What a QEMU taken over by its guest could try: run by test_jail_breakout
in place of QEMU, in vmhost's jail (same uid, namespaces, root, filter,
cgroup and limits). Each attempt prints one line, "ok NAME: what happened"
when it was stopped or "ESCAPED NAME: what happened" when it was not; the
test checks the lines and, on the host, that nothing outside changed.

Destructive calls are made with arguments that would do nothing even if the
kernel allowed them (a bad magic number, a missing path, our own child), so
an escape shows as success without harming the host.

usage: attack.py battery HOST_DIR SECRET HOST_PID TCP_PORT ABSTRACT SHM_KEY
       attack.py pids | memory
"""
import ctypes
import errno
import mmap
import os
import resource
import signal
import socket
import subprocess
import sys
import time

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long

# x86-64 system call numbers (the jail runs on x86-64 hosts only).
NR = dict(ptrace=101, syslog=103, setuid=105, setgid=106, setgroups=116, setresuid=117,
          capset=126, personality=135, pivot_root=155, chroot=161, acct=163, mount=165,
          umount2=166, swapon=167, reboot=169, sethostname=170, iopl=172, ioperm=173,
          init_module=175, delete_module=176, kexec_load=246, add_key=248, request_key=249,
          keyctl=250, unshare=272, perf_event_open=298, name_to_handle_at=303,
          open_by_handle_at=304, setns=308, process_vm_readv=310, kcmp=312,
          finit_module=313, kexec_file_load=320, bpf=321, userfaultfd=323,
          open_tree=428, move_mount=429, fsopen=430, pidfd_open=434, clone3=435,
          pidfd_getfd=438, clone=56, getpid=39)
CLONE = dict(NEWNS=0x20000, NEWUTS=0x4000000, NEWIPC=0x8000000, NEWUSER=0x10000000,
             NEWPID=0x20000000, NEWNET=0x40000000, NEWCGROUP=0x2000000)

results = []


def report(name, escaped, detail):
    results.append((name, escaped))
    print(("ESCAPED " if escaped else "ok ") + name + ": " + detail, flush=True)


def sys_call(name, *args):
    """(return value, errno) of a raw system call."""
    ctypes.set_errno(0)
    rc = libc.syscall(NR[name], *[ctypes.c_long(a) if isinstance(a, int) else a for a in args])
    return rc, ctypes.get_errno()


def must_fail(name, call, *args):
    rc, err = sys_call(call, *args)
    report(name, rc >= 0, "%s -> %d (%s)" % (call, rc, errno.errorcode.get(err, err)))


def must_raise(name, fn):
    try:
        got = fn()
    except OSError as e:
        report(name, False, "%s (%s)" % (type(e).__name__, errno.errorcode.get(e.errno, e.errno)))
        return
    except ValueError as e:  # resource.setrlimit's word for EPERM
        report(name, False, "refused: %s" % e)
        return
    report(name, True, "succeeded: %r" % (got,))


def read_file(path):
    with open(path, "rb") as f:
        return f.read(4096)


def write_file(path, data=b"pwned\n"):
    with open(path, "wb") as f:
        f.write(data)
    return path


def in_child(fn):
    """Runs fn in a child; its exit status, or -signal when a signal ended it."""
    pid = os.fork()
    if pid == 0:
        try:
            os._exit(fn())
        except BaseException:
            os._exit(99)
    _, status = os.waitpid(pid, 0)
    return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


def status_field(field):
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return line.split(":", 1)[1].strip()
    return ""


# ---- files: the host's, other sandboxes', the data directory's ----------

def files(host_dir, secret):
    token = host_dir + "/data/token"
    other = host_dir + "/data/sandboxes/other/disk"
    paths = {
        "read the data directory's token by its host path": token,
        "read another sandbox's disk by its host path": other,
        "read the token through /proc/1/root": "/proc/1/root" + token,
        "read the token through /proc/self/root": "/proc/self/root" + token,
        "read the token through /proc/self/cwd/..": "/proc/self/cwd/../../../../../.." + token,
        "read the token by .. past the root": "/vm/../../../../.." + token,
        "read the token through /proc/1/cwd": "/proc/1/cwd/../data/token",
        "read the host's /etc/shadow": "/etc/shadow",
        "read the host's /etc/passwd": "/etc/passwd",
        "read the host's /root": "/root/.bash_history",
        "read the host's kernel memory (/proc/kcore)": "/proc/kcore",
        "read the host's kernel log (/dev/kmsg)": "/dev/kmsg",
        "read the host's disks (/dev/sda, /dev/vda)": "/dev/sda",
        "read the host's physical memory (/dev/mem)": "/dev/mem",
        "read sysfs (/sys/kernel)": "/sys/kernel/uevent_helper",
        "read vmhost's run directory (/run/airlock)": "/run/airlock/jail-uids",
    }
    for name, path in paths.items():
        try:
            data = read_file(path)
        except OSError as e:
            report(name, False, "%s: %s" % (path, errno.errorcode.get(e.errno, e.errno)))
            continue
        report(name, True, "%s: read %d bytes%s" % (path, len(data),
                                                     " holding the secret" if secret.encode() in data else ""))
    # What /proc shows: only this PID namespace.
    pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
    report("see other processes in /proc", any(p > 64 for p in pids), "pids %s" % pids[:8])
    visible = sorted(os.listdir("/dev"))
    report("find devices beyond null, zero, urandom in /dev",
           not set(visible) <= {"null", "zero", "urandom", "kvm"}, "/dev holds %s" % visible)
    top = sorted(os.listdir("/"))
    allowed = {"usr", "lib", "lib64", "lib32", "libx32", "bin", "sbin", "etc", "dev", "proc",
               "vm", "disk", "mem", "kernel", "initrd", "jail-preload.so"}
    report("find host directories in the root", not set(top) <= allowed, "/ holds %s" % top)
    fds = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink("/proc/self/fd/" + fd)
        except OSError:
            continue
        if os.path.isdir("/proc/self/fd/" + fd) and target not in ("/proc/self/fd", "/vm", "/"):
            fds.append(target)
    report("inherit a directory fd from vmhost", bool(fds), "directories open: %s" % fds)


def writes(host_dir):
    tries = {
        "write a file by its host path": host_dir + "/pwned-abs",
        "write through /proc/1/root": "/proc/1/root" + host_dir + "/pwned-proc-root",
        "write past the root by ..": "/vm/../../../.." + host_dir + "/pwned-dotdot",
        "write into /usr": "/usr/bin/pwned",
        "write into the root": "/pwned",
        "write into /dev": "/dev/pwned",
        "replace the preload": "/jail-preload.so",
        "replace the loader cache": "/etc/ld.so.cache",
        "write the kernel image": "/kernel",
        "write the host's core_pattern": "/proc/sys/kernel/core_pattern",
        "write a host sysctl (/proc/sys/vm/drop_caches)": "/proc/sys/vm/drop_caches",
    }
    for name, path in tries.items():
        try:
            # Open only: nothing is written even where the open would work.
            fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
        except OSError as e:
            report(name, False, "%s: %s" % (path, errno.errorcode.get(e.errno, e.errno)))
            continue
        os.close(fd)
        report(name, True, "%s opened for writing" % path)
    try:
        fd = os.open("/proc/sysrq-trigger", os.O_WRONLY)
        os.close(fd)
        report("open the host's sysrq trigger", True, "opened")
    except OSError as e:
        report("open the host's sysrq trigger", False, errno.errorcode.get(e.errno, e.errno))
    try:
        os.symlink(host_dir + "/pwned-symlink", "/vm/link")
        write_file("/vm/link")
        report("write the host through a symlink in /vm", os.path.exists("/vm/link"), "written")
    except OSError as e:
        report("write the host through a symlink in /vm", False,
               errno.errorcode.get(e.errno, e.errno))
    finally:
        try:
            os.unlink("/vm/link")
        except OSError:
            pass
    # Left for vmhost, which connects to QEMU's sockets here as root: the
    # host side checks it refuses the link (vm_socket.c).
    os.symlink(host_dir + "/data/sandboxes/other/qmp.sock", "/vm/qmp.sock")
    report("leave vmhost a link to another sandbox's QMP socket", False,
           "planted /vm/qmp.sock; the test checks vmhost refuses it")
    must_raise("hard-link a /usr program into /vm", lambda: os.link("/usr/bin/true", "/vm/true"))
    must_raise("make a block device in /vm", lambda: os.mknod("/vm/sda", 0o600 | 0o60000, os.makedev(8, 0)))
    must_raise("make a character device for /dev/mem", lambda: os.mknod("/vm/mem", 0o600 | 0o20000, os.makedev(1, 1)))
    must_raise("give a file in /vm to root", lambda: os.chown(write_file("/vm/mine"), 0, 0))


def execs():
    # /vm is noexec: a program written there does not run, directly or
    # through the loader; a setuid program gives no root (no_new_privs).
    with open("/usr/bin/true", "rb") as f:
        write_file("/vm/prog", f.read())
    os.chmod("/vm/prog", 0o755)
    must_raise("exec a program written to /vm", lambda: subprocess.run(["/vm/prog"], check=True))
    loader = "/lib64/ld-linux-x86-64.so.2"
    rc = subprocess.run([loader, "/vm/prog"], stderr=subprocess.DEVNULL).returncode
    report("run a program in /vm through the loader", rc == 0, "%s /vm/prog -> %d" % (loader, rc))

    def mapped_exec():
        with open("/vm/prog", "rb") as f:
            m = mmap.mmap(f.fileno(), 4096, prot=mmap.PROT_READ | mmap.PROT_EXEC)
            m.close()
        return "mapped"
    must_raise("map a file of /vm executable", mapped_exec)
    os.chmod("/vm/prog", 0o4755)
    must_raise("exec a set-uid program of /vm", lambda: subprocess.run(["/vm/prog"], check=True))
    os.unlink("/vm/prog")
    os.makedirs("/vm/m", exist_ok=True)
    r = subprocess.run(["/usr/bin/mount", "-t", "tmpfs", "none", "/vm/m"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    report("gain root through set-uid /usr/bin/mount", r.returncode == 0, "exit %d" % r.returncode)
    r = subprocess.run(["/usr/bin/su", "-c", "true"], stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    report("gain root through set-uid /usr/bin/su", r.returncode == 0, "exit %d" % r.returncode)
    os.rmdir("/vm/m")


# ---- identity and privileges --------------------------------------------

def privileges():
    for field in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
        v = status_field(field)
        report("hold a capability (%s)" % field, int(v, 16) != 0, "%s %s" % (field, v))
    report("run without no_new_privs", status_field("NoNewPrivs") != "1",
           "NoNewPrivs %s" % status_field("NoNewPrivs"))
    report("run without a system call filter", status_field("Seccomp") != "2",
           "Seccomp %s" % status_field("Seccomp"))
    report("run as root", os.getuid() == 0 or os.geteuid() == 0, "uid %d" % os.getuid())
    must_fail("setuid(0)", "setuid", 0)
    must_fail("setgid(0)", "setgid", 0)
    groups = (ctypes.c_uint * 1)(0)
    must_fail("setgroups([0])", "setgroups", 1, groups)
    must_fail("setresuid to another jail's uid", "setresuid", os.getuid() + 1, os.getuid() + 1,
              os.getuid() + 1)
    hdr = (ctypes.c_uint32 * 2)(0x20080522, 0)
    data = (ctypes.c_uint32 * 6)(0xffffffff, 0xffffffff, 0, 0xffffffff, 0xffffffff, 0)
    must_fail("capset to every capability", "capset", hdr, data)
    must_raise("raise the open-file limit", lambda: resource.setrlimit(
        resource.RLIMIT_NOFILE, (1 << 20, 1 << 20)))
    must_raise("raise the file-size limit", lambda: resource.setrlimit(
        resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY)))
    must_raise("raise the core-size limit", lambda: resource.setrlimit(
        resource.RLIMIT_CORE, (1 << 30, 1 << 30)))
    must_fail("sethostname", "sethostname", b"pwned", 5)


# ---- namespaces, mounts, the root ---------------------------------------

def namespaces():
    for flag in ("NEWUSER", "NEWNS", "NEWNET", "NEWPID", "NEWCGROUP", "NEWIPC", "NEWUTS"):
        must_fail("unshare(CLONE_%s)" % flag, "unshare", CLONE[flag])
    rc, err = sys_call("clone", CLONE["NEWUSER"] | signal.SIGCHLD, 0, 0, 0, 0)
    if rc == 0:
        os._exit(0)
    if rc > 0:
        os.waitpid(rc, 0)
    report("clone(CLONE_NEWUSER)", rc >= 0, "-> %d (%s)" % (rc, errno.errorcode.get(err, err)))
    args = (ctypes.c_uint64 * 11)(CLONE["NEWUSER"], 0, 0, 0, signal.SIGCHLD, 0, 0, 0, 0, 0, 0)
    rc, err = sys_call("clone3", args, ctypes.sizeof(args))
    if rc == 0:
        os._exit(0)
    report("clone3 with new namespaces", rc >= 0, "-> %d (%s)" % (rc, errno.errorcode.get(err, err)))
    fd = os.open("/proc/self/ns/net", os.O_RDONLY)
    must_fail("setns into a network namespace", "setns", fd, 0)
    os.close(fd)
    os.makedirs("/vm/m", exist_ok=True)
    must_fail("mount a tmpfs", "mount", b"none", b"/vm/m", b"tmpfs", 0, None)
    must_fail("mount proc", "mount", b"proc", b"/vm/m", b"proc", 0, None)
    must_fail("mount a cgroup hierarchy (release_agent)", "mount", b"cgroup", b"/vm/m",
              b"cgroup", 0, b"memory")
    must_fail("bind-mount the root writable", "mount", b"/", b"/vm/m", None, 0x1000, None)
    must_fail("remount /usr writable", "mount", None, b"/usr", None, 0x20 | 0x1000, None)
    must_fail("unmount /usr", "umount2", b"/usr", 2)
    must_fail("pivot_root", "pivot_root", b"/vm", b"/vm/m")
    must_fail("chroot (the classic ../ escape)", "chroot", b"/vm/m")
    must_fail("open_tree of the root", "open_tree", -100, b"/", 1)
    must_fail("fsopen a new filesystem", "fsopen", b"tmpfs", 0)
    handle = (ctypes.c_char * 136)()
    ctypes.cast(handle, ctypes.POINTER(ctypes.c_uint32))[0] = 128
    mount_id = ctypes.c_int(0)
    must_fail("name_to_handle_at", "name_to_handle_at", -100, b"/usr", handle,
              ctypes.byref(mount_id), 0)
    must_fail("open_by_handle_at (the shocker escape)", "open_by_handle_at", 3, handle, 0)
    os.rmdir("/vm/m")


# ---- other processes ----------------------------------------------------

def processes(host_pid):
    child = os.fork()
    if child == 0:
        time.sleep(30)
        os._exit(0)
    must_fail("ptrace attach to a process of our own", "ptrace", 16, child, 0, 0)
    local = (ctypes.c_char * 8)()
    iov = (ctypes.c_uint64 * 2)(ctypes.addressof(local), 8)
    must_fail("read another process's memory (process_vm_readv)", "process_vm_readv", child,
              iov, 1, iov, 1, 0)
    must_fail("kcmp two processes", "kcmp", os.getpid(), child, 0, 0, 0)
    os.kill(child, signal.SIGKILL)
    os.waitpid(child, 0)
    must_fail("ptrace(PTRACE_TRACEME)", "ptrace", 0, 0, 0, 0)
    must_fail("pidfd_open of vmhost's pid", "pidfd_open", host_pid, 0)
    must_raise("signal vmhost by its pid", lambda: os.kill(host_pid, 0))
    must_raise("read vmhost's environment", lambda: read_file("/proc/%d/environ" % host_pid))
    # Every process it may signal, but itself: none, in its PID namespace.
    must_raise("kill every process (kill -1)", lambda: os.kill(-1, signal.SIGKILL))


# ---- the kernel ---------------------------------------------------------

def kernel():
    must_fail("load a kernel module (init_module)", "init_module", None, 0, b"")
    must_fail("load a kernel module (finit_module)", "finit_module", 0, b"", 0)
    must_fail("remove a kernel module", "delete_module", b"airlock_none", 0)
    must_fail("kexec_load", "kexec_load", 0, 0, None, 0xffff0000)
    must_fail("kexec_file_load", "kexec_file_load", -1, -1, 0, None, 0xffff)
    must_fail("reboot (bad magic)", "reboot", 0, 0, 0, None)
    must_fail("swapon", "swapon", b"/nonexistent", 0)
    must_fail("process accounting", "acct", b"/nonexistent")
    must_fail("read the kernel log (syslog)", "syslog", 10, None, 0)
    must_fail("port I/O (iopl 3)", "iopl", 3)
    must_fail("port I/O (ioperm)", "ioperm", 0x60, 1, 1)
    must_fail("disable address randomization (personality)", "personality", 0x0040000)
    must_fail("load a BPF program", "bpf", 5, None, 0)
    must_fail("perf_event_open", "perf_event_open", None, 0, -1, -1, 0)
    must_fail("userfaultfd", "userfaultfd", 0)
    must_fail("keyctl: the session keyring", "keyctl", 0, -3, 0)
    must_fail("add_key", "add_key", b"user", b"airlock", b"x", 1, -3)
    must_fail("request_key", "request_key", b"user", b"airlock", None, -3)
    params = (ctypes.c_uint32 * 30)()
    rc, err = libc.syscall(425, 1, params), ctypes.get_errno()
    report("io_uring_setup", rc >= 0, "-> %d (%s)" % (rc, errno.errorcode.get(err, err)))
    if rc >= 0:
        os.close(rc)
    # A call in another calling convention than the filter's.
    code = b"\xb8\x14\x00\x00\x00\xcd\x80\xc3"  # mov eax, 20 (getpid, i386); int 0x80; ret

    def int80():
        m = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
        m.write(code)
        addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
        return 0 if ctypes.CFUNCTYPE(ctypes.c_int)(addr)() > 0 else 1
    st = in_child(int80)
    report("a 32-bit system call (int 0x80) past the filter", st == 0, "child ended %d" % st)
    st = in_child(lambda: 0 if libc.syscall(0x40000000 | NR["getpid"]) > 0 else 1)
    report("an x32 system call past the filter", st == 0, "child ended %d" % st)


# ---- network and IPC ----------------------------------------------------

def network(tcp_port, abstract, shm_key):
    for fam, kind, name in ((socket.AF_INET, socket.SOCK_STREAM, "a TCP socket"),
                            (socket.AF_INET6, socket.SOCK_STREAM, "a TCP/IPv6 socket"),
                            (socket.AF_INET, socket.SOCK_DGRAM, "a UDP socket"),
                            (socket.AF_INET, socket.SOCK_RAW, "a raw IP socket"),
                            (socket.AF_PACKET, socket.SOCK_RAW, "a packet socket"),
                            (socket.AF_NETLINK, socket.SOCK_RAW, "a netlink socket"),
                            (40, socket.SOCK_STREAM, "a vsock socket")):
        must_raise("open " + name, lambda: socket.socket(fam, kind).close())

    def tcp():
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(2)
        s.connect(("127.0.0.1", tcp_port))
        return "connected"
    must_raise("connect to a listener on the node's loopback", tcp)

    def unix_abstract():
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect("\0" + abstract)
        return "connected"
    must_raise("connect to the node's abstract unix socket", unix_abstract)

    def unix_path():
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect("/run/airlock/vmhost.sock")
        return "connected"
    must_raise("connect to a unix socket of the node by path", unix_path)
    libc.shmget.restype = ctypes.c_int
    rc = libc.shmget(ctypes.c_int(shm_key), ctypes.c_size_t(0), ctypes.c_int(0))
    err = ctypes.get_errno()
    report("attach the node's System V shared memory", rc >= 0,
           "shmget -> %d (%s)" % (rc, errno.errorcode.get(err, err)))
    ifaces = sorted(os.listdir("/proc/sys/net/ipv4/conf"))
    report("see the node's network interfaces", not set(ifaces) <= {"all", "default", "lo"},
           "interfaces %s" % ifaces)


# ---- limits -------------------------------------------------------------

def limits():
    path = "/vm/big"
    try:
        with open(path, "wb") as f:
            for _ in range(4):
                f.write(b"\0" * (1 << 20))
        report("write past the file-size limit", True, "4 MiB written")
    except OSError as e:
        report("write past the file-size limit", False, errno.errorcode.get(e.errno, e.errno))
    os.unlink(path)
    fds = []
    try:
        while len(fds) < 4096:
            fds.append(os.open("/dev/null", os.O_RDONLY))
        report("open more files than the limit", True, "%d open" % len(fds))
    except OSError as e:
        report("open more files than the limit", False,
               "%s after %d" % (errno.errorcode.get(e.errno, e.errno), len(fds)))
    for fd in fds:
        os.close(fd)


def battery(argv):
    host_dir, secret, host_pid, tcp_port, abstract, shm_key = argv
    os.chdir("/vm")
    for step in (lambda: files(host_dir, secret), lambda: writes(host_dir), execs, privileges,
                 namespaces, lambda: processes(int(host_pid)), kernel,
                 lambda: network(int(tcp_port), abstract, int(shm_key)), limits):
        step()
    print("attempts %d escaped %d" % (len(results), sum(1 for _, e in results if e)), flush=True)


def pids():
    """Fork until the pids limit stops it; prints how many ran at once."""
    children = []
    try:
        while len(children) < 4096:
            pid = os.fork()
            if pid == 0:
                time.sleep(60)
                os._exit(0)
            children.append(pid)
    except OSError as e:
        print("forks %d stopped by %s" % (len(children), errno.errorcode.get(e.errno, e.errno)),
              flush=True)
    else:
        print("forks %d never stopped" % len(children), flush=True)
    for pid in children:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)


def memory():
    """Takes memory 64 MiB at a time, every page touched, to 4 GiB."""
    held = []
    for i in range(64):
        held.append(b"\1" * (64 << 20))
        print("held %d MiB" % ((i + 1) * 64), flush=True)
    print("memory never stopped", flush=True)


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "battery":
        battery(sys.argv[2:])
    elif mode == "pids":
        pids()
    elif mode == "memory":
        memory()
