#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Host side of tests/bench.sh: the guests' figures as tables and a plot.

    report.py RESULTS.TSV OUTDIR HEADER

RESULTS.TSV holds the BENCH lines of tests/bench/twovm.sh without their
first field: MTU, stack, test, X, metric, value. The Markdown report goes
to stdout (HEADER, a file, is copied first); OUTDIR gets bench.png, drawn
by gnuplot when it is installed, and the data files it was drawn from.
"""

import os
import subprocess
import sys

STACKS = ("sroce", "rxe", "tcp")
# The TCP run each RDMA test is compared with.
TCP_BW = "iperf3"
TCP_LAT = "qperf_tcp_lat"


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


def main():
    tsv, outdir, header = sys.argv[1:4]
    rows = []
    with open(tsv) as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) == 6:
                rows.append(parts)
    vals = {tuple(r[:5]): r[5] for r in rows}
    mtus = ordered(rows, lambda r: r[0])
    out = []
    w = out.append
    with open(header) as f:
        w(f.read().rstrip("\n"))

    for mtu in mtus:
        mrows = [r for r in rows if r[0] == mtu]
        bw = ordered(mrows, lambda r: (r[2], r[3]) if r[4] == "MiBps" and
                     r[1] != "tcp" and not r[2].endswith("_qps") else None)
        qps = ordered(mrows, lambda r: (r[2], r[3]) if r[4] == "MiBps" and
                      r[2].endswith("_qps") else None)
        lat = ordered(mrows, lambda r: (r[2], r[3]) if r[4] == "t_typical"
                      else None)
        tcplat = ordered(mrows, lambda r: r[3] if r[2] == TCP_LAT else None)
        ib_mtu = vals.get((mtu, "sroce", "port", "0", "active_mtu"),
                          vals.get((mtu, "rxe", "port", "0", "active_mtu"),
                                   "?"))
        w("")
        w("## Netdev MTU %s (RoCE active MTU %s)" % (mtu, ib_mtu))
        if bw:
            w("")
            w("### Bandwidth (MiB/s, higher is better)")
            w("")
            w("perftest \"BW average\"; TCP: one iperf3 stream writing the same "
              "message size. CPU: kernel seconds (system, irq, softirq) of "
              "both guests per GiB moved, lower is better; perftest's user "
              "time is its polling and is left out.")
            w("")
            w("| test | bytes | sroce | rxe | TCP | sroce/rxe | sroce/TCP "
              "| CPU sroce | CPU rxe | CPU TCP |")
            w("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
            for test, x in bw:
                s = vals.get((mtu, "sroce", test, x, "MiBps"))
                r = vals.get((mtu, "rxe", test, x, "MiBps"))
                t = vals.get((mtu, "tcp", TCP_BW, x, "MiBps"))
                w("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                    test, x, show(s), show(r), show(t), ratio(s, r),
                    ratio(s, t), gib_cost(vals, (mtu, "sroce", test, x)),
                    gib_cost(vals, (mtu, "rxe", test, x)),
                    gib_cost(vals, (mtu, "tcp", TCP_BW, x))))
        if qps:
            w("")
            w("### Many QPs (ib_write_bw -q N, 4 KiB messages, MiB/s)")
            w("")
            w("| QPs | sroce | rxe | sroce/rxe | CPU sroce | CPU rxe |")
            w("|---:|---:|---:|---:|---:|---:|")
            for test, x in qps:
                s = vals.get((mtu, "sroce", test, x, "MiBps"))
                r = vals.get((mtu, "rxe", test, x, "MiBps"))
                w("| %s | %s | %s | %s | %s | %s |" % (
                    x, show(s), show(r), ratio(s, r),
                    gib_cost(vals, (mtu, "sroce", test, x)),
                    gib_cost(vals, (mtu, "rxe", test, x))))
        if lat or tcplat:
            w("")
            w("### Latency (usec, half a round trip, lower is better)")
            w("")
            w("perftest median (t_typical), 99th and 99.9th percentiles; TCP: "
              "qperf tcp_lat's mean with the same message size. Ratios of the "
              "medians; below 1 sroce is faster.")
            w("")
            w("| test | bytes | sroce | p99 | p99.9 | rxe | p99 | p99.9 "
              "| TCP | sroce/rxe | sroce/TCP |")
            w("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
            for test, x in lat:
                def g(stack, metric):
                    return vals.get((mtu, stack, test, x, metric))
                s, r = g("sroce", "t_typical"), g("rxe", "t_typical")
                t = vals.get((mtu, "tcp", TCP_LAT, x, "lat"))
                w("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                    test, x, show(s), show(g("sroce", "t_p99")),
                    show(g("sroce", "t_p999")), show(r),
                    show(g("rxe", "t_p99")), show(g("rxe", "t_p999")),
                    show(t), ratio(s, r), ratio(s, t)))
            if not lat:
                for x in tcplat:
                    t = vals.get((mtu, "tcp", TCP_LAT, x, "lat"))
                    w("| %s | %s | - | - | - | - | - | - | %s | - | - |" %
                      (TCP_LAT, x, show(t)))

    if plot(rows, mtus, outdir):
        w("")
        w("![bandwidth and latency against message size](bench.png)")
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


def plot(rows, mtus, outdir):
    """bench.png: ib_write_bw and ib_write_lat against the size."""
    vals = {tuple(r[:5]): r[5] for r in rows}
    series = []
    for mtu in mtus:
        for kind, tests, metric in (
                ("bw", {"sroce": "ib_write_bw", "rxe": "ib_write_bw",
                        "tcp": TCP_BW}, "MiBps"),
                ("lat", {"sroce": "ib_write_lat", "rxe": "ib_write_lat",
                         "tcp": TCP_LAT}, None)):
            for stack in STACKS:
                test = tests[stack]
                m = metric or ("lat" if stack == "tcp" else "t_typical")
                pts = sorted((int(r[3]), num(r[5])) for r in rows
                             if r[0] == mtu and r[1] == stack and
                             r[2] == test and r[4] == m and num(r[5]))
                if not pts:
                    continue
                name = "%s-%s-%s.dat" % (kind, mtu, stack)
                with open(os.path.join(outdir, name), "w") as f:
                    for x, y in pts:
                        f.write("%d %g\n" % (x, y))
                series.append((mtu, kind, stack, name))
    if not series:
        return False
    label = {"sroce": "sroce", "rxe": "rdma\\_rxe", "tcp": "TCP"}
    color = {"sroce": "#c0392b", "rxe": "#2471a3", "tcp": "#7f8c8d"}
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
