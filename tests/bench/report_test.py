#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The benchmark report's verdicts on made-up figures, as TAP.

    report_test.py

Feeds report.py small results files whose verdicts are known and checks
the section "Against the targets": each target met or not met as the
figures say, the ratios it prints, and the floors. Ends with one line
"N passed, N failed".
"""

import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
WHOLE = "CPU per GiB of whole runs"
TRANSFER = "CPU per GiB of the transfer (a run less a short one)"
N = [0, 0]


def check(ok, name, detail=""):
    N[0 if ok else 1] += 1
    print("%sok %d - %s" % ("" if ok else "not ", sum(N), name))
    if not ok and detail:
        print("\n".join("# " + line for line in detail.splitlines()))


def tsv(mtu, rows):
    """Results lines of one MTU from (stack, test, x, metric, value)."""
    return "".join("%s\t%s\t%s\t%s\t%s\t%s\n" % ((mtu,) + r) for r in rows)


def bw(stack, test, x, mibps, cpu=None, frames=None, short=None):
    rows = [(stack, test, x, "MiBps", mibps)]
    if cpu is not None:
        # cpu kernel seconds for exactly 1 GiB moved
        rows += [(stack, test, x, "bytes", str(2**30)),
                 (stack, test, x, "cpu_kern", cpu)]
    if frames is not None:
        rows += [(stack, test, x, "frames", frames)]
    if short is not None:
        # the short run: (cpu, frames, bytes)
        rows += [(stack, test, x, m + "_short", str(v)) for m, v in
                 zip(("cpu_kern", "frames", "bytes"), short)]
    return rows


def figures(sroce=100, rxe=30, tcp=60, link=200, s_cpu=5, t_cpu=10,
            lat=(100, 250, 150, 90), qps=(50, 45), frames=(None, None),
            short=(None, None)):
    """One MTU's results: three perftest programs at both target sizes.
    lat: sroce, rdma_rxe, TCP, echo floor; qps: 1 and 1000 QPs;
    frames: sroce's and TCP's frames per GiB; short: sroce's and TCP's
    short runs."""
    rows = [("link", "pktgen", "1024", "MiBps", str(link)),
            ("floor", "icmp_echo", "64", "t_typical", str(lat[3]))]
    for x in ("65536", "1048576"):
        rows += bw("tcp", "iperf3", x, str(tcp), str(t_cpu), frames[1],
                   short[1])
        for t in ("ib_write_bw", "ib_send_bw", "ib_read_bw"):
            rows += bw("sroce", t, x, str(sroce), str(s_cpu), frames[0],
                       short[0])
            rows += bw("rxe", t, x, str(rxe))
    for t in ("ib_write_lat", "ib_send_lat"):
        rows += [("sroce", t, "64", "t_typical", str(lat[0])),
                 ("rxe", t, "64", "t_typical", str(lat[1]))]
    rows += [("tcp", "qperf_tcp_lat", "64", "lat", str(lat[2]))]
    rows += [("sroce", "ib_write_bw_qps", "1", "MiBps", str(qps[0])),
             ("sroce", "ib_write_bw_qps", "1000", "MiBps", str(qps[1]))]
    return tsv("1500", rows)


def report(text):
    with tempfile.TemporaryDirectory() as d:
        res, hdr = os.path.join(d, "results.tsv"), os.path.join(d, "h.md")
        with open(res, "w") as f:
            f.write(text)
        with open(hdr, "w") as f:
            f.write("# header\n")
        env = dict(os.environ, PATH="/nonexistent")  # no gnuplot: no plot
        p = subprocess.run([sys.executable, os.path.join(HERE, "report.py"),
                            res, d, hdr], capture_output=True, text=True,
                           env=env)
        return p.stdout


def target_rows(out):
    """{target prefix: [result, sroce, floor]} of "Against the targets"."""
    rows, on = {}, False
    for line in out.splitlines():
        if line.startswith("### "):
            on = line == "### Against the targets"
            continue
        if on and line.startswith("| ") and not line.startswith("| target"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            rows[cells[0].split(":")[0].split(",")[0]] = cells[1:]
    return rows


def main():
    print("TAP version 13")
    # All met: 100 MiB/s against rxe 30 (3.33) and TCP 60 (1.67); CPU 5
    # against 10; latency 100 against min(125, 120) = 120; 1000 QPs 0.9.
    out = report(figures())
    t = target_rows(out)
    check(sorted(t) == [WHOLE, "bandwidth", "latency", "many QPs"],
          "the section lists the targets", out)
    rows = [r for r in out.splitlines() if r.startswith("| bandwidth")]
    check(len(rows) == 2 and all("| met |" in r for r in rows),
          "bandwidth 3.33 times rxe and 1.67 times TCP: met", "\n".join(rows))
    check(any("| 3.33 |" in r for r in rows) and
          any("| 1.67 |" in r for r in rows),
          "the bandwidth ratios are printed", "\n".join(rows))
    check(any(r.endswith("| the link allows 6.67 |") for r in rows),
          "the link floor over rxe: 200/30, not beyond the link",
          "\n".join(rows))
    check(t.get(WHOLE, [""])[:2] == ["met", "0.50"],
          "CPU 5 s/GiB against TCP's 10: met at 0.50", str(t))
    check(t.get("latency", [""])[:3] ==
          ["met", "0.83", "sroce/floor 1.11; TCP/floor 1.67"],
          "latency 100 against the bound 120 (0.8 times TCP): met; "
          "sroce and TCP over an echo floor of 90", str(t))
    check(t.get("many QPs", [""])[:2] == ["met", "0.90"],
          "1000 QPs at 0.90 of one: met", str(t))

    # None met: sroce slower than needed, dearer than TCP, 1000 QPs at 0.7.
    out = report(figures(sroce=60, s_cpu=12, lat=(130, 250, 150, 90),
                         qps=(50, 35)))
    t = target_rows(out)
    rows = [r for r in out.splitlines() if r.startswith("| bandwidth")]
    check(len(rows) == 2 and all("| not met |" in r for r in rows),
          "bandwidth 2.00 times rxe and 1.00 times TCP: not met",
          "\n".join(rows))
    check(t.get(WHOLE, [""])[0] == "not met",
          "CPU 12 s/GiB against TCP's 10: not met", str(t))
    check(t.get("latency", [""])[:2] == ["not met", "1.08"],
          "latency 130 against the bound 120: not met at 1.08", str(t))
    check(t.get("many QPs", [""])[:2] == ["not met", "0.70"],
          "1000 QPs at 0.70 of one: not met", str(t))

    # No frames counted: no split of the CPU ratio.
    check(t.get(WHOLE, ["", "", ""])[2] == "-",
          "CPU without frame counts: no floor", str(t))
    # CPU 14.1 against 10 with 1.41 times the frames: per frame 1.00.
    t = target_rows(report(figures(s_cpu=14.1,
                                   frames=("1056000", "748800"))))
    check(t.get(WHOLE, [""])[:3] ==
          ["not met", "1.41",
           "per frame 1.00; frames per GiB 1.41 times TCP's"],
          "CPU 1.41 times TCP's: 1.00 per frame, 1.41 times the frames",
          str(t))

    # The transfer: sroce's 16 s a GiB less a short run's 8 s and 1/8 GiB
    # is 8 s for 7/8 GiB (9.14 a GiB); TCP's 10 less 0.5 for 7/8 GiB is
    # 10.86 a GiB: 0.84 of it, whole runs 1.60. Frames: sroce 1000 less
    # 125, 875 for 7/8 GiB; TCP 800 less 100: per frame 0.67, frames per
    # GiB 1.25 times TCP's.
    t = target_rows(report(figures(
        s_cpu=16, frames=("1000", "800"),
        short=((8, 125, 2**27), (0.5, 100, 2**27)))))
    check(t.get(WHOLE, [""])[:2] == ["not met", "1.60"] and
          t.get(TRANSFER, [""])[:3] ==
          ["met", "0.84", "per frame 0.67; frames per GiB 1.25 times TCP's"],
          "the transfer's CPU: a run less its short run", str(t))
    check(TRANSFER not in target_rows(report(figures(
        s_cpu=16, frames=("1000", "800"), short=((8, 125, 2**27), None)))),
          "no transfer row without TCP's short run")

    # The echo floor above the other bounds sets the latency target:
    # 1.2 * 150 = 180 against min(0.5 * 250, 0.8 * 150) = 120.
    t = target_rows(report(figures(lat=(170, 250, 150, 150))))
    check(t.get("latency", [""])[:3] ==
          ["met", "0.94", "sroce/floor 1.13; TCP/floor 1.00"],
          "latency 170 within 1.2 times an echo floor of 150: met", str(t))

    # A link whose floor is below the target against TCP: "beyond the
    # link" in every test (6 of 6: three programs, two sizes).
    out = report(figures(tcp=100, link=120))
    rows = [r for r in out.splitlines()
            if r.startswith("| bandwidth") and "TCP" in r]
    check(len(rows) == 1 and "beyond the link in 6 of 6" in rows[0],
          "a link floor of 1.2 times TCP puts 1.5 times beyond the link",
          "\n".join(rows))

    # More QPs moving more than 20% above one QP is not flat either.
    t = target_rows(report(figures(qps=(50, 65))))
    check(t.get("many QPs", [""])[:2] == ["not met", "1.30"],
          "1000 QPs at 1.30 of one: not within 20%", str(t))

    # The many-QP table says what its CPU column counts.
    out = report(figures())
    q = out[out.find("### Many QPs"):]
    check("### Many QPs" in out and
          0 <= q.find("mostly their setup and teardown") < q.find("| QPs |"),
          "many QPs: the CPU column explained above its table", q[:400])

    # SEND and READ with completion events: rows of their own, explained,
    # and in the targets (5 programs at 2 sizes against the link: 10 of
    # 10).
    out = report(figures(tcp=100, link=120) + tsv("1500", [
        r for t in ("ib_send_bw_event", "ib_read_bw_event")
        for x in ("65536", "1048576")
        for r in bw("sroce", t, x, "150") + bw("rxe", t, x, "50")]))
    for t in ("ib_send_bw_event", "ib_read_bw_event"):
        rows = [r for r in out.splitlines() if r.startswith("| %s " % t)]
        check(len(rows) == 2 and all("| 150 | 50 | 100 | 3.00 | 1.50 |" in r
                                     for r in rows),
              "%s: its rows and ratios" % t, "\n".join(rows) or out)
    check("ib_send_bw -e and ib_read_bw -e, the side that receives" in out,
          "the event rows explained", out)
    rows = [r for r in out.splitlines()
            if r.startswith("| bandwidth") and "TCP" in r]
    check(len(rows) == 1 and "beyond the link in 10 of 10" in rows[0],
          "the event rows count in the bandwidth targets", "\n".join(rows))
    check("sleeping on completion" not in report(figures()),
          "no explanation without an event row")

    # The host: sroce's runs cost both QEMUs 12 s for a GiB, their short
    # runs 2 s for 1/8 GiB, so the transfer 10 s for 7/8 GiB (11.43 a
    # GiB); TCP's 21 less 1, 20 s for 7/8 GiB (22.86). Busy: sroce 400 of
    # 440 ticks less 100 of 120, 300 of 320 (94%); TCP 300 of 400 less 50
    # of 100, 250 of 300 (83%).
    def host(s_qemu):
        rows = []
        for x in ("65536", "1048576"):
            for st, t, q, b in (("sroce", "ib_write_bw", s_qemu,
                                 (400, 40, 100, 20)),
                                ("tcp", "iperf3", 21, (300, 100, 50, 50))):
                rows += [(st, t, x, "host_busy", str(b[0])),
                         (st, t, x, "host_idle", str(b[1])),
                         (st, t, x, "host_qemu", str(q)),
                         (st, t, x, "host_busy_short", str(b[2])),
                         (st, t, x, "host_idle_short", str(b[3])),
                         (st, t, x, "host_qemu_short",
                          "2" if st == "sroce" else "1")]
        return tsv("1500", rows)
    short = ((8, 125, 2**27), (0.5, 100, 2**27))
    out = report(figures(short=short) + host(12))
    t = target_rows(out)
    check(t.get("host CPU per GiB of the transfer", [""]) ==
          ["met", "0.50", "host busy 94% in sroce's runs, 83% in TCP's"],
          "host CPU per GiB 11.43 against TCP's 22.86: met at 0.50",
          str(t))
    rows = [r for r in out.splitlines()
            if r.startswith("| ib_write_bw | 65536 |")]
    check(len(rows) == 2 and rows[1] ==
          "| ib_write_bw | 65536 | 94 | - | 83 | 11.43 | - | 22.86 | 0.50 |",
          "the host table: busy shares, host seconds per GiB, the ratio",
          "\n".join(rows))
    check(out.find("### The host") < out.find("| test | bytes | busy sroce"),
          "the host table explained above it", out)
    t = target_rows(report(figures(short=short) + host(17)))
    check(t.get("host CPU per GiB of the transfer", [""])[:2] ==
          ["not met", "0.75"],
          "host CPU per GiB 17.14 against 22.86: not met at 0.75", str(t))
    out = report(figures(short=short))
    check("### The host" not in out and
          "host CPU per GiB of the transfer" not in target_rows(out),
          "no host figures: no host table and no host row")

    print("%d passed, %d failed" % tuple(N))
    return 1 if N[1] else 0


if __name__ == "__main__":
    sys.exit(main())
