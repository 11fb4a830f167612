"""Guest-physical memory for the escape suite's device attempts: a page
of this process, locked, and its guest-physical address (root reads the
frame number from /proc/self/pagemap), to hand to a device as a ring or a
DMA descriptor."""
import ctypes
import mmap
import struct

PAGE = 4096
_libc = ctypes.CDLL(None, use_errno=True)


class Page:
    def __init__(self):
        self.buf = mmap.mmap(-1, PAGE, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        self.buf[0:PAGE] = bytes(PAGE)
        addr = ctypes.addressof(ctypes.c_char.from_buffer(self.buf))
        if _libc.mlock(ctypes.c_void_p(addr), ctypes.c_size_t(PAGE)) != 0:
            raise OSError(ctypes.get_errno(), "mlock")
        with open("/proc/self/pagemap", "rb") as f:
            f.seek(addr // PAGE * 8)
            entry = struct.unpack("<Q", f.read(8))[0]
        if not entry >> 63:
            raise OSError("page not present")
        self.phys = (entry & ((1 << 55) - 1)) * PAGE
