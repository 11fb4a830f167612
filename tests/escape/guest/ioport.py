#!/usr/bin/env python3
"""I/O port writes from a root process (iopl, then in/out instructions:
the guest kernel has no /dev/port), run in a sandbox by
tests/escape/test_guest_mmio.c and test_guest_power.c.

usage: ioport.py ATTACK      (ATTACK: see ATTACKS below)

Prints "ports-done ATTACK" when every write was made."""
import ctypes
import mmap
import struct
import sys

from guestmem import Page

libc = ctypes.CDLL(None, use_errno=True)
_code = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)


def _function(offset, machine_code, restype, *argtypes):
    _code[offset:offset + len(machine_code)] = machine_code
    address = ctypes.addressof(ctypes.c_char.from_buffer(_code)) + offset
    return ctypes.CFUNCTYPE(restype, *argtypes)(address)


# System V: port in edi, value in esi.
outb = _function(0, b"\x89\xfa\x89\xf0\xee\xc3", None, ctypes.c_uint, ctypes.c_uint)
outl = _function(16, b"\x89\xfa\x89\xf0\xef\xc3", None, ctypes.c_uint, ctypes.c_uint)
inb = _function(32, b"\x89\xfa\x31\xc0\xec\xc3", ctypes.c_uint, ctypes.c_uint)

PATTERNS = (0xFF, 0x00, 0xAA, 0x55, 0x80)


def legacy_garbage():
    """PIC, PIT, ISA DMA, CMOS, the UART (divisor 0, loopback) and the CGA
    index: every byte pattern to every port of each."""
    ports = ([0x20, 0x21, 0xA0, 0xA1, 0x40, 0x41, 0x42, 0x43, 0x61, 0x80]
             + list(range(0x00, 0x10)) + list(range(0x81, 0x90)) + list(range(0xC0, 0xE0))
             + [0x70, 0x71] + list(range(0x3F8, 0x400)) + [0x3D4, 0x3D5])
    for port in ports:
        for value in PATTERNS:
            outb(port, value)
        inb(port)


FW_CFG_SELECTOR, FW_CFG_DATA, FW_CFG_DMA = 0x510, 0x511, 0x514
FW_CFG_DMA_ERROR, FW_CFG_DMA_READ, FW_CFG_DMA_SKIP = 0x01, 0x02, 0x04
FW_CFG_DMA_SELECT, FW_CFG_DMA_WRITE = 0x08, 0x10
VIRTIO_DISK_REGS = 0xFEB02E00
OUTSIDE_RAM = 0xDEAD00000000


def fw_cfg_dma(where):
    outl(FW_CFG_DMA, _bswap32(where >> 32))
    outl(FW_CFG_DMA + 4, _bswap32(where & 0xFFFFFFFF))   # the low half starts it


def fw_cfg_garbage():
    """QEMU's firmware configuration device: every selector, data writes,
    and DMA requests whose buffer lies outside RAM or on the disk's
    virtio-mmio registers, whose descriptor lies there, or that write."""
    for key in list(range(0, 0x40)) + [0x4000, 0x8000, 0xC000, 0xFFFF]:
        outl(FW_CFG_SELECTOR, key)
        for _ in range(8):
            inb(FW_CFG_DATA)
            outb(FW_CFG_DATA, 0x41)
    page = Page()
    requests = ((FW_CFG_DMA_READ | FW_CFG_DMA_SELECT | 0x19 << 16, 0xFFFFFFFF, OUTSIDE_RAM),
                (FW_CFG_DMA_READ | FW_CFG_DMA_SELECT | 0x19 << 16, 512, VIRTIO_DISK_REGS),
                (FW_CFG_DMA_WRITE | FW_CFG_DMA_SELECT | 0x19 << 16, 64, page.phys + 2048),
                (FW_CFG_DMA_SKIP, 0xFFFFFFFF, 0),
                (0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFFFFFFF000))
    for control, length, target in requests:
        struct.pack_into(">IIQ", page.buf, 0, control, length, target)
        fw_cfg_dma(page.phys)
        print("fw_cfg dma %#x len %#x to %#x: control now %#x" % (
            control, length, target, struct.unpack_from(">I", page.buf, 0)[0]))
    for where in (OUTSIDE_RAM, VIRTIO_DISK_REGS, 0):
        fw_cfg_dma(where)


def _bswap32(v):
    return int.from_bytes(v.to_bytes(4, "little"), "big")


def reset_ports():
    """The PC's reset paths: the keyboard controller, the PCI reset
    register, port 0x92's fast reset."""
    outb(0x64, 0xFE)
    outb(0xCF9, 0x06)
    outb(0x92, 0x01)


ATTACKS = {f.__name__: f for f in (legacy_garbage, fw_cfg_garbage, reset_ports)}


def main():
    if libc.iopl(3) != 0:
        errno = ctypes.get_errno()
        print("iopl: %s" % __import__("os").strerror(errno))
        sys.exit(2)
    ATTACKS[sys.argv[1]]()
    print("ports-done %s" % sys.argv[1])


if __name__ == "__main__":
    main()
