#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Fault injection, for finj.sh: RC connections from a client device to a
server device, with faults asked for through each device's debugfs
directory (/sys/kernel/debug/sroce/DEV), must show the application exactly
the errors asked for, and carry every byte intact through the faults it
is meant to survive. Each injected fault is counted, and the device
counters (rdma statistic) must agree with the counts. Prints TAP.

  finj_verbs.py --client DEV:GIDX4:GIDX6 --server DEV:GIDX4:GIDX6

GIDX4 and GIDX6 are the indexes of the device's IPv4 and IPv6 GIDs.

Run it in the initial network namespace: "ip netns exec" hides debugfs.
"""

import argparse
import errno
import os
import subprocess
import sys
import time

import pyverbs.enums as e
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.wr import RecvWR, SGE, SendWR

from qp_lib import rc_rts_attr
from tap_lib import differs, pattern, tap, tap_done

DEBUGFS = "/sys/kernel/debug/sroce"
MSG = 4096          # four packets at MTU 1024
DEPTH = 16
SEED = 20240501


class Side:
    """One device: context, PD, CQs, a region, its knobs and counters."""

    def __init__(self, spec):
        self.dev, gidx4, gidx6 = spec.split(":")
        self.gidxs = {4: int(gidx4), 6: int(gidx6)}
        self.gidx = self.gidxs[4]
        self.ctx = Context(name=self.dev)
        self.gids = {v: self.ctx.query_gid(1, i)
                     for v, i in self.gidxs.items()}
        self.pd = PD(self.ctx)
        self.scq = CQ(self.ctx, 4 * DEPTH)
        self.rcq = CQ(self.ctx, 4 * DEPTH)
        self.mr = MR(self.pd, DEPTH * MSG, e.IBV_ACCESS_LOCAL_WRITE)
        self.dir = os.path.join(DEBUGFS, self.dev)

    def qp(self):
        cap = QPCap(max_send_wr=DEPTH, max_recv_wr=DEPTH, max_send_sge=1,
                    max_recv_sge=1)
        init = QPInitAttr(qp_type=e.IBV_QPT_RC, scq=self.scq, rcq=self.rcq,
                          cap=cap, sq_sig_all=1)
        attr = QPAttr(port_num=1)
        attr.qp_access_flags = e.IBV_ACCESS_LOCAL_WRITE
        return QP(self.pd, init, attr)

    def knob(self, name, value):
        with open(os.path.join(self.dir, name), "w") as f:
            f.write("%s\n" % value)

    def knob_value(self, name):
        with open(os.path.join(self.dir, name)) as f:
            return f.read().strip()

    def injected(self):
        """The counters file of the device's fault injection."""
        with open(os.path.join(self.dir, "counters")) as f:
            return {k: int(v) for k, v in (ln.split() for ln in f)}

    def stats(self):
        """The device's counters, as "rdma statistic" shows them."""
        out = subprocess.run(["rdma", "statistic", "show", "link",
                              self.dev + "/1"], capture_output=True,
                             text=True, check=True).stdout.split()
        return {out[i]: int(out[i + 1]) for i in range(len(out) - 1)
                if out[i + 1].isdigit()}

    def reset(self, qpn):
        """All knobs off, the sequence restarted at SEED, counters zeroed;
        the knobs then apply to QP qpn only."""
        for name in ("tx_drop", "tx_corrupt", "tx_duplicate", "tx_delay",
                     "rx_drop", "rx_corrupt", "rnr_nak", "seq_nak",
                     "fail_wqe"):
            self.knob(name, 0)
        self.knob("seed", SEED)
        self.knob("qpn", qpn)


KNOBS = ("tx_drop", "tx_corrupt", "tx_duplicate", "tx_delay", "rx_drop",
         "rx_corrupt", "rnr_nak", "seq_nak", "fail_wqe", "comp_stall_ms")
# (file, value) pairs each knob must refuse with EINVAL.
GARBAGE = ([("tx_drop", v) for v in ("abc", "-1", "101", "1e3", "0x",
                                     "99999999999", "5 5", "", "7" * 40)] +
           [("qpn", "16777216"), ("qpn", "-2"), ("qpn", "al"),
            ("fail_status", "0"), ("fail_status", "22"), ("delay_ms", "0"),
            ("comp_stall_ms", "10001"), ("rnr_nak", "1000001"),
            ("seed", "x1"), ("seed", "18446744073709551616"),
            ("seed", "-1")])


def refuses(side, name, value):
    """None when writing value (and a newline) to the knob fails with
    EINVAL and leaves it unchanged, else what happened."""
    path = os.path.join(side.dir, name)
    before = side.knob_value(name)
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, (value + "\n").encode())
        return "accepted"
    except OSError as exc:
        if exc.errno != errno.EINVAL:
            return "errno %d" % exc.errno
    finally:
        os.close(fd)
    after = side.knob_value(name)
    return None if after == before else "changed %s to %s" % (before, after)


def case_knobs(cli):
    """A new device injects nothing; garbage is refused."""
    off = {name: cli.knob_value(name) for name in KNOBS}
    tap(set(off.values()) == {"0"}, "every knob off on a new device", off)
    tap(cli.knob_value("qpn") == "all", "knobs apply to every QP at first")
    inj = cli.injected()
    tap(sorted(inj) == sorted(
        ("tx_dropped", "tx_corrupted", "tx_duplicated", "tx_delayed",
         "rx_dropped", "rx_corrupted", "rnr_naks", "seq_naks",
         "wqes_failed", "responses_stalled")) and
        set(inj.values()) == {0}, "no fault counted on a new device", inj)
    for name, value in GARBAGE:
        why = refuses(cli, name, value)
        tap(not why, "%s refuses %r with EINVAL" % (name, value), why)
    try:
        with open(os.path.join(cli.dir, "counters"), "w") as f:
            f.write("0\n")
        why = "accepted"
    except OSError:
        why = None
    tap(not why, "counters cannot be written", why)
    cli.knob("qpn", "all")
    cli.knob("seed", 2 ** 64 - 1)
    tap(cli.knob_value("seed") == str(2 ** 64 - 1) and
        cli.knob_value("qpn") == "all", "qpn takes 'all', seed 64 bits")


def connect(cli, srv, rnr_retry=7, ipv=4):
    c, s = cli.qp(), srv.qp()
    attr = rc_rts_attr(srv.gids[ipv], cli.gidxs[ipv], s.qp_num)
    attr.rnr_retry = rnr_retry
    c.to_rts(attr)
    s.to_rts(rc_rts_attr(cli.gids[ipv], srv.gidxs[ipv], c.qp_num))
    return c, s


def poll(cq, n, limit=20.0):
    """Up to n completions of cq, in order, within limit seconds."""
    got = []
    end = time.monotonic() + limit
    while len(got) < n and time.monotonic() < end:
        k, wcs = cq.poll(n - len(got))
        if k:
            got.extend(wcs[:k])
        else:
            time.sleep(0.0005)
    return got


def post_recvs(srv, s, n):
    for i in range(n):
        s.post_recv(RecvWR(wr_id=i, num_sge=1,
                           sg=[SGE(srv.mr.buf + i * MSG, MSG, srv.mr.lkey)]))


def post_send(cli, c, slot, seed):
    data = pattern(seed, MSG)
    cli.mr.write(data, MSG, slot * MSG)
    c.post_send(SendWR(wr_id=seed, opcode=e.IBV_WR_SEND, num_sge=1,
                       sg=[SGE(cli.mr.buf + slot * MSG, MSG, cli.mr.lkey)]))
    return data


def stream(cli, c, srv, s, count, what):
    """count SENDs, one at a time; None when every one completed and
    arrived intact, else what went wrong."""
    for i in range(count):
        post_recvs(srv, s, 1)
        data = post_send(cli, c, 0, i)
        wcs = poll(cli.scq, 1)
        if not wcs or wcs[0].status != e.IBV_WC_SUCCESS:
            return "%s: message %d: send status %s" % (
                what, i, wcs[0].status if wcs else "missing")
        wcs = poll(srv.rcq, 1)
        if not wcs or wcs[0].status != e.IBV_WC_SUCCESS:
            return "%s: message %d: receive status %s" % (
                what, i, wcs[0].status if wcs else "missing")
        why = differs(srv.mr.read(MSG, 0), data)
        if why:
            return "%s: message %d: %s" % (what, i, why)
    return None


def delta(after, before, name):
    return after.get(name, 0) - before.get(name, 0)


def case_fail_wqe(cli, srv):
    """fail_wqe 3 with IBV_WC_REM_ACCESS_ERR: of five SENDs the first
    three complete with that status, the last two succeed and arrive; the
    server, with two receives posted, sees the packets of two SENDs."""
    c, s = connect(cli, srv)
    cli.reset(c.qp_num)
    cli.knob("fail_status", e.IBV_WC_REM_ACCESS_ERR)
    cli.knob("fail_wqe", 3)
    post_recvs(srv, s, 2)
    b_srv = srv.stats()
    sent = [post_send(cli, c, i, 100 + i) for i in range(5)]
    wcs = poll(cli.scq, 5)
    got = [(wc.wr_id, wc.status) for wc in wcs]
    want = [(100 + i, e.IBV_WC_REM_ACCESS_ERR if i < 3 else
             e.IBV_WC_SUCCESS) for i in range(5)]
    tap(got == want, "fail_wqe 3: three IBV_WC_REM_ACCESS_ERR, then two "
        "successes", "completions (wr_id, status): %s" % got)
    rwcs = poll(srv.rcq, 2)
    ok = len(rwcs) == 2 and all(wc.status == e.IBV_WC_SUCCESS
                                for wc in rwcs)
    why = None if ok else "receives: %s" % [wc.status for wc in rwcs]
    for n, wc in enumerate(rwcs if ok else []):
        why = why or differs(srv.mr.read(MSG, wc.wr_id * MSG), sent[3 + n])
    tap(not why, "fail_wqe 3: the two later SENDs arrive intact", why)
    got = delta(srv.stats(), b_srv, "rx_packets")
    tap(got == 2 * MSG // 1024, "fail_wqe 3: failed SENDs never reached "
        "the server", "it received %d packets" % got)
    inj = cli.injected()
    tap(inj["wqes_failed"] == 3 and cli.knob_value("fail_wqe") == "0",
        "fail_wqe 3: wqes_failed counts 3, the knob is spent",
        "wqes_failed %d, fail_wqe %s" % (inj["wqes_failed"],
                                         cli.knob_value("fail_wqe")))
    why = stream(cli, c, srv, s, 2, "after the failures")
    tap(not why, "fail_wqe 3: the QP goes on carrying data", why)
    cli.knob("fail_status", e.IBV_WC_GENERAL_ERR)


def drop_run(cli, srv, count):
    """count SENDs with tx_drop 10 on a new connection; returns the
    injected counts and the counter deltas of both devices."""
    c, s = connect(cli, srv)
    cli.reset(c.qp_num)
    b_cli, b_srv = cli.stats(), srv.stats()
    cli.knob("tx_drop", 10)
    why = stream(cli, c, srv, s, count, "tx_drop 10")
    cli.knob("tx_drop", 0)
    return why, cli.injected(), cli.stats(), b_cli, srv.stats(), b_srv


def case_drop(cli, srv):
    """tx_drop 10 with a seed: every byte arrives, the transport retried,
    and the server received exactly the packets sent less those dropped.
    The same seed and the same traffic drop the same number again."""
    count = 40
    why, inj, a_cli, b_cli, a_srv, b_srv = drop_run(cli, srv, count)
    tap(not why, "tx_drop 10: %d SENDs complete, data verified" % count,
        why)
    dropped = inj["tx_dropped"]
    tap(dropped > 0, "tx_drop 10: packets were dropped (%d)" % dropped)
    sent = delta(a_cli, b_cli, "tx_packets")
    got = delta(a_srv, b_srv, "rx_packets")
    tap(got == sent - dropped, "tx_drop 10: the server received the "
        "packets sent less those dropped",
        "sent %d, dropped %d, received %d" % (sent, dropped, got))
    retries = (delta(a_cli, b_cli, "retransmit_timeouts") +
               delta(a_cli, b_cli, "seq_nak_received"))
    tap(retries > 0, "tx_drop 10: retransmission counters rose (%d)" %
        retries)
    why2, inj2, _, _, _, _ = drop_run(cli, srv, count)
    tap(not why2 and inj2["tx_dropped"] == dropped,
        "tx_drop 10: the same seed drops the same packets again",
        why2 or "first run %d, second run %d" % (dropped,
                                                 inj2["tx_dropped"]))


def case_rnr(cli, srv):
    """rnr_nak 3 on the server: the SEND waits out three RNR NAKs and
    succeeds; with rnr_retry 0 one forced RNR NAK fails the SEND with
    IBV_WC_RNR_RETRY_EXC_ERR."""
    c, s = connect(cli, srv)
    srv.reset(s.qp_num)
    b_cli, b_srv = cli.stats(), srv.stats()
    srv.knob("rnr_nak", 3)
    why = stream(cli, c, srv, s, 2, "rnr_nak 3")
    tap(not why, "rnr_nak 3: the SENDs complete, data verified", why)
    a_cli, a_srv = cli.stats(), srv.stats()
    inj = srv.injected()
    sent = delta(a_srv, b_srv, "rnr_nak_sent")
    got = delta(a_cli, b_cli, "rnr_nak_received")
    tap(inj["rnr_naks"] == 3 and sent == 3 and got == 3,
        "rnr_nak 3: three RNR NAKs injected, sent and received",
        "injected %d, sent %d, received %d" % (inj["rnr_naks"], sent, got))

    c, s = connect(cli, srv, rnr_retry=0)
    srv.reset(s.qp_num)
    srv.knob("rnr_nak", 1)
    post_recvs(srv, s, 1)
    post_send(cli, c, 0, 7)
    wcs = poll(cli.scq, 1)
    st = wcs[0].status if wcs else None
    tap(st == e.IBV_WC_RNR_RETRY_EXC_ERR, "rnr_nak 1, rnr_retry 0: the "
        "SEND fails with IBV_WC_RNR_RETRY_EXC_ERR", "status %s" % st)
    tap(srv.injected()["rnr_naks"] == 1, "rnr_nak 1: one RNR NAK injected")


def case_seq_nak(cli, srv):
    """seq_nak 3 on the server: three sequence NAKs, the requester goes
    back each time, every byte arrives."""
    c, s = connect(cli, srv)
    srv.reset(s.qp_num)
    b_cli = cli.stats()
    srv.knob("seq_nak", 3)
    why = stream(cli, c, srv, s, 4, "seq_nak 3")
    tap(not why, "seq_nak 3: the SENDs complete, data verified", why)
    got = delta(cli.stats(), b_cli, "seq_nak_received")
    inj = srv.injected()["seq_naks"]
    tap(inj == 3 and got == 3, "seq_nak 3: three sequence NAKs injected "
        "and received", "injected %d, received %d" % (inj, got))


def case_dup_corrupt(cli, srv):
    """tx_duplicate 30 and tx_corrupt 10 on the client, rx_corrupt 10 on
    the server: data intact, each duplicate answered as a duplicate
    request, each corrupted packet dropped for its ICRC."""
    c, s = connect(cli, srv)
    cli.reset(c.qp_num)
    srv.reset(s.qp_num)
    b_cli, b_srv = cli.stats(), srv.stats()
    cli.knob("tx_duplicate", 30)
    why = stream(cli, c, srv, s, 10, "tx_duplicate 30")
    cli.knob("tx_duplicate", 0)
    tap(not why, "tx_duplicate 30: the SENDs complete, data verified", why)
    dups = cli.injected()["tx_duplicated"]
    a_srv = srv.stats()
    got = delta(a_srv, b_srv, "rx_duplicate_request")
    tap(dups > 0 and got == dups, "tx_duplicate 30: each duplicate seen "
        "as one by the server", "duplicated %d, seen %d" % (dups, got))
    sent = delta(cli.stats(), b_cli, "tx_packets")
    got = delta(a_srv, b_srv, "rx_packets")
    tap(got == sent + dups, "tx_duplicate 30: the server received the "
        "packets sent and their copies", "sent %d, copies %d, received %d"
        % (sent, dups, got))

    b_srv = srv.stats()
    cli.knob("tx_corrupt", 10)
    srv.knob("rx_corrupt", 10)
    why = stream(cli, c, srv, s, 20, "corrupt 10")
    cli.knob("tx_corrupt", 0)
    srv.knob("rx_corrupt", 0)
    tap(not why, "tx_corrupt 10, rx_corrupt 10: the SENDs complete, data "
        "verified", why)
    bad = cli.injected()["tx_corrupted"] + srv.injected()["rx_corrupted"]
    got = delta(srv.stats(), b_srv, "rx_bad_icrc")
    tap(bad > 0 and got == bad, "corrupt: each corrupted packet dropped "
        "for its ICRC", "corrupted %d, ICRC drops %d" % (bad, got))
    # Each message's middle and last packets (three of its four) are
    # checked in the copy that places them, the retransmitted ones too.
    late = delta(srv.stats(), b_srv, "rx_icrc_in_copy")
    tap(late >= 3 * 20, "corrupt: middle and last packets checked in the "
        "copy that placed them", "rx_icrc_in_copy %d for 20 messages" % late)


def case_delay(cli, srv, ipv):
    """tx_delay 50 and tx_duplicate 20 with delay_ms 20 over IPv4 or IPv6
    (the held and copied packets are sent by the injector itself): the
    traffic completes, and the server receives every packet sent and
    copied, late or not."""
    c, s = connect(cli, srv, ipv=ipv)
    cli.reset(c.qp_num)
    b_cli, b_srv = cli.stats(), srv.stats()
    cli.knob("delay_ms", 20)
    cli.knob("tx_delay", 50)
    cli.knob("tx_duplicate", 20)
    why = stream(cli, c, srv, s, 8, "tx_delay 50")
    cli.knob("tx_delay", 0)
    cli.knob("tx_duplicate", 0)
    # Packets held back when the last SEND completed are due by now.
    time.sleep(0.2)
    inj = cli.injected()
    n, dups = inj["tx_delayed"], inj["tx_duplicated"]
    tap(not why and n > 0, "IPv%d tx_delay 50: the SENDs complete, data "
        "verified (%d packets delayed)" % (ipv, n), why)
    sent = delta(cli.stats(), b_cli, "tx_packets")
    got = delta(srv.stats(), b_srv, "rx_packets")
    tap(got == sent + dups, "IPv%d tx_delay 50: every packet delayed or "
        "copied arrives" % ipv, "sent %d, copies %d, received %d" %
        (sent, dups, got))


def case_delay_stall(cli, srv):
    """Delays over both IP versions, then a completer stall of 150 ms:
    traffic completes without error; nothing completes while stalled."""
    case_delay(cli, srv, 4)
    case_delay(cli, srv, 6)
    c, s = connect(cli, srv)
    cli.reset(c.qp_num)

    start = time.monotonic()
    cli.knob("comp_stall_ms", 150)
    post_recvs(srv, s, 1)
    data = post_send(cli, c, 0, 77)
    early = poll(cli.scq, 1, 0.05)
    after = time.monotonic() - start
    # A slow guest may reach the end of the stall before the poll ends.
    tap(not early or after >= 0.15, "comp_stall_ms 150: no completion "
        "while stalled", "a completion %.3f s after the stall began" %
        after)
    wcs = early or poll(cli.scq, 1)
    st = wcs[0].status if wcs else None
    rwcs = poll(srv.rcq, 1)
    why = None if st == e.IBV_WC_SUCCESS and rwcs else "status %s" % st
    why = why or differs(srv.mr.read(MSG, 0), data)
    tap(not why, "comp_stall_ms 150: the SEND completes afterwards", why)
    n = cli.injected()["responses_stalled"]
    tap(n > 0, "comp_stall_ms 150: responses were held (%d)" % n)
    why = stream(cli, c, srv, s, 3, "after the stall")
    tap(not why, "comp_stall_ms 150: the QP goes on carrying data", why)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--client", required=True)
    ap.add_argument("--server", required=True)
    args = ap.parse_args()
    cli, srv = Side(args.client), Side(args.server)
    case_knobs(cli)
    for case in (case_fail_wqe, case_drop, case_rnr, case_seq_nak,
                 case_dup_corrupt, case_delay_stall):
        case(cli, srv)
    for side in (cli, srv):
        side.reset("all")
    return tap_done()


if __name__ == "__main__":
    sys.exit(main())
