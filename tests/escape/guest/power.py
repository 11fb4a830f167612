#!/usr/bin/env python3
"""The guest ends or stops its own machine, as root, run detached in a
sandbox by tests/escape/test_guest_power.c (the image has no reboot or
halt programs: reboot(2) directly).

usage: power.py reboot|poweroff|halt|panic|suspend"""
import ctypes
import os
import sys
import time

REBOOT_COMMANDS = {"reboot": 0x01234567, "poweroff": 0x4321FEDC, "halt": 0xCDEF0123}


def main():
    verb = sys.argv[1]
    time.sleep(0.5)  # the exec that started us ends first
    os.sync()
    if verb in REBOOT_COMMANDS:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.reboot(ctypes.c_int(REBOOT_COMMANDS[verb] - (1 << 32)
                                 if REBOOT_COMMANDS[verb] >= 1 << 31 else REBOOT_COMMANDS[verb]))
        print("reboot(%s): %s" % (verb, os.strerror(ctypes.get_errno())))
    elif verb == "panic":
        with open("/proc/sysrq-trigger", "w") as f:
            f.write("c")
    elif verb == "suspend":
        with open("/sys/power/state", "w") as f:
            f.write("mem")
        print("suspend returned")


if __name__ == "__main__":
    main()
