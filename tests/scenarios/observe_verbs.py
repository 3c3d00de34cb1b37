#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Observability, for observe.sh: with the sroce tracepoints enabled
through tracefs, traffic that provokes known events between a victim
device and a peer device must leave exactly those events in the trace,
agreeing with the counters and with what was sent; and "rdma resource
show -dd" must show the driver's state of a live QP, MR and CQ. Prints
TAP on stdout.

  observe_verbs.py --victim DEV:GIDX:ADDR --peer DEV:GIDX:ADDR --ns NS
                   --inject PATH --tracefs DIR

The addresses are IPv6 (sroce-inject.py sends over IPv6 only); NS is the
peer's namespace, from which packets are injected with its address.
"""

import argparse
import faulthandler
import os
import re
import subprocess
import sys
import time

import pyverbs.enums as e
from pyverbs.mr import MR
from pyverbs.qp import QPAttr
from pyverbs.wr import SGE, SendWR

from qp_lib import rc_rts_attr
from spoof_verbs import REMOTE, SIZE, Attacker, Side, poll_one, send
from tap_lib import rdma_res, tap, tap_done

EVENTS = ("sroce_qp_state", "sroce_retransmit", "sroce_nak_send",
          "sroce_nak_recv", "sroce_rnr_wait", "sroce_rx_drop")
# The PSNs each side starts sending with: not 0, so that a field that
# shows a PSN from elsewhere (or none) is told apart.
VICTIM_PSN = 1000
PEER_PSN = 70000
SMALL = 64
# A WRITE of eight windows: 4 MiB of 1024-byte packets each.
BIG = 32 << 20
EVENT_RE = re.compile(r"\s(sroce_\w+): (dev=.*)$")


class Trace:
    """The sroce events of the tracefs ring buffer."""

    def __init__(self, root):
        self.root = root

    def write(self, path, text):
        with open(os.path.join(self.root, path), "w") as f:
            f.write(text)

    def start(self):
        self.write("tracing_on", "0")
        self.write("trace", "")
        self.write("buffer_size_kb", "1024")
        self.write("events/sroce/enable", "1")
        self.write("tracing_on", "1")

    def stop(self):
        self.write("tracing_on", "0")
        self.write("events/sroce/enable", "0")

    def events(self):
        """Every event so far as (name, {field: value})."""
        out = []
        with open(os.path.join(self.root, "trace")) as f:
            for line in f:
                m = EVENT_RE.search(line.rstrip("\n"))
                if m:
                    out.append((m.group(1), dict(
                        kv.split("=", 1) for kv in m.group(2).split())))
        return out

    def select(self, name, **want):
        """The events called name whose fields have the values wanted."""
        return [f for n, f in self.events() if n == name and
                all(f.get(k) == str(v) for k, v in want.items())]


def connect(victim, peer, v_attr=None, p_attr=None):
    """An RC pair, the victim sending from VICTIM_PSN, the peer from
    PEER_PSN; *_attr adjust the attributes of one side."""
    v, p = victim.qp(e.IBV_QPT_RC), peer.qp(e.IBV_QPT_RC)
    va = rc_rts_attr(peer.gid, victim.gidx, p.qp_num, REMOTE)
    pa = rc_rts_attr(victim.gid, peer.gidx, v.qp_num, REMOTE)
    va.sq_psn = pa.rq_psn = VICTIM_PSN
    pa.sq_psn = va.rq_psn = PEER_PSN
    for attr, adjust in ((va, v_attr), (pa, p_attr)):
        if adjust:
            adjust(attr)
    v.to_rts(va)
    p.to_rts(pa)
    return v, p


def check_formats(trace, victim):
    missing = [n for n in EVENTS if not os.path.exists(
        os.path.join(trace.root, "events/sroce", n, "format"))]
    tap(not missing, "tracefs has the %d sroce events" % len(EVENTS),
        "missing: %s" % " ".join(missing))
    # perf and trace-cmd print from the format: its enums must be numbers.
    with open(os.path.join(trace.root,
                           "events/sroce/sroce_rx_drop/format")) as f:
        fmt = f.read()
    reasons = re.findall(r'\{ *\d+, *"(\w+)" *\}', fmt)
    out = subprocess.run(["rdma", "statistic", "show", "link",
                          victim.dev + "/1"], capture_output=True,
                         text=True).stdout.split()
    unknown = [r for r in reasons if r not in out]
    tap("SROCE_STAT_" not in fmt and len(reasons) == 18 and not unknown,
        "sroce_rx_drop's format names 18 reasons by number, each a "
        "counter's name", "reasons %s, not counters %s\n%s" %
        (reasons, unknown, fmt[-300:]))


def check_states(trace, dev, qpn, want, what):
    """The QP's state changes, waiting for one that a work item makes."""
    for _ in range(30):
        got = [(f["old"], f["new"]) for f in
               trace.select("sroce_qp_state", dev=dev, qpn=qpn)]
        if len(got) >= len(want):
            break
        time.sleep(0.1)
    tap(got == want, "%s: QP %d went %s" % (what, qpn, " ".join(
        "%s->%s" % s for s in want)), "traced: %s" % got)


def check_qp_fields(victim, v, sent, received):
    """The driver fields of the victim's live QP after sent SENDs from
    it and received SENDs to it, all acknowledged."""
    objs, out = rdma_res("qp", "link", victim.dev + "/1", "lqpn",
                         str(v.qp_num))
    want = {"req_psn": VICTIM_PSN + sent,
            "req_sent_psn": VICTIM_PSN + sent,
            "req_una_psn": VICTIM_PSN + sent,
            "resp_epsn": PEER_PSN + received,
            "rd_atomic_out": 0, "retries_left": 7, "rnr_retries_left": 7,
            "sq_used": 0, "rq_used": 0, "rnr_wait": 0}
    got = objs[0] if len(objs) == 1 else {}
    bad = ["%s %s (want %d)" % (k, got.get(k), w) for k, w in want.items()
           if got.get(k) != w]
    tap(not bad, "rdma resource show qp -dd: the victim QP's PSNs, "
        "outstanding reads, retries and queues as the traffic left them",
        "; ".join(bad) + "\n" + out)
    tap(got.get("sq_size", 0) >= 16 and got.get("rq_size", 0) >= 16,
        "... its queue sizes", out)
    # Loss-free traffic leaves the window whole: 4 MiB of 1024-byte
    # packets (the path MTU of qp_lib's QPs).
    tap(got.get("cwnd") == 4096,
        "... its window, 4 MiB at its path MTU (cwnd %s)" % got.get("cwnd"),
        out)


def check_mr_cq_fields(victim, v, peer):
    objs, out = rdma_res("mr", "dev", victim.dev)
    mine = [o for o in objs if o.get("iova") == victim.mr.buf]
    o = mine[0] if len(mine) == 1 else {}
    pages = SIZE // 4096
    tap(o.get("length") == SIZE and o.get("access") == REMOTE and
        o.get("odp") == 0 and o.get("valid") == 1 and
        pages <= o.get("npages", -1) <= pages + 1,
        "rdma resource show mr -dd: the region's address, rights, length "
        "and pinned pages", out)
    # Completions left unpolled are entries in use.
    n = 3
    for i in range(n):
        wr = SendWR(wr_id=i, opcode=e.IBV_WR_RDMA_WRITE, num_sge=1,
                    sg=[SGE(victim.mr.buf, 8, victim.mr.lkey)])
        wr.set_wr_rdma(peer.mr.rkey, peer.mr.buf)
        v.post_send(wr)
    for _ in range(50):
        objs, out = rdma_res("cq", "dev", victim.dev)
        used = sorted(o.get("cqe_used", -1) for o in objs
                      if o.get("comm") == "python3")
        if used == [0, n]:
            break
        poll_one(victim.rcq, 0.1)
    sizes = [o.get("cqe_size", 0) for o in objs if o.get("comm") ==
             "python3"]
    tap(used == [0, n] and len(sizes) == 2 and min(sizes) >= 64,
        "rdma resource show cq -dd: %d unpolled completions in use of "
        "the send CQ, none of the receive CQ, sizes of at least 64" % n,
        out)
    got = 0
    while got < n and poll_one(victim.scq, 5) is not None:
        got += 1


def rx_drop_tests(trace, victim, peer, atk, v):
    """Injected packets that must be dropped by reason: each one counted
    and traced once, with the QPN and PSN it carried."""
    epsn = PEER_PSN + 2
    far = epsn ^ 0x800000
    own = peer.addr
    cases = (("rx_bad_pkey", 5, epsn, dict(pkey=0x1234)),
             ("rx_psn_out_of_window", 3, far, {}))
    for reason, n, psn, kw in cases:
        before = victim.counter(reason)
        atk.send(own, v.qp_num, psn, "send-only", payload_len=SMALL,
                 count=n, **kw)
        want = [str((psn + i) & 0xffffff) for i in range(n)]
        got = []
        for _ in range(50):
            got = [f["psn"] for f in trace.select(
                "sroce_rx_drop", dev=victim.dev, reason=reason,
                qpn=v.qp_num)]
            if len(got) >= n:
                break
            poll_one(victim.rcq, 0.1)
        delta = victim.counter(reason) - before
        tap(got == want and delta == n,
            "%d packets injected for %s: %d trace events with their QPN "
            "and PSNs, counter +%d" % (n, reason, n, n),
            "traced PSNs %s (want %s), counter +%d" % (got, want, delta))
    # In the window but ahead: dropped, and NAKed with the expected PSN.
    ahead = (epsn + 10) & 0xffffff
    atk.send(own, v.qp_num, ahead, "send-only", payload_len=SMALL)
    poll_one(victim.rcq, 0.3)
    drops = trace.select("sroce_rx_drop", dev=victim.dev,
                         reason="rx_out_of_sequence", qpn=v.qp_num)
    naks = trace.select("sroce_nak_send", dev=victim.dev, qpn=v.qp_num,
                        kind="psn_sequence_error")
    tap([f["psn"] for f in drops] == [str(ahead)] and
        [f["psn"] for f in naks] == [str(epsn)],
        "a request ahead of the expected PSN: one rx_out_of_sequence drop "
        "at its PSN, one sequence error NAK for PSN %d" % epsn,
        "drops %s, NAKs %s" % (drops, naks))


def rnr_tests(trace, victim, peer):
    """The peer SENDs to a victim QP that never posts a receive, with an
    RNR retry count of 2: three RNR NAKs, two waits and resends, then the
    peer's QP fails."""
    def rnr_timer(attr):
        attr.min_rnr_timer = 1          # 0.01 ms

    def rnr_retry(attr):
        attr.rnr_retry = 2
    v, p = connect(victim, peer, v_attr=rnr_timer, p_attr=rnr_retry)
    nak_before = peer.counter("rnr_nak_received")
    p.post_send(SendWR(wr_id=1, opcode=e.IBV_WR_SEND, num_sge=1,
                       sg=[SGE(peer.mr.buf, SMALL, peer.mr.lkey)]))
    wc = poll_one(peer.scq, 10)
    tap(wc is not None and wc.status == e.IBV_WC_RNR_RETRY_EXC_ERR,
        "RNR: the SEND fails with RNR retry exceeded",
        "no completion" if wc is None else "status %d" % wc.status)
    sent = trace.select("sroce_nak_send", dev=victim.dev, qpn=v.qp_num,
                        kind="rnr")
    recv = trace.select("sroce_nak_recv", dev=peer.dev, qpn=p.qp_num,
                        kind="rnr", psn=PEER_PSN)
    waits = trace.select("sroce_rnr_wait", dev=peer.dev, qpn=p.qp_num,
                         psn=PEER_PSN, timer=1, usecs=10)
    resends = trace.select("sroce_retransmit", dev=peer.dev, qpn=p.qp_num,
                           psn=PEER_PSN, reason="rnr")
    counted = peer.counter("rnr_nak_received") - nak_before
    tap(len(sent) == 3 and len(recv) == 3 and counted == 3,
        "RNR: 3 RNR NAKs traced as sent by the victim and received by the "
        "peer, as counted", "sent %d, received %d, counted %d" %
        (len(sent), len(recv), counted))
    tap([w["rnr_retries_left"] for w in waits] == ["1", "0"] and
        len(resends) == 2,
        "RNR: 2 RNR waits of 10 us with 1 and 0 retries left, 2 resends",
        "waits %s, resends %d" % (waits, len(resends)))
    check_states(trace, peer.dev, p.qp_num,
                 [("RESET", "INIT"), ("INIT", "RTR"), ("RTR", "RTS"),
                  ("RTS", "ERR")], "RNR retries exceeded")
    p.close()
    v.close()


def timeout_tests(trace, victim, peer):
    """The peer's QP sends to a QPN the victim does not have: every
    packet is dropped as rx_no_qp; the peer retries on timeouts retry_cnt
    times, then fails."""
    # QPNs are handed out cyclically: a QPN just freed is not reused.
    gone = victim.qp(e.IBV_QPT_RC)
    ghost = gone.qp_num
    gone.close()

    def lost(attr):
        attr.dest_qp_num = ghost
        attr.retry_cnt = 2
        attr.timeout = 10               # 4 ms

    v2, p = connect(victim, peer, p_attr=lost)
    before = victim.counter("rx_no_qp")
    p.post_send(SendWR(wr_id=2, opcode=e.IBV_WR_SEND, num_sge=1,
                       sg=[SGE(peer.mr.buf, SMALL, peer.mr.lkey)]))
    wc = poll_one(peer.scq, 10)
    tap(wc is not None and wc.status == e.IBV_WC_RETRY_EXC_ERR,
        "timeout: the SEND to a missing QP fails with retry exceeded",
        "no completion" if wc is None else "status %d" % wc.status)
    drops = trace.select("sroce_rx_drop", dev=victim.dev, reason="rx_no_qp",
                         qpn=ghost, psn=PEER_PSN)
    resends = trace.select("sroce_retransmit", dev=peer.dev, qpn=p.qp_num,
                           psn=PEER_PSN, reason="timeout")
    counted = victim.counter("rx_no_qp") - before
    tap(len(resends) == 2 and len(drops) == 3 and counted == 3,
        "timeout: 2 timeout resends traced, 3 rx_no_qp drops for QPN %d "
        "traced and counted" % ghost, "resends %d, drops %d, counted %d" %
        (len(resends), len(drops), counted))
    p.close()
    v2.close()


def modify_state(qp, state):
    attr = QPAttr()
    attr.qp_state = state
    qp.modify(attr, e.IBV_QP_STATE)


def sqd_tests(trace, victim, peer):
    """A WRITE of BIG bytes, then the send queue drained (SQD) while most
    of it is still to go: the message in progress goes on as ACKs open the
    window and completes with its data whole, the drain ends, and back in
    RTS the QP sends again."""
    v, p = connect(victim, peer)
    src = MR(victim.pd, BIG, e.IBV_ACCESS_LOCAL_WRITE)
    dst = MR(peer.pd, BIG, e.IBV_ACCESS_LOCAL_WRITE | REMOTE)
    data = (bytes(range(251)) * (BIG // 251 + 1))[:BIG]
    src.write(data, BIG, 0)
    wr = SendWR(wr_id=7, opcode=e.IBV_WR_RDMA_WRITE, num_sge=1,
                sg=[SGE(src.buf, BIG, src.lkey)])
    wr.set_wr_rdma(dst.rkey, dst.buf)
    v.post_send(wr)
    modify_state(v, e.IBV_QPS_SQD)
    attr, _ = v.query(e.IBV_QP_STATE)
    tap(attr.qp_state == e.IBV_QPS_SQD and attr.sq_draining,
        "SQD: the QP drains its send queue, the WRITE in progress",
        "state %d, sq_draining %d" % (attr.qp_state, attr.sq_draining))
    wc = poll_one(victim.scq, 60)
    tap(wc is not None and wc.status == e.IBV_WC_SUCCESS and wc.wr_id == 7,
        "SQD: the %d MiB WRITE completes" % (BIG >> 20),
        "no completion" if wc is None else
        "status %d, wr_id %d" % (wc.status, wc.wr_id))
    tap(dst.read(BIG, 0) == data, "SQD: every byte of it arrived")
    attr, _ = v.query(e.IBV_QP_STATE)
    tap(attr.qp_state == e.IBV_QPS_SQD and not attr.sq_draining,
        "SQD: the drain is over",
        "state %d, sq_draining %d" % (attr.qp_state, attr.sq_draining))
    modify_state(v, e.IBV_QPS_RTS)
    why = send(victim, v, peer, p, 4)
    tap(why is None, "SQD: back in RTS, a SEND completes", why)
    check_states(trace, victim.dev, v.qp_num,
                 [("RESET", "INIT"), ("INIT", "RTR"), ("RTR", "RTS"),
                  ("RTS", "SQD"), ("SQD", "RTS")], "drain")
    p.close()
    v.close()
    dst.close()
    src.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--victim", required=True)
    ap.add_argument("--peer", required=True)
    ap.add_argument("--ns", required=True)
    ap.add_argument("--inject", required=True)
    ap.add_argument("--tracefs", required=True)
    args = ap.parse_args()
    # A crash of pyverbs says where it happened.
    faulthandler.enable(sys.stdout)
    trace = Trace(args.tracefs)
    victim, peer = Side(args.victim), Side(args.peer)
    check_formats(trace, victim)
    atk = Attacker(args, victim)
    trace.start()
    try:
        v, p = connect(victim, peer)
        why = (send(peer, p, victim, v, 1) or send(peer, p, victim, v, 2) or
               send(victim, v, peer, p, 3))
        tap(why is None, "RC traffic both ways", why)
        check_states(trace, victim.dev, v.qp_num,
                     [("RESET", "INIT"), ("INIT", "RTR"), ("RTR", "RTS")],
                     "connect")
        check_qp_fields(victim, v, 1, 2)
        check_mr_cq_fields(victim, v, peer)
        rx_drop_tests(trace, victim, peer, atk, v)
        qpn = v.qp_num
        attr = QPAttr()
        attr.qp_state = e.IBV_QPS_ERR
        v.modify(attr, e.IBV_QP_STATE)
        v.close()
        check_states(trace, victim.dev, qpn,
                     [("RESET", "INIT"), ("INIT", "RTR"), ("RTR", "RTS"),
                      ("RTS", "ERR"), ("ERR", "RESET")],
                     "error, then destroy")
        p.close()
        rnr_tests(trace, victim, peer)
        timeout_tests(trace, victim, peer)
        sqd_tests(trace, victim, peer)
    finally:
        trace.stop()
    return tap_done()


if __name__ == "__main__":
    sys.exit(main())
