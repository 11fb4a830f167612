#!/usr/bin/env python3
"""Stray register writes to the microvm's virtio-mmio transports through
/dev/mem, run as root in a sandbox by tests/escape/test_guest_mmio.c and
test_guest_power.c.

usage: virtio_poke.py probe           which pages /dev/mem maps
       virtio_poke.py empty_slots     garbage into the transports without a device
       virtio_poke.py rom_hash        the hash of the firmware's last page
       virtio_poke.py rom             garbage into the firmware, read back
       virtio_poke.py hpet            garbage into the HPET's registers
       virtio_poke.py reset_nic       unbind the NIC's driver alone (a device reset)
       virtio_poke.py ATTACK...       (ATTACKS below) on the disk, console and NIC, in order

The guest kernel (Debian, CONFIG_IO_STRICT_DEVMEM) refuses /dev/mem on a
range a driver has claimed and checks whole pages; the three devices in
use share the page 0xfeb02000, so an attack unbinds every virtio-mmio
driver first (the guest gives up its disk, its channel to the host and
its network), then writes. Steps are reported on the serial console (the
host reads console.log), each attack between "POKE-START ATTACK" and
"POKE-DONE ATTACK": the channel to the host is gone by then."""
import ctypes
import mmap
import os
import struct
import sys
import time

from guestmem import Page

BASE = 0xFEB00000         # microvm: 24 transports of 0x200 bytes
SLOT = 0x200
SLOTS = 24
MAGIC = 0x74726976        # "virt"
# Legacy (version 1) registers: QEMU 7.2's virtio-mmio defaults to them.
MAGIC_R, DEVICE_ID = 0x000, 0x008
HOST_FEATURES_SEL, GUEST_FEATURES, GUEST_FEATURES_SEL = 0x014, 0x020, 0x024
GUEST_PAGE_SIZE, QUEUE_SEL, QUEUE_NUM_MAX, QUEUE_NUM = 0x028, 0x030, 0x034, 0x038
QUEUE_ALIGN, QUEUE_PFN, QUEUE_READY, QUEUE_NOTIFY = 0x03C, 0x040, 0x044, 0x050
INTERRUPT_ACK, STATUS = 0x064, 0x070
CONFIG = 0x100
NET, BLK, CONSOLE = 1, 2, 3
DEVICE_NAMES = {NET: "net", BLK: "blk", CONSOLE: "console"}
DRIVERS = "/sys/bus/platform/drivers/virtio-mmio"
DESC_NEXT, DESC_WRITE, DESC_INDIRECT = 1, 2, 4
# The rings the attacks build, in one page: QN descriptors at 0, the
# available ring after them, the used ring at USED (QueueAlign ALIGN).
QN, ALIGN = 16, 128
AVAIL, USED, DATA = 16 * QN, 384, 2048
OUTSIDE_RAM = 0xDEAD00000000
BLK_IN, BLK_OUT = 0, 1

console = open("/dev/ttyS0", "w", buffering=1)


def say(msg):
    console.write("virtio-poke: %s\n" % msg)


def devmem(offset, length):
    fd = os.open("/dev/mem", os.O_RDWR | os.O_SYNC)
    try:
        return mmap.mmap(fd, length, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE,
                         offset=offset)
    finally:
        os.close(fd)


class Regs:
    """One transport. QEMU drops register accesses that are not 4 bytes
    wide, and struct.pack_into zeroes its target before it stores (a
    write of 0 first: a reset of Status, QueuePFN): registers are reached
    through a memoryview of 32-bit items, one access each."""

    def __init__(self, mem, off, phys):
        self.mem, self.off, self.phys = mem, off, phys
        self.words = memoryview(mem).cast("I")

    def r(self, reg):
        return self.words[(self.off + reg) // 4]

    def w(self, reg, value):
        self.words[(self.off + reg) // 4] = value & 0xFFFFFFFF

    def kick(self, queue):
        self.w(QUEUE_NOTIFY, queue)


KERNEL_RAM, LOCAL_APIC, HPET, BIOS_ROM = 0x100000, 0xFEE00000, 0xFED00000, 0xFFFF0000


def probe():
    """The transports' pages, the kernel's RAM and the local APIC."""
    for page in list(range(BASE, BASE + SLOTS * SLOT, 4096)) + [KERNEL_RAM, LOCAL_APIC]:
        try:
            devmem(page, 4096).close()
            print("page %#x: mapped" % page)
        except OSError as e:
            print("page %#x: %s" % (page, os.strerror(e.errno)))


def rom_hash():
    import hashlib
    print("rom sha256 %s" % hashlib.sha256(devmem(BIOS_ROM, 4096)[0:4096]).hexdigest())


def rom():
    """The firmware at the top of 4 GiB: microvm maps it as the VM's own
    RAM, so the writes stick, in this VM."""
    mem = devmem(BIOS_ROM, 4096)
    before = bytes(mem[0:4096])
    words = memoryview(mem).cast("I")
    for i in range(len(words)):
        words[i] = 0xCCCCCCCC
    print("rom %s" % ("unchanged" if bytes(mem[0:4096]) == before else "changed"))


def hpet():
    """Every HPET register, the counter and the comparators too."""
    words = memoryview(devmem(HPET, 4096)).cast("I")
    for value in (0xFFFFFFFF, 0, 0xAAAAAAAA):
        for i in range(0x400 // 4):
            words[i] = value
    print("hpet written")


def empty_slots():
    """Every register of every transport without a device (their pages
    hold no claimed range, so the drivers stay bound)."""
    mem = devmem(BASE, 2 * 4096)
    n = 0
    for i in range(16):
        regs = Regs(mem, i * SLOT, BASE + i * SLOT)
        if regs.r(MAGIC_R) != MAGIC or regs.r(DEVICE_ID) != 0:
            continue
        for reg in range(0, SLOT, 4):
            regs.w(reg, 0xFFFFFFFF)
            regs.w(reg, 0)
        regs.kick(0)
        n += 1
    print("empty transports written: %d" % n)


def unbind(names):
    for name in names:
        with open(os.path.join(DRIVERS, "unbind"), "w") as f:
            f.write(name)


def bound_transports():
    return sorted(n for n in os.listdir(DRIVERS) if n.startswith("LNRO"))


def reset_nic():
    """The NIC's transport unbound alone: its driver resets the device."""
    lock_everything()
    for name in bound_transports():
        for child in os.listdir(os.path.join(DRIVERS, name)):
            if child.startswith("virtio"):
                with open(os.path.join(DRIVERS, name, child, "device")) as f:
                    if int(f.read(), 16) == NET:
                        say("resetting the NIC (%s)" % name)
                        unbind([name])
    say("POKE-DONE reset_nic")


def ring_setup(regs, page, queue):
    regs.w(STATUS, 0)
    regs.w(STATUS, 1 | 2)                  # ACKNOWLEDGE | DRIVER
    regs.w(GUEST_PAGE_SIZE, 4096)
    regs.w(QUEUE_SEL, queue)
    regs.w(QUEUE_NUM, QN)
    regs.w(QUEUE_ALIGN, ALIGN)
    regs.w(QUEUE_PFN, page.phys // 4096)
    regs.w(STATUS, 1 | 2 | 4)              # DRIVER_OK


def desc(page, i, addr, length, flags, nxt):
    struct.pack_into("<QIHH", page.buf, i * 16, addr, length, flags, nxt)


def offer(page, heads, idx=None):
    for n, head in enumerate(heads):
        struct.pack_into("<H", page.buf, AVAIL + 4 + 2 * (n % QN), head)
    struct.pack_into("<HH", page.buf, AVAIL, 0, len(heads) if idx is None else idx)


# The attacks: regs of one transport, its device id, a page for rings.

def status_garbage(regs, dev, page):
    for v in (0xFF, 0, 0x7F, 0x80, 0xFFFFFFFF, 4, 0x40):
        regs.w(STATUS, v)
        regs.kick(0)


def queue_select_out_of_range(regs, dev, page):
    for q in (QN, 1023, 1024, 0xFFFF, 0x10000, 0xFFFFFFFF):
        regs.w(QUEUE_SEL, q)
        regs.w(QUEUE_NUM, 0xFFFFFFFF)
        regs.w(QUEUE_ALIGN, 0)
        regs.w(QUEUE_PFN, 0xFFFFFFFF)
        regs.w(QUEUE_READY, 1)
        regs.r(QUEUE_NUM_MAX)
        regs.kick(q)
    regs.w(STATUS, 7)
    for q in (3, 0xFFFF, 0xFFFFFFFF):
        regs.kick(q)


def ring_outside_ram(regs, dev, page):
    """Rings placed past the end of RAM, on the transports, on the local
    APIC; page sizes 0 (a shift of 32), 1 and 2 GiB."""
    for pfn in (0xFFFFF, OUTSIDE_RAM >> 12, BASE >> 12, regs.phys >> 12, 0xFEE00):
        for page_size in (4096, 0, 1, 0x80000000):
            regs.w(STATUS, 3)
            regs.w(GUEST_PAGE_SIZE, page_size)
            regs.w(QUEUE_SEL, 0)
            regs.w(QUEUE_NUM, 256)
            regs.w(QUEUE_PFN, pfn)
            regs.w(STATUS, 7)
            regs.kick(0)
            regs.kick(1)


def buffers_outside_ram(regs, dev, page):
    for q in (0, 1):
        ring_setup(regs, page, q)
        desc(page, 0, OUTSIDE_RAM, 0x1000, DESC_NEXT, 1)
        desc(page, 1, 0xFFFFFFFFFFFFF000, 0xFFFFFFFF, DESC_WRITE, 0)
        desc(page, 2, 0, 0xFFFFFFFF, 0, 0)
        offer(page, [0, 2])
        regs.kick(q)


def descriptor_loop(regs, dev, page):
    """Chains that loop, an indirect table that is the ring itself, heads
    past the table."""
    for q in (0, 1):
        ring_setup(regs, page, q)
        desc(page, 0, page.phys + DATA, 64, DESC_NEXT, 1)
        desc(page, 1, page.phys + DATA, 64, DESC_NEXT, 0)
        desc(page, 2, page.phys + DATA, 64, DESC_NEXT | DESC_WRITE, 2)
        desc(page, 3, page.phys, 16 * QN, DESC_INDIRECT, 0)
        offer(page, [0, 2, 3, QN + 1, 0xFFFF])
        regs.kick(q)


def runaway_index(regs, dev, page):
    for idx in (QN + 1, 0x8000, 0xFFFF):
        ring_setup(regs, page, 0)
        desc(page, 0, page.phys + DATA, 16, 0, 0)
        offer(page, [0] * QN, idx=idx)
        regs.kick(0)


def dma_into_own_registers(regs, dev, page):
    """The device's buffers are its own registers: it writes into (or
    reads from) the transport while it serves the queue. For the disk a
    read of sector 0 (zeros: every register reset) into its own Status
    and QueueNotify, offered over and over."""
    for q in (0, 1):
        ring_setup(regs, page, q)
        struct.pack_into("<IIQ", page.buf, DATA, BLK_IN, 0, 0)
        desc(page, 0, page.phys + DATA, 16, DESC_NEXT, 1)
        desc(page, 1, regs.phys, 512, DESC_NEXT | DESC_WRITE, 2)
        desc(page, 2, regs.phys + QUEUE_NOTIFY, 4, DESC_WRITE, 0)
        desc(page, 3, regs.phys + QUEUE_NOTIFY, 4, DESC_NEXT, 4)
        desc(page, 4, regs.phys + STATUS, 4, DESC_WRITE, 0)
        offer(page, [0, 3] * (QN // 2), idx=0xFFF0)
        regs.kick(q)


def config_garbage(regs, dev, page):
    for off in range(CONFIG, SLOT, 4):
        regs.w(off, 0xFFFFFFFF)
    for off in range(CONFIG, SLOT):
        regs.mem[regs.off + off] = 0x41
    regs.w(HOST_FEATURES_SEL, 0xFFFFFFFF)
    regs.w(GUEST_FEATURES_SEL, 1)
    regs.w(GUEST_FEATURES, 0xFFFFFFFF)
    regs.w(INTERRUPT_ACK, 0xFFFFFFFF)
    regs.w(STATUS, 7)
    regs.kick(0)


def blk_write_past_end(regs, dev, page):
    """Write requests the guest kernel would never send: at the disk's
    last sector and past it, at 2^63 and at 2^64-1 sectors, on every disk
    (the root and the volume slots). Each one's status byte (0 done, 1 I/O
    error) is reported."""
    if dev != BLK:
        return
    capacity = regs.r(CONFIG) | regs.r(CONFIG + 4) << 32
    # An empty volume slot (capacity 0) has no last sector.
    sectors = [s for s in (capacity, capacity - 1, 1 << 63, (1 << 64) - 1) if s >= 0]
    ring_setup(regs, page, 0)
    for i, sector in enumerate(sectors):
        header, status = DATA + 16 * i, DATA + 256 + i
        struct.pack_into("<IIQ", page.buf, header, BLK_OUT, 0, sector)
        page.buf[status] = 0xEE
        desc(page, 3 * i, page.phys + header, 16, DESC_NEXT, 3 * i + 1)
        desc(page, 3 * i + 1, page.phys + 3072, 1024, DESC_NEXT, 3 * i + 2)
        desc(page, 3 * i + 2, page.phys + status, 1, DESC_WRITE, 0)
    offer(page, [3 * i for i in range(len(sectors))])
    regs.kick(0)
    time.sleep(1)
    say("device status %#x, used index %d" % (regs.r(STATUS),
                                              struct.unpack_from("<H", page.buf, USED + 2)[0]))
    for i, sector in enumerate(sectors):
        say("write at sector %d of %d: status %d" % (sector, capacity, page.buf[DATA + 256 + i]))


ATTACKS = {f.__name__: f for f in (status_garbage, queue_select_out_of_range,
                                   ring_outside_ram, buffers_outside_ram, descriptor_loop,
                                   runaway_index, dma_into_own_registers, config_garbage,
                                   blk_write_past_end)}


def lock_everything():
    """Everything this process maps stays in memory: once the disk's
    driver is unbound, a page of python read from disk is a SIGBUS."""
    if ctypes.CDLL(None).mlockall(1 | 2) != 0:  # MCL_CURRENT | MCL_FUTURE
        raise OSError("mlockall")


def attack(names):
    """The attacks in order, on every device, each between "POKE-START
    name" and "POKE-DONE name"."""
    page = Page()
    lock_everything()
    unbind(bound_transports())
    say("unbound every virtio-mmio driver")
    mem = devmem(BASE, SLOTS * SLOT)
    for name in names:
        say("POKE-START %s" % name)
        for slot in range(SLOTS):
            regs = Regs(mem, slot * SLOT, BASE + slot * SLOT)
            dev = regs.r(DEVICE_ID) if regs.r(MAGIC_R) == MAGIC else 0
            if dev in DEVICE_NAMES:
                say("%s on %s (slot %d)" % (name, DEVICE_NAMES[dev], slot))
                ATTACKS[name](regs, dev, page)
                time.sleep(0.2)
        say("POKE-DONE %s" % name)


def main():
    verb = sys.argv[1]
    if verb in ("probe", "empty_slots", "rom_hash", "rom", "hpet"):
        globals()[verb]()
        return
    time.sleep(0.5)  # the exec that started us ends before the channel goes
    if verb == "reset_nic":
        reset_nic()
    else:
        attack(sys.argv[1:])


if __name__ == "__main__":
    main()
