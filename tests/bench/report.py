#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Host side of tests/bench.sh: the guests' figures as tables and a plot.

    report.py RESULTS.TSV OUTDIR HEADER [SCALING.TSV]

RESULTS.TSV holds the BENCH lines of tests/bench/twovm.sh without their
first field: MTU, stack, test, X, metric, value. A figure measured in
several rounds is reported as the median of those that did not fail.
SCALING.TSV, when given, holds the SCALE lines of tests/bench/scaling.sh
the same way (MTU, stack, test, bytes, flows, metric, value); they add a
section "Two vCPUs" (or as many as the guests had) at the end.
The Markdown report goes
to stdout (HEADER, a file, is copied first); OUTDIR gets bench.png, drawn
by gnuplot when it is installed, and the data files it was drawn from.
"""

import os
import subprocess
import sys

STACKS = ("sroce", "sroce1", "rxe", "tcp")
LABEL = {"sroce": "sroce", "sroce1": "sroce1", "rxe": "rxe", "tcp": "TCP"}
RDMA = ("sroce", "sroce1", "rxe")
# The parameters that batch, read back from each sroce stack.
BATCH_PARAMS = ("tx_burst", "ack_coalesce", "ack_hold_us")
# The TCP run each RDMA test is compared with.
TCP_BW = "iperf3"
TCP_LAT = "qperf_tcp_lat"
# The link's floors: stack, test.
ICMP = ("floor", "icmp_echo")
UDP = ("udp", "iperf3_udp")
LINK = ("link", "pktgen")


EVENT_NOTE = (
    "ib_send_bw_event, ib_read_bw_event: ib_send_bw -e and ib_read_bw -e, "
    "the side that receives the payload (SEND's receiver, READ's "
    "requester) sleeping on completion events instead of polling the CQ, "
    "as TCP's iperf3 sleeps in read(). The other perftest runs poll, and "
    "in a guest with one vCPU the receiver's polling takes CPU time from "
    "the softirq that receives (Documentation/performance.rst, \"A "
    "polling receiver\" and \"A polling requester\").")


def num(v):
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return x if x > 0 else None


def show(v):
    return "-" if v is None or v == "" else v


def ratio(a, b):
    a, b = num(a), num(b)
    return "%.2f" % (a / b) if a and b else "-"


def gib_cost(vals, key):
    """Kernel CPU seconds of both guests per GiB moved."""
    cpu = num(vals.get(key + ("cpu_kern",)))
    moved = num(vals.get(key + ("bytes",)))
    if cpu is None:
        # No kernel time measured in a run that moved data: below the
        # clock tick.
        return "0" if moved else "-"
    return "%.2f" % (cpu / (moved / 2**30)) if moved else "-"


def ordered(rows, pick):
    seen, out = set(), []
    for r in rows:
        k = pick(r)
        if k is not None and k not in seen:
            seen.add(k)
            out.append(k)
    return out


def floor_of(vals, mrows, key, metric):
    """(X, value) of a floor at one MTU, (None, None) when it did not run."""
    for r in mrows:
        if (r[1], r[2]) == key and r[4] == metric:
            return r[3], vals.get((r[0],) + key + (r[3], metric))
    return None, None


def link_floor(vals, mtu, x, mibps):
    """The sentence on the frame-rate floor (pktgen) at one MTU."""
    if not num(mibps):
        return "Link, frames from VM a's packet generator: %s." % show(mibps)
    key = (mtu,) + LINK + (x,)
    text = ("Link, the frame-rate floor: VM a's kernel packet generator "
            "(pktgen, no socket or RDMA stack) sent %s frames of netdev MTU "
            "size, VM b's driver counted %s, at %s a second; at one "
            "%s-byte RoCE payload per frame that is %s MiB/s, the most any "
            "RoCE stack could move over this link. The ratio sroce/link is "
            "against it." % (show(vals.get(key + ("sent_frames",))),
                             show(vals.get(key + ("frames",))),
                             show(vals.get(key + ("frames_per_s",))),
                             x, mibps))
    tcp = [num(v) for k, v in vals.items()
           if k[:3] == (mtu, "tcp", TCP_BW) and k[4] == "MiBps"]
    tcp = [t for t in tcp if t]
    if tcp:
        text += (" TCP's fastest run here moved %.2f MiB/s: the link's "
                 "floor is %s times that." % (max(tcp),
                                              ratio(mibps, max(tcp))))
    return text


def combine(values):
    """One figure of several rounds: the median of the numbers."""
    if len(set(values)) == 1:
        return values[0]
    nums = sorted(float(v) for v in values if num(v) is not None)
    if not nums:
        return values[-1]
    n = len(nums)
    m = nums[n // 2] if n % 2 else (nums[n // 2 - 1] + nums[n // 2]) / 2
    return "%.2f" % m


def row(cells):
    return "| " + " | ".join(show(c) for c in cells) + " |"


def align(n_left, n):
    return "|" + "---|" * n_left + "---:|" * (n - n_left)


def read_tsv(path, fields):
    """The lines of PATH with FIELDS fields, and their figures: the values
    of each key (every field but the last), the rounds in order."""
    rows = []
    with open(path) as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) == fields:
                rows.append(parts)
    figures = {}
    for r in rows:
        figures.setdefault(tuple(r[:-1]), []).append(r[-1])
    return rows, figures


def per_cpu(vals, key, metric, vm):
    """A per-CPU figure of one VM as "CPU0/CPU1/...", "-" when absent."""
    out = []
    while key + ("%s_%s%d" % (metric, vm, len(out)),) in vals:
        v = vals[key + ("%s_%s%d" % (metric, vm, len(out)),)]
        # Counts stay whole when several rounds were combined.
        if metric == "netrx" and num(v):
            v = "%d" % round(float(v))
        out.append(v)
    return "/".join(out) if out else "-"


def scaling(path):
    """The section of the scaling boot: one flow against N."""
    rows, figures = read_tsv(path, 7)
    vals = {k: combine(v) for k, v in figures.items()}
    n = vals.get(("0", "host", "vcpus", "0", "0", "count"))
    out = []
    w = out.append
    w("")
    if not n:
        w("## Scaling")
        w("")
        w("The scaling boot printed no figures.")
        return out
    many, procs = n, n + "p"
    w("## %s vCPUs" % ("Two" if n == "2" else n))
    w("")
    w("A second boot of the two guests with %s vCPUs each, on a host of %d "
      "CPUs, virtio-net with one queue pair. Each stack moves the same "
      "bytes as 1 flow, as %s flows driven by one process (ib_write_bw -q "
      "%s; iperf3 -P %s, one thread), and as %s processes of one flow each "
      "at once. MiB/s: the flows' rates added up (perftest \"BW "
      "average\", iperf3's receiver). CPU: kernel seconds of both guests "
      "per GiB moved." % (n, os.cpu_count() or 0, n, n, n, n))
    mtus = ordered(rows, lambda r: r[0] if r[0] != "0" else None)
    for mtu in mtus:
        mrows = [r for r in rows if r[0] == mtu]
        runs = ordered(mrows, lambda r: (r[1], r[2], r[3])
                       if r[5] == "MiBps" else None)
        ib_mtu = "?"
        for s in RDMA:
            ib_mtu = vals.get((mtu, s, "port", "0", "0", "active_mtu"),
                              ib_mtu)
            if ib_mtu != "?":
                break
        label = dict(LABEL, udp="UDP")
        cols = ["stack", "bytes", "1 flow", "%s flows" % many,
                "%s/1" % many, "%s procs" % many, "%sp/1" % many,
                "CPU 1", "CPU %s" % many, "CPU %sp" % many]
        w("")
        w("### Netdev MTU %s (RoCE active MTU %s)" % (mtu, ib_mtu))
        w("")
        w(row(cols))
        w(align(1, len(cols)))
        for stack, test, x in runs:
            key = (mtu, stack, test, x)
            v = {f: vals.get(key + (f, "MiBps")) for f in ("1", many, procs)}
            w(row([label.get(stack, stack), x, v["1"], v[many],
                   ratio(v[many], v["1"]), v[procs], ratio(v[procs], v["1"])] +
                  [gib_cost(vals, key + (f,)) for f in ("1", many, procs)]))
        w("")
        w("Where the work ran: kernel CPU seconds (system, irq, softirq) and "
          "NET_RX softirqs of each CPU, CPU0/CPU1/..., of VM a (sender) "
          "and VM b (receiver) during each run.")
        cols = ["stack", "bytes", "flows", "a kernel s", "a NET_RX",
                "b kernel s", "b NET_RX"]
        w("")
        w(row(cols))
        w(align(3, len(cols)))
        for stack, test, x in runs:
            for f in ("1", many, procs):
                key = (mtu, stack, test, x, f)
                if key + ("MiBps",) not in vals:
                    continue
                w(row([label.get(stack, stack), x, f] +
                      [per_cpu(vals, key, m, vm) for vm in "ab"
                       for m in ("kern", "netrx")]))
    return out


# What the fast path is measured against (Documentation/performance.rst,
# "Against the targets"): bandwidth at these sizes, latency at the
# smallest size.
TARGET_SIZES = ("65536", "1048576")
BW_TARGET = {"rxe": 3.0, "tcp": 1.5}
LAT_TARGET = {"rxe": 0.5, "tcp": 0.8}
LAT_FLOOR_SLACK = 1.2
QP_SPREAD = 0.2


def span(values, fmt="%.2f"):
    """"LOW to HIGH" (or one figure) of a list of numbers."""
    lo, hi = min(values), max(values)
    return fmt % lo if fmt % lo == fmt % hi else \
        (fmt + " to " + fmt) % (lo, hi)


def verdict(ok):
    return "met" if ok else "not met"


def bw_target(vals, mtu, tests, other, link):
    """One bandwidth target row: sroce against OTHER at TARGET_SIZES."""
    mine, allowed = [], []
    for test in tests:
        for x in TARGET_SIZES:
            s = num(vals.get((mtu, "sroce", test, x, "MiBps")))
            o = num(vals.get((mtu, "tcp", TCP_BW, x, "MiBps")
                             if other == "tcp" else
                             (mtu, other, test, x, "MiBps")))
            if s and o:
                mine.append(s / o)
                if link:
                    allowed.append(link / o)
    if not mine:
        return None
    goal = BW_TARGET[other]
    ok = min(mine) >= goal
    floor = "-"
    if allowed:
        floor = "the link allows %s" % span(allowed)
        short = len([a for a in allowed if a < goal])
        if short:
            floor += "; beyond the link in %d of %d" % (short, len(allowed))
    return ["bandwidth, 64 KiB and 1 MiB: at least %.1f times %s" % (
        goal, LABEL[other]), verdict(ok), span(mine), floor]


def run_figures(vals, key, names, short):
    """The figures NAMES of a run, or with SHORT each less that of its
    short run: the transfer without what every run costs besides it. None
    for a figure missing from either."""
    fig = [num(vals.get(key + (m,))) for m in names]
    if short:
        less = [num(vals.get(key + (m + "_short",))) for m in names]
        fig = [a - b if a is not None and b is not None else None
               for a, b in zip(fig, less)]
    return fig


def transfer(vals, key, short):
    """[kernel CPU seconds of both guests, frames, bytes] of a run, or
    with SHORT of its transfer (run_figures()). None without the CPU time
    or the bytes; frames None where they were not counted."""
    fig = run_figures(vals, key, ("cpu_kern", "frames", "bytes"), short)
    fig = [v if v is not None and v > 0 else None for v in fig]
    return None if fig[0] is None or fig[2] is None else fig


def cpu_target(vals, mtu, tests, short):
    """CPU per GiB against TCP's, of whole runs or (SHORT) of their
    transfers. The floor column splits the ratio into its two factors:
    the cost of a frame against TCP's, and the frames a GiB takes against
    TCP's (a RoCE packet carries a power of two, 1024 bytes at netdev MTU
    1500 where a TCP segment carries 1448, and ACKs are frames too)."""
    mine, per_frame, frames = [], [], []
    for test in tests:
        for x in TARGET_SIZES:
            s = transfer(vals, (mtu, "sroce", test, x), short)
            t = transfer(vals, (mtu, "tcp", TCP_BW, x), short)
            if not (s and t):
                continue
            mine.append((s[0] / s[2]) / (t[0] / t[2]))
            if s[1] and t[1]:
                per_frame.append((s[0] / s[1]) / (t[0] / t[1]))
                frames.append((s[1] / s[2]) / (t[1] / t[2]))
    if not mine:
        return None
    floor = "-"
    if per_frame:
        floor = "per frame %s; frames per GiB %s times TCP's" % (
            span(per_frame), span(frames))
    what = ("of the transfer (a run less a short one)" if short else
            "of whole runs")
    return ["CPU per GiB %s, 64 KiB and 1 MiB: below TCP's (sroce/TCP)" %
            what, verdict(max(mine) < 1), span(mine), floor]


def host_transfer(vals, key):
    """(busy share, both QEMUs' seconds per GiB) of a run's transfer: the
    run less its short run, from the host's figures (tests/bench/
    hostcpu.py). None where the host's or the short run's are missing."""
    busy, idle, qemu, moved = run_figures(
        vals, key, ("host_busy", "host_idle", "host_qemu", "bytes"), True)
    if busy is None or qemu is None or not moved or qemu <= 0 or busy <= 0:
        return None
    total = busy + max(idle or 0, 0)
    return busy / total, qemu / (moved / 2**30)


def host_target(vals, mtu, tests):
    """The host's CPU per GiB against TCP's, where both QEMUs' time bounds
    the bandwidth: with the host's CPUs busy, a stack moves the host's
    CPU time over its cost per GiB, so 1.5 times TCP's bandwidth takes at
    most 1/1.5 of TCP's cost per GiB."""
    mine, busy_s, busy_t = [], [], []
    for test in tests:
        for x in TARGET_SIZES:
            s = host_transfer(vals, (mtu, "sroce", test, x))
            t = host_transfer(vals, (mtu, "tcp", TCP_BW, x))
            if not (s and t):
                continue
            mine.append(s[1] / t[1])
            busy_s.append(100 * s[0])
            busy_t.append(100 * t[0])
    if not mine:
        return None
    goal = 1 / BW_TARGET["tcp"]
    return ["host CPU per GiB of the transfer, 64 KiB and 1 MiB (both "
            "QEMU processes): at most %.2f times TCP's, what %.1f times "
            "TCP's bandwidth takes on a busy host (sroce/TCP)" % (
                goal, BW_TARGET["tcp"]),
            verdict(max(mine) <= goal), span(mine),
            "host busy %s%% in sroce's runs, %s%% in TCP's" % (
                span(busy_s, "%.0f"), span(busy_t, "%.0f"))]


def host_table(vals, mtu, bw, stacks):
    """The section "The host" of one MTU, as lines: for each bandwidth run
    with a short run beside it, the host's busy share and both QEMUs'
    CPU seconds per GiB during the transfer, for each stack."""
    def key(s, test, x):
        return (mtu, "tcp", TCP_BW, x) if s == "tcp" else (mtu, s, test, x)
    lines = []
    for test, x in bw:
        h = {s: host_transfer(vals, key(s, test, x)) for s in stacks}
        if not h["sroce"]:
            continue
        cells = ([test, x] +
                 ["%.0f" % (100 * h[s][0]) if h[s] else "-"
                  for s in stacks] +
                 ["%.2f" % h[s][1] if h[s] else "-" for s in stacks])
        if "tcp" in stacks:
            cells.append("%.2f" % (h["sroce"][1] / h["tcp"][1])
                         if h["tcp"] else "-")
        lines.append(row(cells))
    if not lines:
        return []
    cols = (["test", "bytes"] + ["busy " + LABEL[s] for s in stacks] +
            ["host " + LABEL[s] for s in stacks] +
            (["host sroce/TCP"] if "tcp" in stacks else []))
    return ["", "### The host", "",
            "Under TCG every instruction of a guest is the host's work. "
            "busy: the share of the host's CPUs (all of them, whatever ran "
            "there) busy during the transfer, in percent; host: both QEMU "
            "processes' CPU seconds (the guests' vCPUs, a polling "
            "program's spin included, and the emulated devices) per GiB "
            "moved, lower is better. Both of the transfer: each run less "
            "its short run. Where the host is busy, each stack's bandwidth "
            "is what the host's CPUs give over its host cost per GiB "
            "(Documentation/performance.rst, \"The host's CPUs\").",
            "", row(cols), align(1, len(cols))] + lines


def lat_target(vals, mtu, lat, icmp):
    """Latency at the smallest size: at most 0.5 times rdma_rxe and 0.8
    times TCP, or within 1.2 times the echo floor where that is higher."""
    sizes = [int(x) for t, x in lat]
    if not sizes:
        return None
    x = str(min(sizes))
    mine, ok, floors = [], True, []
    t = num(vals.get((mtu, "tcp", TCP_LAT, x, "lat")))
    for test in ordered(lat, lambda r: r[0]):
        s = num(vals.get((mtu, "sroce", test, x, "t_typical")))
        r = num(vals.get((mtu, "rxe", test, x, "t_typical")))
        if not s or not (r or t):
            continue
        bound = min(b for b in (r and LAT_TARGET["rxe"] * r,
                                t and LAT_TARGET["tcp"] * t) if b)
        if icmp:
            floors.append(s / icmp)
            bound = max(bound, LAT_FLOOR_SLACK * icmp)
        mine.append(s / bound)
        ok = ok and s <= bound
    if not mine:
        return None
    floor = "-"
    if floors:
        floor = "sroce/floor %s" % span(floors)
        # How near the socket stack comes to the same floor.
        if t:
            floor += "; TCP/floor %.2f" % (t / icmp)
    return ["latency, %s bytes: at most %.1f times rxe and %.1f times "
            "TCP, or %.1f times the echo floor if higher (sroce/target)" % (
                x, LAT_TARGET["rxe"], LAT_TARGET["tcp"], LAT_FLOOR_SLACK),
            verdict(ok), span(mine), floor]


def qps_target(vals, mtu, qps):
    one = num(vals.get((mtu, "sroce", "ib_write_bw_qps", "1", "MiBps")))
    many = [(int(x), num(vals.get((mtu, "sroce", t, x, "MiBps"))))
            for t, x in qps if x != "1"]
    many = [(n, v / one) for n, v in many if v and one]
    if not many:
        return None
    ok = all(abs(r - 1) <= QP_SPREAD for n, r in many)
    return ["many QPs: up to %d within %d%% of one QP's bandwidth" % (
        max(n for n, r in many), QP_SPREAD * 100),
        verdict(ok), span([r for n, r in many]), "-"]


def targets(vals, mtu, bw, qps, lat, icmp, link):
    """The section "Against the targets" of one MTU, as lines."""
    tests = ordered(bw, lambda r: r[0])
    rows = [bw_target(vals, mtu, tests, "rxe", num(link)),
            bw_target(vals, mtu, tests, "tcp", num(link)),
            cpu_target(vals, mtu, tests, False),
            cpu_target(vals, mtu, tests, True),
            host_target(vals, mtu, tests),
            lat_target(vals, mtu, lat, num(icmp)),
            qps_target(vals, mtu, qps)]
    rows = [r for r in rows if r]
    if not rows:
        return []
    cols = ["target", "result", "sroce", "floor"]
    out = ["", "### Against the targets", "",
           "sroce's ratios over every test the target covers (lowest to "
           "highest; for CPU and latency below 1 is better), and what the "
           "link's floors allow: the link floor over the other stack's "
           "figure (\"beyond the link\": in that many tests the floor "
           "itself is below the target), sroce and TCP over the echo "
           "floor. For "
           "CPU, the two factors of sroce/TCP: the kernel time per frame "
           "on the link, and the frames per GiB moved (data and ACKs, "
           "both ways). A run's CPU time includes what it costs besides "
           "its transfer (starting the programs, connecting, registering "
           "memory, exiting), the more so the fewer bytes it moves "
           "(at these sizes every run moves about 256 MiB); the transfer's "
           "is a run's less that of a short run of 5 messages beside it. "
           "The host's CPU per GiB is both QEMU processes' (see \"The "
           "host\" above): where the host's CPUs are busy it, not the "
           "link, bounds every stack's bandwidth.",
           "",
           row(cols), align(2, len(cols))]
    return out + [row(r) for r in rows]


def main():
    tsv, outdir, header = sys.argv[1:4]
    rows, figures = read_tsv(tsv, 6)
    vals = {k: combine(v) for k, v in figures.items()}
    rounds = max([len(v) for v in figures.values()] or [1])
    mtus = ordered(rows, lambda r: r[0])
    # Columns for the stacks and floors this run measured, at any MTU:
    # sroce always, the others when selected.
    ran = {r[1] for r in rows}
    stacks = [s for s in STACKS if s == "sroce" or s in ran]
    others = [s for s in stacks if s != "sroce"]
    has_udp = UDP[0] in ran
    has_icmp = ICMP[0] in ran
    has_link = LINK[0] in ran
    out = []
    w = out.append
    with open(header) as f:
        w(f.read().rstrip("\n"))
    if rounds > 1:
        w("")
        w("The floors and stacks ran %d times in turn at each MTU; each "
          "figure is the median of its rounds (a failed round left out)."
          % rounds)

    params = [(m, st, ", ".join("%s %s" % (p, vals[(m, st, "param", "0", p)])
                                for p in BATCH_PARAMS
                                if (m, st, "param", "0", p) in vals))
              for m in mtus for st in ("sroce", "sroce1")]
    params = [(m, st, v) for m, st, v in params if v]
    if params:
        absent = any("absent" in v for m, st, v in params)
        w("")
        w("sroce's batching parameters as read back after loading: " +
          "; ".join("%s at MTU %s: %s" % (st, m, v) for m, st, v in params) +
          ("." if not absent else
           "; \"absent\": this sroce has no such parameter" +
           (", and sroce1 ran with that batching as sroce did."
            if "sroce1" in ran else ".")))

    for mtu in mtus:
        mrows = [r for r in rows if r[0] == mtu]
        bw = ordered(mrows, lambda r: (r[2], r[3]) if r[4] == "MiBps" and
                     r[1] in RDMA and not r[2].endswith("_qps") else None)
        qps = ordered(mrows, lambda r: (r[2], r[3]) if r[4] == "MiBps" and
                      r[2].endswith("_qps") else None)
        lat = ordered(mrows, lambda r: (r[2], r[3]) if r[4] == "t_typical"
                      and r[1] in RDMA else None)
        tcplat = ordered(mrows, lambda r: r[3] if r[2] == TCP_LAT else None)
        ib_mtu = "?"
        for s in RDMA:
            ib_mtu = vals.get((mtu, s, "port", "0", "active_mtu"), ib_mtu)
            if ib_mtu != "?":
                break
        udp_x, udp = floor_of(vals, mrows, UDP, "MiBps")
        icmp_x, icmp = floor_of(vals, mrows, ICMP, "t_typical")
        link_x, link = floor_of(vals, mrows, LINK, "MiBps")
        w("")
        w("## Netdev MTU %s (RoCE active MTU %s)" % (mtu, ib_mtu))
        if bw or udp_x or link_x:
            w("")
            w("### Bandwidth (MiB/s, higher is better)")
            w("")
            w("perftest \"BW average\"; TCP: one iperf3 stream writing the same "
              "message size. CPU: kernel seconds (system, irq, softirq) of "
              "both guests per GiB moved, lower is better; perftest's user "
              "time is its polling and is left out.")
            if any(t.endswith("_event") for t, x in bw):
                w("")
                w(EVENT_NOTE)
            if udp_x and not num(udp):
                w("")
                w("UDP, one datagram per packet: %s." % show(udp))
            elif udp_x:
                w("")
                lost = vals.get((mtu,) + UDP + (udp_x, "lost_pct"))
                sent = vals.get((mtu,) + UDP + (udp_x, "sent_MiBps"))
                w("UDP, one datagram per packet (one iperf3 -u -b 0 stream "
                  "of %s-byte datagrams, the RoCE payload of a full packet): "
                  "%s MiB/s received (%s MiB/s sent, %s%% lost; CPU %s). "
                  "The ratio sroce/UDP is against this packet-rate floor." % (
                      udp_x, udp, show(sent), show(lost),
                      gib_cost(vals, (mtu,) + UDP + (udp_x,))))
            if link_x:
                w("")
                w(link_floor(vals, mtu, link_x, link))
        if bw:
            ratios = [s for s in ("sroce1", "rxe", "tcp") if s in others]
            cols = (["test", "bytes"] + [LABEL[s] for s in stacks] +
                    ["sroce/" + LABEL[s] for s in ratios] +
                    (["sroce/UDP"] if has_udp else []) +
                    (["sroce/link"] if has_link else []) +
                    ["CPU " + LABEL[s] for s in stacks])
            w("")
            w(row(cols))
            w(align(1, len(cols)))
            for test, x in bw:
                def bw_key(s):
                    if s == "tcp":
                        return (mtu, "tcp", TCP_BW, x)
                    return (mtu, s, test, x)
                v = {s: vals.get(bw_key(s) + ("MiBps",)) for s in stacks}
                w(row([test, x] + [v[s] for s in stacks] +
                      [ratio(v["sroce"], v[s]) for s in ratios] +
                      ([ratio(v["sroce"], udp)] if has_udp else []) +
                      ([ratio(v["sroce"], link)] if has_link else []) +
                      [gib_cost(vals, bw_key(s)) for s in stacks]))
            out += host_table(vals, mtu, bw, stacks)
        if qps:
            rq = [s for s in stacks if s != "tcp"]
            # sroce's retransmission timeouts, where the runs counted them.
            rto = [s for s in rq if any(
                (mtu, s, test, x, "timeouts") in vals for test, x in qps)]
            cols = (["QPs"] + [LABEL[s] for s in rq] +
                    ["sroce/" + LABEL[s] for s in rq if s != "sroce"] +
                    ["CPU " + LABEL[s] for s in rq] +
                    ["timeouts " + LABEL[s] for s in rto])
            w("")
            w("### Many QPs (ib_write_bw -q N, 4 KiB messages, MiB/s)")
            w("")
            w("CPU: kernel seconds of both guests per GiB, of the whole run: "
              "with many QPs mostly their setup and teardown, not the "
              "transfer (Documentation/performance.rst, \"Many QPs' CPU "
              "time\").")
            if rto:
                w("")
                w("timeouts: retransmission timeouts the requester counted "
                  "during the run, each round's; a run with many spent its "
                  "time going back (Documentation/performance.rst).")
            w("")
            w(row(cols))
            w(align(0, len(cols)))
            for test, x in qps:
                v = {s: vals.get((mtu, s, test, x, "MiBps")) for s in rq}
                w(row([x] + [v[s] for s in rq] +
                      [ratio(v["sroce"], v[s]) for s in rq if s != "sroce"] +
                      [gib_cost(vals, (mtu, s, test, x)) for s in rq] +
                      ["/".join(figures.get((mtu, s, test, x, "timeouts"),
                                            []))
                       for s in rto]))
        if lat or tcplat or icmp_x:
            w("")
            w("### Latency (usec, half a round trip, lower is better)")
            w("")
            w("perftest median (t_typical), 99th and 99.9th percentiles; TCP: "
              "qperf tcp_lat's mean with the same message size. Ratios of the "
              "medians; below 1 sroce is faster.")
        if icmp_x and not num(icmp):
            w("")
            w("ICMP echo floor: %s." % show(icmp))
        elif icmp_x:
            def ig(metric):
                return show(vals.get((mtu,) + ICMP + (icmp_x, metric)))
            w("")
            w("ICMP echo floor: %s usec, half the median round trip of %s "
              "back-to-back echoes (ping -A, %s data bytes) from VM a to "
              "VM b (p99 %s, p99.9 %s). The ratio sroce/floor is at the "
              "smallest message size." % (show(icmp), ig("count"), icmp_x,
                                           ig("t_p99"), ig("t_p999")))
        if lat or tcplat:
            lstacks = [s for s in stacks if s != "tcp"]
            pct = [s for s in lstacks if s != "sroce1"]
            ratios = [s for s in others]
            cols = ["test", "bytes"]
            for s in lstacks:
                cols += [LABEL[s]] + (["p99", "p99.9"] if s in pct else [])
            cols += (["TCP"] if "tcp" in stacks else []) + \
                ["sroce/" + LABEL[s] for s in ratios] + \
                (["sroce/floor"] if has_icmp else [])
            w("")
            w(row(cols))
            w(align(1, len(cols)))
            smallest = min([int(x) for t, x in lat] or [0])
            for test, x in lat:
                def g(stack, metric):
                    return vals.get((mtu, stack, test, x, metric))
                cells = [test, x]
                for s in lstacks:
                    cells.append(g(s, "t_typical"))
                    if s in pct:
                        cells += [g(s, "t_p99"), g(s, "t_p999")]
                t = vals.get((mtu, "tcp", TCP_LAT, x, "lat"))
                if "tcp" in stacks:
                    cells.append(t)
                s0 = g("sroce", "t_typical")
                for s in ratios:
                    cells.append(ratio(s0, t if s == "tcp" else
                                       g(s, "t_typical")))
                if has_icmp:
                    cells.append(ratio(s0, icmp) if int(x) == smallest
                                 else "-")
                w(row(cells))
            if not lat:
                for x in tcplat:
                    t = vals.get((mtu, "tcp", TCP_LAT, x, "lat"))
                    cells = [TCP_LAT, x] + ["-"] * (len(cols) - 2)
                    cells[cols.index("TCP")] = t
                    w(row(cells))
        out += targets(vals, mtu, bw, qps, lat, icmp, link)

    if plot(rows, vals, mtus, outdir):
        w("")
        w("![bandwidth and latency against message size](bench.png)")
    if len(sys.argv) > 4:
        out += scaling(sys.argv[4])
    print("\n".join(out))


def size_label(x):
    for unit, div in (("M", 2**20), ("K", 2**10)):
        if x >= div and x % div == 0:
            return "%d%s" % (x // div, unit)
    return str(x)


def sizes(rows):
    return sorted({int(r[3]) for r in rows
                   if r[4] in ("MiBps", "t_typical", "lat") and
                   not r[2].endswith("_qps")})


def plot(rows, vals, mtus, outdir):
    """bench.png: ib_write_bw and ib_write_lat against the size."""
    series = []
    for mtu in mtus:
        for kind, tests, metric in (
                ("bw", {"sroce": "ib_write_bw", "sroce1": "ib_write_bw",
                        "rxe": "ib_write_bw", "tcp": TCP_BW}, "MiBps"),
                ("lat", {"sroce": "ib_write_lat", "sroce1": "ib_write_lat",
                         "rxe": "ib_write_lat", "tcp": TCP_LAT}, None)):
            for stack in STACKS:
                test = tests[stack]
                m = metric or ("lat" if stack == "tcp" else "t_typical")
                pts = sorted((int(k[3]), num(v)) for k, v in vals.items()
                             if k[0] == mtu and k[1] == stack and
                             k[2] == test and k[4] == m and num(v))
                if not pts:
                    continue
                name = "%s-%s-%s.dat" % (kind, mtu, stack)
                with open(os.path.join(outdir, name), "w") as f:
                    for x, y in pts:
                        f.write("%d %g\n" % (x, y))
                series.append((mtu, kind, stack, name))
    # The floors, one figure per MTU: horizontal lines.
    floors = {}
    for mtu in mtus:
        for kind, key, metric in (("bw", UDP, "MiBps"),
                                  ("lat", ICMP, "t_typical")):
            v = [num(y) for k, y in vals.items() if k[0] == mtu and
                 (k[1], k[2]) == key and k[4] == metric and num(y)]
            if v:
                floors[(mtu, kind)] = v[0]
    if not series:
        return False
    label = {"sroce": "sroce", "sroce1": "sroce, no batching",
             "rxe": "rdma\\_rxe", "tcp": "TCP"}
    color = {"sroce": "#c0392b", "sroce1": "#e67e22", "rxe": "#2471a3",
             "tcp": "#7f8c8d"}
    floor_title = {"bw": "UDP, one datagram per packet",
                   "lat": "ICMP echo floor"}
    gp = ["set terminal pngcairo size %d,%d font ',10'" % (1100, 420 * len(mtus)),
          "set output 'bench.png'",
          "set multiplot layout %d,2" % len(mtus),
          "set logscale xy", "set grid", "set key left top",
          "set xtics (%s)" % ", ".join("'%s' %d" % (size_label(x), x)
                                       for x in sizes(rows)),
          "set xlabel 'message size (bytes)'"]
    for mtu in mtus:
        for kind, title, ylabel in (
                ("bw", "bandwidth, netdev MTU %s" % mtu,
                 "MiB/s (ib\\_write\\_bw; TCP: iperf3)"),
                ("lat", "latency, netdev MTU %s" % mtu,
                 "usec (ib\\_write\\_lat median; TCP: qperf mean)")):
            curves = ["'%s' with linespoints lw 2 pt 7 lc rgb '%s' title '%s'" %
                      (n, color[s], label[s])
                      for m, k, s, n in series if m == mtu and k == kind]
            if (mtu, kind) in floors:
                curves.append("%g with lines dt 2 lw 2 lc rgb '#27ae60' "
                              "title '%s'" % (floors[(mtu, kind)],
                                              floor_title[kind]))
            gp.append("set title '%s'" % title)
            gp.append("set ylabel '%s'" % ylabel)
            gp.append("plot " + ", ".join(curves) if curves else
                      "plot 1 notitle lc rgb 'white'")
    gp.append("unset multiplot")
    with open(os.path.join(outdir, "bench.gp"), "w") as f:
        f.write("\n".join(gp) + "\n")
    try:
        subprocess.run(["gnuplot", "bench.gp"], cwd=outdir, check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        print("bench: no plot (%s)" % e, file=sys.stderr)
        return False
    return True


if __name__ == "__main__":
    main()
