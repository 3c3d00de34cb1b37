#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""tests/bench/hostcpu.py against a stand-in guest, as TAP.

    hostcpu_test.py

Starts hostcpu.py on a scratch boot directory, with a process standing in
for VM a's QEMU (its command line names the boot directory's console-a.log
as QEMU's does) that burns CPU between two requests, and no VM b. Checks
that each request is answered, in the format twovm.sh reads, with the
stand-in's CPU time growing by what it burnt and VM b's missing. Ends
with one line "N passed, N failed".
"""

import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
N = [0, 0]

# The stand-in: spins for half a second of CPU time whenever the file
# "spin" exists in its directory.
STANDIN = r"""
import os, sys, time
d = sys.argv[1]
while not os.path.exists(os.path.join(d, "stop")):
    if os.path.exists(os.path.join(d, "spin")):
        end = time.process_time() + 0.5
        while time.process_time() < end:
            pass
        os.unlink(os.path.join(d, "spin"))
    time.sleep(0.01)
"""


def check(ok, name, detail=""):
    N[0 if ok else 1] += 1
    print("%sok %d - %s" % ("" if ok else "not ", sum(N), name))
    if not ok and detail:
        print("\n".join("# " + line for line in str(detail).splitlines()))


def ask(sync, tag, limit=5.0):
    """Publish a request as the guests' put does; the answer's fields."""
    name = "val.hostcpu." + tag
    tmp = os.path.join(sync, ".%s.a" % name)
    with open(tmp, "w") as f:
        f.write("1\n")
    os.rename(tmp, os.path.join(sync, name))
    answer = os.path.join(sync, name + ".at")
    end = time.time() + limit
    while time.time() < end:
        if os.path.exists(answer):
            with open(answer) as f:
                return f.read().split()
        time.sleep(0.02)
    return None


def main():
    print("TAP version 13")
    with tempfile.TemporaryDirectory() as d:
        sync = os.path.join(d, "sync", "cmd")
        os.makedirs(sync)
        standin = subprocess.Popen(
            [sys.executable, "-c", STANDIN, d,
             "file:%s/console-a.log" % d])
        watch = subprocess.Popen([sys.executable,
                                  os.path.join(HERE, "hostcpu.py"), d])
        try:
            first = ask(sync, "pair1.0")
            check(first is not None and len(first) == 4,
                  "a request is answered with four figures", first)
            first = first or ["x"] * 4
            check(all(v.isdigit() for v in first[:3]) and first[3] == "-",
                  "host busy and idle ticks and VM a's QEMU time are "
                  "numbers; VM b, which does not run, is \"-\"", first)
            open(os.path.join(d, "spin"), "w").close()
            end = time.time() + 10
            while os.path.exists(os.path.join(d, "spin")) and \
                    time.time() < end:
                time.sleep(0.05)
            second = ask(sync, "pair1.1") or ["x"] * 4
            ok = all(v.isdigit() for v in first[:3] + second[:3])
            grew = int(second[2]) - int(first[2]) if ok else 0
            check(ok and 0.4e9 <= grew <= 5e9,
                  "the stand-in's CPU time grew by the half second it "
                  "spun (%.2f s)" % (grew / 1e9), (first, second))
            check(ok and int(second[0]) - int(first[0]) >= 40,
                  "the host's busy ticks grew with it", (first, second))
            answers = sorted(n for n in os.listdir(sync)
                             if n.endswith(".at"))
            check(answers == ["val.hostcpu.pair1.0.at",
                              "val.hostcpu.pair1.1.at"],
                  "one answer a request, none for an answer", answers)
        finally:
            open(os.path.join(d, "stop"), "w").close()
            watch.kill()
            watch.wait()
            standin.wait(timeout=10)
    print("%d passed, %d failed" % tuple(N))
    return 1 if N[1] else 0


if __name__ == "__main__":
    sys.exit(main())
