#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Answer the benchmark guests' requests for the host's CPU time.

usage: hostcpu.py BOOTDIR

While the two guests of BOOTDIR run, VM a asks before and after each run
(tests/bench/twovm.sh, host_mark) by publishing val.hostcpu.TAG in the
guests' sync directory, BOOTDIR/sync/cmd, and waits for
val.hostcpu.TAG.at. This answers each request at once with one line of
four figures, read at the moment of answering:

  BUSY IDLE QEMU_A QEMU_B

BUSY and IDLE are the host's busy and idle time over all its CPUs since
boot (/proc/stat, in clock ticks), QEMU_A and QEMU_B the CPU time of each
guest's QEMU process, all its threads (vCPUs and device emulation), in
nanoseconds (schedstat). Under TCG a guest's every instruction is the
host's work, so the two QEMUs' time is what a run cost the host, a
polling process's spin included, and the host's busy share says whether
its CPUs were the limit. Runs until killed.
"""

import os
import sys
import time

# Polling the directory costs the host a little of the time it measures;
# 50 ms keeps an answer inside the guest's own 100 ms poll.
POLL = 0.05
PREFIX = "val.hostcpu."
ANSWER = ".at"


def host_ticks():
    """(busy, idle) clock ticks of all the host's CPUs since boot."""
    with open("/proc/stat") as f:
        for line in f:
            if line.startswith("cpu "):
                t = [int(v) for v in line.split()[1:]]
                idle = t[3] + t[4]  # idle, iowait
                return sum(t[:8]) - idle, idle
    return 0, 0


def qemu_ns(pid):
    """CPU time of every thread of PID, in ns; None once it is gone."""
    total = 0
    try:
        tasks = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return None
    for tid in tasks:
        try:
            with open("/proc/%d/task/%s/schedstat" % (pid, tid)) as f:
                total += int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass  # a thread that just exited
    return total


def find_qemus(bootdir):
    """{role: pid} of the QEMUs whose serial console is in BOOTDIR."""
    found = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                args = f.read().split(b"\0")
        except OSError:
            continue
        for role in ("a", "b"):
            want = ("file:%s/console-%s.log" % (bootdir, role)).encode()
            if want in args:
                found[role] = int(pid)
    return found


def answer(sync, name, pids):
    busy, idle = host_ticks()
    cpu = [qemu_ns(pids[r]) if r in pids else None for r in ("a", "b")]
    line = "%d %d %s %s\n" % (busy, idle, *("-" if c is None else c
                                           for c in cpu))
    tmp = os.path.join(sync, "." + name + ANSWER)
    with open(tmp, "w") as f:
        f.write(line)
    os.rename(tmp, os.path.join(sync, name + ANSWER))


def main():
    bootdir = os.path.abspath(sys.argv[1])
    sync = os.path.join(bootdir, "sync", "cmd")
    pids, done = {}, set()
    while True:
        time.sleep(POLL)
        try:
            names = os.listdir(sync)
        except OSError:
            continue
        for name in names:
            if (not name.startswith(PREFIX) or name.endswith(ANSWER) or
                    name in done):
                continue
            if len(pids) < 2:
                pids = find_qemus(bootdir)
            answer(sync, name, pids)
            done.add(name)


if __name__ == "__main__":
    main()
