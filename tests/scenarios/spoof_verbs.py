#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Hostile peers, for spoof.sh: live RC and UC connections between a victim
device and a peer device take spoofed packets (tools/sroce-inject.py, sent
from the attacker's namespace) from a third address and from the peer's own
address, and must go on carrying data unharmed; each dropped packet is
counted by its reason. Prints TAP on stdout.

  spoof_verbs.py --victim DEV:GIDX:ADDR --peer DEV:GIDX:ADDR --third ADDR
                 --ns NS --inject PATH

The addresses are IPv6: sroce-inject.py can compute the ICRC of an IPv6
packet in advance only.
"""

import argparse
import ctypes
import os
import subprocess
import sys
import threading
import time

import pyverbs.enums as e
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.wr import RecvWR, SGE, SendWR


from qp_lib import rc_rts_attr
from tap_lib import pattern, tap, tap_done

SIZE = 64 * 1024
REMOTE = (e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE |
          e.IBV_ACCESS_REMOTE_READ | e.IBV_ACCESS_REMOTE_ATOMIC)
BAD_RKEY = 0x00dead00
# Offsets into the victim's region: receive buffer, WRITE target, READ
# source, atomic target, and a range only attackers aim at.
RECV_OFF, WRITE_OFF, READ_OFF, ATOMIC_OFF, TARGET_OFF = (0, 8192, 16384,
                                                         24576, 32768)
MSG = 3000      # three packets at MTU 1024
SMALL = 64
MTU = 1024
MADV_DONTNEED = 4


class Side:
    """One device: context, PD, CQs and a 64 KiB region of every right."""

    def __init__(self, spec):
        dev, gidx, self.addr = spec.split(":", 2)
        self.dev = dev
        self.gidx = int(gidx)
        self.ctx = Context(name=dev)
        self.gid = self.ctx.query_gid(1, self.gidx)
        self.pd = PD(self.ctx)
        self.scq = CQ(self.ctx, 64)
        self.rcq = CQ(self.ctx, 64)
        self.mr = MR(self.pd, SIZE, REMOTE)

    def qp(self, qpt):
        cap = QPCap(max_send_wr=16, max_recv_wr=16, max_send_sge=1,
                    max_recv_sge=1)
        init = QPInitAttr(qp_type=qpt, scq=self.scq, rcq=self.rcq, cap=cap,
                          sq_sig_all=1)
        attr = QPAttr(port_num=1)
        attr.qp_access_flags = REMOTE
        return QP(self.pd, init, attr)

    def counter(self, name):
        """A counter of the port, as "rdma statistic" shows it (sysfs of
        this network namespace need not show the device); -1 when the
        device has no such counter, which no check takes for a count."""
        out = subprocess.run(["rdma", "statistic", "show", "link",
                              self.dev + "/1"], capture_output=True,
                             text=True, check=True).stdout.split()
        return int(out[out.index(name) + 1]) if name in out else -1


def poll_one(cq, limit):
    """The next completion on cq, or None after limit seconds (a spoofed
    packet must complete nothing, so the wait is short)."""
    end = time.monotonic() + limit
    while time.monotonic() < end:
        n, wcs = cq.poll()
        if n:
            return wcs[0]
        time.sleep(0.0002)
    return None


def pair(victim, peer, qpt):
    v, p = victim.qp(qpt), peer.qp(qpt)
    v.to_rts(rc_rts_attr(peer.gid, victim.gidx, p.qp_num, REMOTE))
    p.to_rts(rc_rts_attr(victim.gid, peer.gidx, v.qp_num, REMOTE))
    return v, p


def wc_status(cq, what, limit=10.0):
    wc = poll_one(cq, limit)
    if wc is None:
        return None, "%s: no completion" % what
    return wc, None if wc.status == e.IBV_WC_SUCCESS else \
        "%s: status %d" % (what, wc.status)


def post_recv(side, qp, off, size):
    qp.post_recv(RecvWR(wr_id=off, num_sge=1,
                        sg=[SGE(side.mr.buf + off, size, side.mr.lkey)]))


def send(src, sq, dst, rq, seed, size=SMALL, posted=False, unacked=False):
    """SEND from src to dst's receive buffer; None or what went wrong."""
    data = pattern(seed, size)
    src.mr.write(data, size, RECV_OFF)
    dst.mr.write(bytes(size), size, RECV_OFF)
    if not posted:
        post_recv(dst, rq, RECV_OFF, size)
    sq.post_send(SendWR(wr_id=seed, opcode=e.IBV_WR_SEND, num_sge=1,
                        sg=[SGE(src.mr.buf + RECV_OFF, size, src.mr.lkey)]))
    _, why = wc_status(src.scq, "send")
    if why:
        return why
    wc, why = wc_status(dst.rcq, "receive")
    if why:
        return why
    if wc.byte_len != size or dst.mr.read(size, RECV_OFF) != data:
        return "received data differs from what was sent"
    return None


def rdma(src, qp, dst, opcode, seed, off, imm=None):
    """WRITE src's bytes into dst at off, or READ them from dst at off."""
    data = pattern(seed, MSG)
    if opcode == e.IBV_WR_RDMA_READ:
        dst.mr.write(data, MSG, off)
        src.mr.write(bytes(MSG), MSG, off)
    else:
        src.mr.write(data, MSG, off)
    wr = SendWR(wr_id=seed, opcode=opcode, num_sge=1,
                sg=[SGE(src.mr.buf + off, MSG, src.mr.lkey)])
    wr.set_wr_rdma(dst.mr.rkey, dst.mr.buf + off)
    if imm is not None:
        wr.imm_data = imm
    qp.post_send(wr)
    _, why = wc_status(src.scq, "rdma")
    if why or opcode == e.IBV_WR_RDMA_WRITE_WITH_IMM:
        return why
    got = (src if opcode == e.IBV_WR_RDMA_READ else dst).mr.read(MSG, off)
    return None if got == data else "data differs after the transfer"


def fetch_add(src, qp, dst, add):
    before = int.from_bytes(dst.mr.read(8, ATOMIC_OFF), "little")
    wr = SendWR(wr_id=add, opcode=e.IBV_WR_ATOMIC_FETCH_AND_ADD, num_sge=1,
                sg=[SGE(src.mr.buf + ATOMIC_OFF, 8, src.mr.lkey)])
    wr.set_wr_atomic(dst.mr.rkey, dst.mr.buf + ATOMIC_OFF, add, 0)
    qp.post_send(wr)
    _, why = wc_status(src.scq, "fetch and add")
    if why:
        return why
    orig = int.from_bytes(src.mr.read(8, ATOMIC_OFF), "little")
    after = int.from_bytes(dst.mr.read(8, ATOMIC_OFF), "little")
    if orig != before or after != before + add:
        return "fetch and add: %d -> %d, returned %d" % (before, after, orig)
    return None


def rc_round(victim, v, peer, p, seed):
    """Traffic both ways over the RC pair, every operation checked."""
    return (send(peer, p, victim, v, seed) or
            send(victim, v, peer, p, seed + 1) or
            rdma(peer, p, victim, e.IBV_WR_RDMA_WRITE, seed + 2, WRITE_OFF) or
            rdma(peer, p, victim, e.IBV_WR_RDMA_READ, seed + 3, READ_OFF) or
            fetch_add(peer, p, victim, seed))


def qp_state(qp):
    attr, _ = qp.query(e.IBV_QP_STATE)
    return attr.qp_state


def rq_psn(qp):
    attr, _ = qp.query(e.IBV_QP_RQ_PSN)
    return attr.rq_psn


class Attacker:
    def __init__(self, args, victim):
        self.args = args
        self.victim = victim

    def send(self, src, qpn, psn, op, **kw):
        cmd = ["ip", "netns", "exec", self.args.ns, sys.executable,
               self.args.inject, "--src", src, "--dst", self.victim.addr,
               "--qpn", str(qpn), "--psn", str(psn), "--op", op]
        for k, val in kw.items():
            flag = "--" + k.replace("_", "-")
            cmd += [flag] if val is True else [flag, str(val)]
        subprocess.run(cmd, check=True)


def counters_rise(side, want, what, limit=5.0):
    """Wait for the counters to reach their expected values; report."""
    end = time.monotonic() + limit
    while True:
        got = {n: side.counter(n) for n in want}
        if got == want or time.monotonic() > end:
            break
        time.sleep(0.1)
    bad = ["%s %d (want %d)" % (n, got[n], want[n]) for n in want
           if got[n] != want[n]]
    tap(not bad, what, ", ".join(bad))


def quiet(cq, what, limit=0.5):
    wc = poll_one(cq, limit)
    tap(wc is None, what, wc and "completion wr_id %d status %d" %
        (wc.wr_id, wc.status))


def rc_tests(args, victim, peer, atk):
    v, p = pair(victim, peer, e.IBV_QPT_RC)
    why = rc_round(victim, v, peer, p, 10)
    if not tap(why is None, "RC: traffic both ways before the attack", why):
        return
    epsn = rq_psn(v)
    dup = (epsn - 1) & 0xffffff
    far = dup ^ 0x800000
    names = ("rx_bad_source", "rx_dup_no_match", "rx_psn_out_of_window",
             "rx_bad_pkey", "rx_bad_icrc")
    base = {n: victim.counter(n) for n in names}
    target = pattern(99, SMALL)
    victim.mr.write(target, SMALL, TARGET_OFF)
    # A receive for the in-sequence spoofed SEND to take, if it could.
    victim.mr.write(bytes(SMALL), SMALL, RECV_OFF)
    post_recv(victim, v, RECV_OFF, SMALL)

    third, own = args.third, peer.addr
    ops = (("read", dict(rkey=BAD_RKEY, va=victim.mr.buf, length=64)),
           ("flush", dict(rkey=BAD_RKEY, va=victim.mr.buf, length=64)),
           ("cmp-swap", dict(rkey=BAD_RKEY, va=victim.mr.buf)),
           ("fetch-add", dict(rkey=BAD_RKEY, va=victim.mr.buf)))
    n_third = 0
    for op, kw in ops:
        for psn in (dup, far):
            atk.send(third, v.qp_num, psn, op, **kw)
            n_third += 1
    # In sequence, with the right rkey: only the address gives it away.
    atk.send(third, v.qp_num, epsn, "send-only", payload_len=SMALL,
             ackreq=True)
    atk.send(third, v.qp_num, epsn, "write-only", rkey=victim.mr.rkey,
             va=victim.mr.buf + TARGET_OFF, payload_len=SMALL, ackreq=True)
    n_third += 2
    n_dup = n_far = 0
    for op, kw in ops:
        atk.send(own, v.qp_num, dup, op, **kw)
        n_dup += 1
        atk.send(own, v.qp_num, far, op, **kw)
        n_far += 1
    # In sequence from the peer's address, but another partition or a
    # wrong ICRC.
    atk.send(own, v.qp_num, epsn, "send-only", payload_len=SMALL,
             pkey=0x1234)
    atk.send(own, v.qp_num, epsn, "send-only", payload_len=SMALL,
             bad_icrc=True)

    want = dict(base)
    want["rx_bad_source"] += n_third
    want["rx_dup_no_match"] += n_dup
    want["rx_psn_out_of_window"] += n_far
    want["rx_bad_pkey"] += 1
    want["rx_bad_icrc"] += 1
    counters_rise(victim, want, "RC: every spoofed packet dropped and "
                  "counted by its reason (%d bad source, %d duplicates "
                  "matching nothing, %d out of window, 1 bad P_Key, "
                  "1 bad ICRC)" % (n_third, n_dup, n_far))
    quiet(victim.rcq, "RC: no spoofed SEND completed the victim's receive")
    tap(victim.mr.read(SMALL, TARGET_OFF) == target,
        "RC: the spoofed WRITE changed no byte of the region")
    tap(qp_state(v) == e.IBV_QPS_RTS and qp_state(p) == e.IBV_QPS_RTS,
        "RC: both QPs still in RTS", "victim %d, peer %d" %
        (qp_state(v), qp_state(p)))
    tap(rq_psn(v) == epsn, "RC: the victim still expects PSN %d" % epsn,
        "it expects %d" % rq_psn(v))
    why = send(peer, p, victim, v, 20, posted=True)
    why = why or rc_round(victim, v, peer, p, 30)
    tap(why is None, "RC: traffic both ways after the attack, data checked",
        why)


def set_ecn(on):
    with open("/sys/module/sroce/parameters/ecn", "w") as f:
        f.write("1" if on else "0")


def cnp_tests(args, victim, peer, atk):
    """A CNP cannot be checked against the connection: one from the peer's
    address slows the QP down (the exposure the threat model names), one
    from elsewhere is dropped, and with ECN off none is acted on."""
    v, p = pair(victim, peer, e.IBV_QPT_RC)
    why = rc_round(victim, v, peer, p, 50)
    if not tap(why is None, "CNP: traffic both ways before", why):
        return
    names = ("rx_bad_source", "cnp_handled")
    want = {n: victim.counter(n) for n in names}
    atk.send(args.third, v.qp_num, 0, "cnp")
    want["rx_bad_source"] += 1
    counters_rise(victim, want, "CNP from a third address: dropped as "
                  "bad source, not handled")
    atk.send(peer.addr, v.qp_num, 0, "cnp")
    want["cnp_handled"] += 1
    counters_rise(victim, want, "CNP from the peer's address, ECN on: "
                  "handled")
    set_ecn(False)
    try:
        # The third address's CNP, dropped after the peer's, shows that
        # the peer's was looked at.
        atk.send(peer.addr, v.qp_num, 0, "cnp")
        atk.send(args.third, v.qp_num, 0, "cnp")
        want["rx_bad_source"] += 1
        counters_rise(victim, want, "CNP from the peer's address, ECN "
                      "off: not handled")
    finally:
        set_ecn(True)
    tap(qp_state(v) == e.IBV_QPS_RTS, "CNP: the QP still in RTS",
        "state %d" % qp_state(v))
    why = rc_round(victim, v, peer, p, 60)
    tap(why is None, "CNP: traffic both ways after, data checked", why)


def uc_tests(args, victim, peer, atk):
    v, p = pair(victim, peer, e.IBV_QPT_UC)
    why = (send(peer, p, victim, v, 40) or
           rdma(peer, p, victim, e.IBV_WR_RDMA_WRITE, 41, WRITE_OFF))
    if not tap(why is None, "UC: SEND and WRITE before the attack", why):
        return
    # A WRITE with immediate of three packets and no receive WQE: the
    # message is dropped, and the next one goes through.
    dropped = victim.counter("rx_uc_message_dropped")
    why = rdma(peer, p, victim, e.IBV_WR_RDMA_WRITE_WITH_IMM, 42, WRITE_OFF,
               imm=0x1234)
    why = why or send(peer, p, victim, v, 43)
    tap(why is None and
        victim.counter("rx_uc_message_dropped") == dropped + 1,
        "UC: a WRITE with immediate without a receive WQE is dropped, the "
        "next message arrives", why or "rx_uc_message_dropped %d (want %d)" %
        (victim.counter("rx_uc_message_dropped"), dropped + 1))

    names = ("rx_bad_source", "rx_uc_malformed")
    base = {n: victim.counter(n) for n in names}
    target = pattern(98, SMALL)
    victim.mr.write(target, SMALL, TARGET_OFF)
    victim.mr.write(bytes(SMALL), SMALL, RECV_OFF)
    post_recv(victim, v, RECV_OFF, SMALL)
    psn = rq_psn(v)
    third, own = args.third, peer.addr
    good_write = dict(rkey=victim.mr.rkey, va=victim.mr.buf + TARGET_OFF,
                      payload_len=SMALL)
    atk.send(third, v.qp_num, psn, "send-only", uc=True, payload_len=SMALL)
    atk.send(third, v.qp_num, psn, "send-first", uc=True, payload_len=1)
    atk.send(third, v.qp_num, psn, "write-only", uc=True, **good_write)
    # From the peer's own address: malformed messages.
    atk.send(own, v.qp_num, psn, "send-first", uc=True, payload_len=1)
    atk.send(own, v.qp_num, psn, "write-only", uc=True, rkey=BAD_RKEY,
             va=victim.mr.buf + TARGET_OFF, payload_len=SMALL)
    atk.send(own, v.qp_num, psn, "write-only", uc=True,
             rkey=victim.mr.rkey, va=victim.mr.buf + TARGET_OFF,
             payload_len=16, length=SMALL)
    want = dict(base)
    want["rx_bad_source"] += 3
    want["rx_uc_malformed"] += 3
    counters_rise(victim, want, "UC: spoofed packets dropped and counted "
                  "(3 bad source, 3 malformed)")
    quiet(victim.rcq, "UC: no spoofed SEND completed the victim's receive")
    tap(victim.mr.read(SMALL, TARGET_OFF) == target,
        "UC: no spoofed WRITE changed a byte of the region")
    tap(qp_state(v) == e.IBV_QPS_RTS, "UC: the victim QP still in RTS",
        "state %d" % qp_state(v))
    why = send(peer, p, victim, v, 50, posted=True)
    why = why or rdma(peer, p, victim, e.IBV_WR_RDMA_WRITE, 51, WRITE_OFF)
    tap(why is None, "UC: the peer's SEND lands in the receive the attack "
        "left untouched, and a WRITE follows, data checked", why)


def invalidate_tests(victim, peer):
    v, p = pair(victim, peer, e.IBV_QPT_RC)
    post_recv(victim, v, RECV_OFF, SMALL)
    wr = SendWR(wr_id=7, opcode=e.IBV_WR_SEND_WITH_INV, num_sge=1,
                sg=[SGE(peer.mr.buf + RECV_OFF, SMALL, peer.mr.lkey)])
    wr.imm_data = victim.mr.rkey
    p.post_send(wr)
    wc = poll_one(peer.scq, 10)
    tap(wc is not None and wc.status == e.IBV_WC_REM_INV_REQ_ERR,
        "SEND with invalidate of an ordinary region: the requester gets "
        "a remote invalid request error",
        "no completion" if wc is None else "status %d" % wc.status)
    wc = poll_one(victim.rcq, 10)
    tap(wc is not None and wc.status != e.IBV_WC_SUCCESS,
        "... and the receive WQE completes in error",
        "no completion" if wc is None else "status %d" % wc.status)
    # Nor may the region's owner invalidate it locally.
    v3, p3 = pair(victim, peer, e.IBV_QPT_RC)
    wr = SendWR(wr_id=8, opcode=e.IBV_WR_LOCAL_INV, num_sge=0)
    wr.imm_data = victim.mr.rkey
    v3.post_send(wr)
    wc = poll_one(victim.scq, 10)
    tap(wc is not None and wc.status == e.IBV_WC_LOC_PROT_ERR,
        "LOCAL_INV of an ordinary region: a local protection error",
        "no completion" if wc is None else "status %d" % wc.status)
    # The region's key still works, through a fresh connection.
    v2, p2 = pair(victim, peer, e.IBV_QPT_RC)
    why = rdma(peer, p2, victim, e.IBV_WR_RDMA_READ, 60, READ_OFF)
    why = why or rdma(peer, p2, victim, e.IBV_WR_RDMA_WRITE, 61, WRITE_OFF)
    tap(why is None, "the region was not invalidated: READ and WRITE "
        "through its rkey still work", why)
    del v, p, v2, p2, v3, p3


def odp_icrc_tests(victim, peer, atk):
    """A damaged packet whose pages of an on-demand region are not mapped:
    dropped for its ICRC, it must leave no page fault pending behind it,
    which would hold the region and keep its deregistration waiting. The
    attacker sends from the peer's address, at the PSNs the victim expects:
    a good WRITE First into the region, then, once the region's pages are
    taken away (MADV_DONTNEED), a WRITE Middle with a wrong ICRC."""
    odp = MR(victim.pd, SIZE, REMOTE | e.IBV_ACCESS_ON_DEMAND)
    v, p = pair(victim, peer, e.IBV_QPT_RC)
    epsn = rq_psn(v)
    atk.send(peer.addr, v.qp_num, epsn, "write-first", rkey=odp.rkey,
             va=odp.buf, length=4 * MTU, payload_len=MTU, fill=0x11)
    end = time.monotonic() + 10
    while rq_psn(v) == epsn and time.monotonic() < end:
        time.sleep(0.05)
    if not tap(rq_psn(v) == (epsn + 1) & 0xffffff,
               "ODP: a WRITE First into the unmapped region is placed",
               "the victim expects PSN %d" % rq_psn(v)):
        return
    libc = ctypes.CDLL(None, use_errno=True)
    libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    tap(libc.madvise(odp.buf, SIZE, MADV_DONTNEED) == 0,
        "ODP: the region's pages taken away", os.strerror(ctypes.get_errno()))
    bad = victim.counter("rx_bad_icrc")
    atk.send(peer.addr, v.qp_num, (epsn + 1) & 0xffffff, "write-middle",
             payload_len=MTU, fill=0x22, bad_icrc=True)
    counters_rise(victim, {"rx_bad_icrc": bad + 1},
                  "ODP: the WRITE Middle with a wrong ICRC dropped, counted")
    tap(rq_psn(v) == (epsn + 1) & 0xffffff,
        "ODP: ... and the victim still expects its PSN",
        "it expects %d" % rq_psn(v))
    closer = threading.Thread(target=odp.close, daemon=True)
    closer.start()
    closer.join(30)
    tap(not closer.is_alive(),
        "ODP: the region deregistered: nothing holds it",
        "ibv_dereg_mr has not returned after 30 s")
    del v, p


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--victim", required=True)
    ap.add_argument("--peer", required=True)
    ap.add_argument("--third", required=True)
    ap.add_argument("--ns", required=True)
    ap.add_argument("--inject", required=True)
    args = ap.parse_args()
    if not os.access(args.inject, os.R_OK):
        sys.exit("no %s" % args.inject)
    victim, peer = Side(args.victim), Side(args.peer)
    atk = Attacker(args, victim)
    rc_tests(args, victim, peer, atk)
    cnp_tests(args, victim, peer, atk)
    uc_tests(args, victim, peer, atk)
    invalidate_tests(victim, peer)
    odp_icrc_tests(victim, peer, atk)
    return tap_done()


if __name__ == "__main__":
    sys.exit(main())
