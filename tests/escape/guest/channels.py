#!/usr/bin/env python3
"""What the guest can find of the host's side of its devices, run as root
in a sandbox by tests/escape/test_guest_channels.c.

usage: channels.py ports              the virtio-serial ports: "name /dev/..." lines
       channels.py open_agent         a second open of the host channel's port
       channels.py devices            the virtio device ids on the bus
       channels.py filesystems        9p, virtiofs: known to the kernel, mountable?
       channels.py search NEEDLE...   which needles any readable file under
                                      /proc/cmdline, PID 1's /proc files, /sys/class/dmi,
                                      /sys/firmware, /etc and dmesg holds
       channels.py console_escapes    QEMU's mux and monitor escapes, QMP, terminal
                                      controls and raw bytes on the serial console
       channels.py steal_agent        QMP into the host channel through PID 1's
                                      descriptor (pidfd_getfd)"""
import ctypes
import os
import subprocess
import sys
import time

PORTS = "/sys/class/virtio-ports"
SYS_PIDFD_GETFD = 438


def port_devices():
    out = {}
    for port in sorted(os.listdir(PORTS)):
        with open(os.path.join(PORTS, port, "name")) as f:
            out[f.read().strip()] = "/dev/" + port
    return out


def ports():
    for name, dev in port_devices().items():
        print("%s %s" % (name, dev))


def open_agent():
    try:
        os.close(os.open(port_devices()["agent"], os.O_RDWR))
        print("agent port opened")
    except OSError as e:
        print("agent port: %s" % e.strerror)


def devices():
    ids = set()
    for dev in os.listdir("/sys/bus/virtio/devices"):
        with open("/sys/bus/virtio/devices/%s/device" % dev) as f:
            ids.add(int(f.read(), 16))
    print("virtio devices %s" % ",".join(str(i) for i in sorted(ids)))


def filesystems():
    with open("/proc/filesystems") as f:
        known = f.read().split()
    for fs in ("9p", "virtiofs"):
        print("%s known %s" % (fs, fs in known))
    os.makedirs("/mnt/host", exist_ok=True)
    for args in (["-t", "9p", "-o", "trans=virtio", "hostshare"],
                 ["-t", "virtiofs", "hostshare"]):
        r = subprocess.run(["mount"] + args + ["/mnt/host"], capture_output=True)
        print("mount %s: %s" % (args[1], "mounted" if r.returncode == 0 else "refused"))


PID1_FILES = ("cmdline", "environ", "mountinfo", "maps", "status", "cgroup", "comm")


def readable_files():
    """PID 1's descriptors are left out: reading its pipes would block."""
    yield "/proc/cmdline"
    for name in PID1_FILES:
        yield "/proc/1/" + name
    for top in ("/sys/class/dmi", "/sys/firmware", "/etc"):
        for root, dirs, files in os.walk(top):
            for name in files:
                yield os.path.join(root, name)


def search(*needles):
    found = set()
    texts = [subprocess.run(["dmesg"], capture_output=True).stdout]
    for path in readable_files():
        try:
            with open(path, "rb") as f:
                texts.append(f.read(1 << 20))
        except OSError:
            pass
    for text in texts:
        found.update(n for n in needles if n.encode() in text)
    print("searched %d files, found %s" % (len(texts), ",".join(sorted(found)) or "nothing"))


def console_escapes():
    payloads = [b"\x01c", b"info status\r\nquit\r\n", b"\x01x", b"\x01s\x01b",
                b'{"execute":"qmp_capabilities"}\r\n{"execute":"quit"}\r\n',
                b'{"execute":"human-monitor-command","arguments":{"command-line":"quit"}}\r\n',
                b"\x1b]0;title\x07\x1b[2J\x1bc\x1b[?1049h", bytes(range(256)) * 64]
    with open("/dev/ttyS0", "wb", buffering=0) as tty:
        for p in payloads:
            tty.write(p)
        tty.write(b"\r\nconsole-escapes-end\r\n")
    print("console escapes written")


def steal_agent():
    """PID 1 holds the port, and a second open is refused: take a copy of
    its descriptor and write QMP into the channel to the host."""
    agent = port_devices()["agent"]
    target = next(int(fd) for fd in os.listdir("/proc/1/fd")
                  if os.path.realpath("/proc/1/fd/" + fd) == agent)
    libc = ctypes.CDLL(None, use_errno=True)
    pidfd = os.pidfd_open(1)
    fd = libc.syscall(SYS_PIDFD_GETFD, pidfd, target, 0)
    if fd < 0:
        print("pidfd_getfd: %s" % os.strerror(ctypes.get_errno()))
        return
    time.sleep(0.5)  # the exec that started us ends first
    for _ in range(16):
        os.write(fd, b'{"execute":"qmp_capabilities"}\r\n{"execute":"quit"}\r\n')
    print("qmp written into the host channel")


def main():
    verbs = {f.__name__: f for f in (ports, open_agent, devices, filesystems, search,
                                     console_escapes, steal_agent)}
    verbs[sys.argv[1]](*sys.argv[2:])


if __name__ == "__main__":
    main()
