#!/usr/bin/env python3
"""The guest's clock and entropy, tampered with as root, run in a sandbox
by tests/escape/test_guest_clock_entropy.c.

usage: clock_entropy.py rtc_set YEAR       RTC_SET_TIME: Jan 1st of YEAR
       clock_entropy.py rtc_year           RTC_RD_TIME's year
       clock_entropy.py adjtimex           frequency +500 ppm, tick +10 %, offset +1e6 s
       clock_entropy.py rtc_irq SECONDS    periodic RTC interrupts at 8192 Hz
       clock_entropy.py tamper             RNDADDENTROPY of zeros, RNDZAPENTCNT,
                                           RNDCLEARPOOL, zeros into /dev/(u)random
       clock_entropy.py random             32 bytes of getrandom(2), hex"""
import ctypes
import fcntl
import os
import struct
import sys
import time

RTC = "/dev/rtc0"
RTC_RD_TIME, RTC_SET_TIME = 0x80247009, 0x4024700A
RTC_IRQP_SET, RTC_PIE_ON, RTC_PIE_OFF = 0x4008700C, 0x7005, 0x7006
RNDADDENTROPY, RNDZAPENTCNT, RNDCLEARPOOL = 0x40085203, 0x5204, 0x5206
ADJ_FREQUENCY, ADJ_SETOFFSET, ADJ_TICK = 0x0002, 0x0100, 0x4000


class Timeval(ctypes.Structure):
    _fields_ = [("sec", ctypes.c_long), ("usec", ctypes.c_long)]


class Timex(ctypes.Structure):
    _fields_ = ([("modes", ctypes.c_uint), ("offset", ctypes.c_long), ("freq", ctypes.c_long),
                 ("maxerror", ctypes.c_long), ("esterror", ctypes.c_long),
                 ("status", ctypes.c_int), ("constant", ctypes.c_long),
                 ("precision", ctypes.c_long), ("tolerance", ctypes.c_long),
                 ("time", Timeval), ("tick", ctypes.c_long), ("ppsfreq", ctypes.c_long),
                 ("jitter", ctypes.c_long), ("shift", ctypes.c_int), ("stabil", ctypes.c_long),
                 ("jitcnt", ctypes.c_long), ("calcnt", ctypes.c_long),
                 ("errcnt", ctypes.c_long), ("stbcnt", ctypes.c_long), ("tai", ctypes.c_int)]
                + [("pad%d" % i, ctypes.c_int) for i in range(11)])


def rtc_set(year):
    tm = struct.pack("9i", 0, 0, 0, 1, 0, int(year) - 1900, 0, 0, 0)
    with open(RTC, "wb") as f:
        fcntl.ioctl(f, RTC_SET_TIME, tm)
    print("rtc set")


def rtc_year():
    with open(RTC, "rb") as f:
        tm = fcntl.ioctl(f, RTC_RD_TIME, bytes(36))
    print("rtc year %d" % (struct.unpack("9i", tm)[5] + 1900))


def adjtimex():
    libc = ctypes.CDLL(None, use_errno=True)
    tx = Timex(modes=ADJ_FREQUENCY | ADJ_TICK, freq=500 << 16, tick=11000)
    rc = libc.adjtimex(ctypes.byref(tx))
    step = Timex(modes=ADJ_SETOFFSET, time=Timeval(1000000, 0))
    rc2 = libc.adjtimex(ctypes.byref(step))
    print("adjtimex %s %s" % ("ok" if rc >= 0 else "failed", "ok" if rc2 >= 0 else "failed"))


def rtc_irq(seconds):
    fd = os.open(RTC, os.O_RDONLY)
    fcntl.ioctl(fd, RTC_IRQP_SET, 8192)
    fcntl.ioctl(fd, RTC_PIE_ON, 0)
    n, end = 0, time.monotonic() + float(seconds)
    while time.monotonic() < end:
        os.read(fd, 8)
        n += 1
    fcntl.ioctl(fd, RTC_PIE_OFF, 0)
    print("rtc interrupts %d" % n)


def tamper():
    with open("/dev/random", "wb") as f:
        fcntl.ioctl(f, RNDADDENTROPY, struct.pack("ii", 4096, 512) + bytes(512))
        fcntl.ioctl(f, RNDZAPENTCNT, 0)
        fcntl.ioctl(f, RNDCLEARPOOL, 0)
    for dev in ("/dev/random", "/dev/urandom"):
        with open(dev, "wb") as f:
            f.write(bytes(1 << 20))
    print("tampered")


def random():
    print(os.getrandom(32).hex())


def main():
    verbs = {f.__name__: f for f in (rtc_set, rtc_year, adjtimex, rtc_irq, tamper, random)}
    verbs[sys.argv[1]](*sys.argv[2:])


if __name__ == "__main__":
    main()
