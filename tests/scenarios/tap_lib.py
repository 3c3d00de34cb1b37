# SPDX-License-Identifier: GPL-2.0
"""What every scenario tool prints and checks: TAP output, payload
patterns, and the driver's fields "rdma resource show -dd" prints.
Standard library only, and quick to import: verbs_lib.py, which also
imports rdma-core's test package, builds on it.
"""

import re
import subprocess
import sys

_counts = {"pass": 0, "fail": 0}


def tap(ok, what, why=None):
    """Report one TAP test point; why explains a failure. Returns ok."""
    n = _counts["pass"] + _counts["fail"] + 1
    _counts["pass" if ok else "fail"] += 1
    print("%s %d - %s" % ("ok" if ok else "not ok", n, what))
    if not ok and why:
        print("#   " + str(why))
    sys.stdout.flush()
    return ok


def tap_done():
    """Print the plan and the summary; return the exit status."""
    print("1..%d" % (_counts["pass"] + _counts["fail"]))
    print("# %d passed, %d failed" % (_counts["pass"], _counts["fail"]))
    return 1 if _counts["fail"] else 0


def pattern(seed, size):
    """size bytes that differ with seed, with the offset, and from one 4 KiB
    page to the next, so that a byte or a page out of place shows (rdma-core's
    validate() checks a message of one repeated letter)."""
    return bytes((seed * 131 + i * 7 + (i >> 8) + (i >> 12) * 29) & 0xff
                 for i in range(size))


def differs(got, want):
    """None when got is want, else where the first byte differs."""
    if got == want:
        return None
    if len(got) != len(want):
        return "%d bytes, expected %d" % (len(got), len(want))
    return "payload differs from offset %d" % next(
        i for i in range(len(want)) if got[i] != want[i])


def rdma_res(kind, *filt):
    """The driver's fields of the resources "rdma resource show" lists,
    one dict per object ("name value" pairs, numbers as ints, the
    driver's without rdma's "drv_" prefix), and the output."""
    run = subprocess.run(["rdma", "resource", "show", kind, *filt, "-dd"],
                         capture_output=True, text=True)
    objs = []
    for line in run.stdout.splitlines():
        if line.startswith(("link ", "dev ")):
            objs.append({})
        if not objs:
            continue
        words = line.split()
        for k, v in zip(words, words[1:]):
            if re.fullmatch(r"(0x[0-9a-f]+|\d+)", v):
                v = int(v, 0)
            objs[-1].setdefault(k[4:] if k.startswith("drv_") else k, v)
    return objs, run.stdout + run.stderr
