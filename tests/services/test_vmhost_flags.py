#!/usr/bin/env python3
"""Bad numbers to vmhost's flags are refused at start, naming the flag and
the value, before anything is made (exit 2, nothing left running): the
pool's floor and ceiling, the pool's memory, the jail's uids, the node's
budget.

usage: test_vmhost_flags.py AIRLOCK_VMHOST"""
import subprocess
import sys
import unittest

VMHOST = sys.argv[1]
sys.argv[1:] = []

BAD = [
    ("--warm-pool", "abc"), ("--warm-pool", "-1"), ("--warm-pool", ""),
    ("--warm-pool-max", "3x"), ("--warm-pool-max", "99999999999"),
    ("--warm-pool-spares", "two"), ("--warm-pool-spares", "17"),
    ("--parallel-creates", "-1"), ("--parallel-creates", "1025"),
    ("--pool-memory-mib", "0"), ("--jail-uid-base", "0"), ("--node-cpus", "0"),
    ("--node-memory-mb", "12"),
]


class VmhostFlags(unittest.TestCase):
    def test_bad_numbers_refused_naming_the_flag(self):
        for flag, value in BAD:
            with self.subTest(flag=flag, value=value):
                r = subprocess.run([VMHOST, "serve", flag, value], capture_output=True, text=True,
                                   timeout=30)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn(flag, r.stderr)
                self.assertIn('"%s"' % value, r.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
