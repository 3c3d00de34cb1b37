#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Shared receive queue checks for srq.sh, in one process on one device:
RC, UC and UD QPs send to their own GID and the three receiving QPs share
one SRQ. Prints TAP on stdout.

  srq_verbs.py -d DEV -g GIDX

Every message carries its own pattern and is checked byte by byte in the
WQE it must have landed in: SRQ WQEs are taken in the order they were
posted, whichever QP receives.
"""

import errno
import os
import select
import sys
import time

import pyverbs.enums as e
from pyverbs.addr import AH, AHAttr, GlobalRoute
from pyverbs.mr import MR
from pyverbs.pyverbs_error import PyverbsError, PyverbsRDMAError
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.srq import SRQ, SrqAttr, SrqInitAttr
from pyverbs.wr import RecvWR, SGE, SendWR

from verbs_lib import (Loopback, pattern, poll_one, rc_rts_attr, tap,
                       tap_done, tool_args)

SLOT = 2048          # receive buffer per WQE
SLOTS = 64
HEAD = 100           # the first SGE of every receive WQE; the rest follows
GRH = 40
QKEY = 0x11111111
POLL_LIMIT = 30.0


def errno_of(exc):
    for v in (getattr(exc, "error_code", None), getattr(exc, "errno", None)):
        if v:
            return abs(v)
    return None


class Bench(Loopback):
    """The device, the SRQ, and three sender/receiver QP pairs."""

    def __init__(self, dev, gidx):
        super().__init__(dev, gidx)
        self.rmr = MR(self.pd, SLOT * SLOTS, e.IBV_ACCESS_LOCAL_WRITE)
        self.smr = MR(self.pd, SLOT, e.IBV_ACCESS_LOCAL_WRITE)
        self.srq = SRQ(self.pd, SrqInitAttr(SrqAttr(max_wr=16, max_sge=2)))
        self.next_slot = 0
        self.posted = []      # (wr_id, slot) in posting order
        self.recv = {}
        self.send = {}
        for t in ("rc", "uc", "ud"):
            self.send[t] = self.make_qp(t, None)
            self.recv[t] = self.make_qp(t, self.srq)
        for t in ("rc", "uc"):
            self.connect(self.send[t], self.recv[t].qp_num)
            self.connect(self.recv[t], self.send[t].qp_num)
        gr = GlobalRoute(dgid=self.gid, sgid_index=gidx, hop_limit=64)
        self.ah = AH(self.pd, attr=AHAttr(port_num=1, is_global=1, gr=gr))
        self.async_fd = self.find_async_fd()

    def make_qp(self, kind, srq):
        qpt = {"rc": e.IBV_QPT_RC, "uc": e.IBV_QPT_UC, "ud": e.IBV_QPT_UD}
        cap = QPCap(max_send_wr=8, max_recv_wr=0 if srq else 4,
                    max_send_sge=1, max_recv_sge=0 if srq else 1)
        init = QPInitAttr(qp_type=qpt[kind], scq=self.scq, rcq=self.rcq,
                          srq=srq, cap=cap, sq_sig_all=1)
        attr = QPAttr(port_num=1)
        # pyverbs takes a UD QP all the way to RTS here, RC and UC to INIT.
        attr.qkey = QKEY
        attr.sq_psn = 0
        return QP(self.pd, init, attr)

    def connect(self, qp, dqpn):
        qp.to_rts(rc_rts_attr(self.gid, self.gidx, dqpn))

    @staticmethod
    def find_async_fd():
        """The context's async event file: poll it without blocking."""
        for fd in os.listdir("/proc/self/fd"):
            try:
                link = os.readlink("/proc/self/fd/" + fd)
            except OSError:
                continue
            if "infinibandevent" in link:
                return int(fd)
        return None

    def events(self, wait):
        """Async events that arrive within wait seconds, acknowledged."""
        got = []
        end = time.monotonic() + wait
        while self.async_fd is not None:
            left = end - time.monotonic()
            r, _, _ = select.select([self.async_fd], [], [], max(left, 0))
            if not r:
                break
            ev = self.ctx.get_async_event()
            got.append(ev.event_type)
            ev.ack()
        return got

    def post(self, wr_id):
        slot = self.next_slot
        self.next_slot = (self.next_slot + 1) % SLOTS
        base = self.rmr.buf + slot * SLOT
        self.rmr.write(bytes(SLOT), SLOT, slot * SLOT)
        sges = [SGE(base, HEAD, self.rmr.lkey),
                SGE(base + HEAD, SLOT - HEAD, self.rmr.lkey)]
        self.srq.post_recv(RecvWR(wr_id=wr_id, num_sge=2, sg=sges))
        self.posted.append((wr_id, slot))

    @staticmethod
    def poll(cq):
        return poll_one(cq, POLL_LIMIT)

    def transfer(self, kind, seed, size):
        """Send one message; return None or what went wrong."""
        data = pattern(seed, size)
        self.smr.write(data, size)
        wr = SendWR(wr_id=seed, opcode=e.IBV_WR_SEND, num_sge=1,
                    sg=[SGE(self.smr.buf, size, self.smr.lkey)])
        if kind == "ud":
            wr.set_wr_ud(self.ah, self.recv["ud"].qp_num, QKEY)
        self.send[kind].post_send(wr)
        swc = self.poll(self.scq)
        if swc is None or swc.status != e.IBV_WC_SUCCESS:
            return "%s send: %s" % (kind, "no completion" if swc is None
                                    else "status %d" % swc.status)
        rwc = self.poll(self.rcq)
        if rwc is None:
            return "%s: no receive completion" % kind
        if not self.posted:
            return "%s: a receive completed with no WQE posted" % kind
        wr_id, slot = self.posted.pop(0)
        grh = GRH if kind == "ud" else 0
        if rwc.status != e.IBV_WC_SUCCESS:
            return "%s: receive status %d" % (kind, rwc.status)
        if rwc.wr_id != wr_id:
            return "%s: receive took WQE %d, expected %d (the oldest)" % (
                kind, rwc.wr_id, wr_id)
        if rwc.qp_num != self.recv[kind].qp_num:
            return "%s: completion names QP %d, expected %d" % (
                kind, rwc.qp_num, self.recv[kind].qp_num)
        if rwc.byte_len != size + grh:
            return "%s: byte_len %d, expected %d" % (kind, rwc.byte_len,
                                                     size + grh)
        got = self.rmr.read(size, slot * SLOT + grh)
        if got != data:
            bad = next(i for i in range(size) if got[i] != data[i])
            return "%s: payload differs from offset %d" % (kind, bad)
        return None

    def transfers(self, plan):
        for kind, seed, size in plan:
            why = self.transfer(kind, seed, size)
            if why:
                return why
        return None


def test_create(b):
    attr = b.srq.query()
    tap(attr.max_wr >= 16 and attr.max_sge >= 2 and attr.srq_limit == 0,
        "create SRQ: query gives max_wr %d >= 16, max_sge %d >= 2, limit %d"
        % (attr.max_wr, attr.max_sge, attr.srq_limit))


def test_shared(b):
    for i in range(12):
        b.post(100 + i)
    sizes = {"rc": 1500, "uc": 1000, "ud": 900}
    plan = [(k, 10 + i * 3 + j, sizes[k])
            for i in range(4) for j, k in enumerate(("rc", "uc", "ud"))]
    why = b.transfers(plan)
    tap(why is None, "12 messages over RC, UC and UD land in one SRQ's WQEs"
        " in posting order, payloads verified", why)


def test_limit(b):
    for i in range(8):
        b.post(200 + i)
    b.srq.modify(SrqAttr(srq_limit=4), e.IBV_SRQ_LIMIT)
    tap(b.srq.query().srq_limit == 4, "limit 4 armed (query)")
    why = b.transfers([("rc", 50, 64), ("uc", 51, 64), ("ud", 52, 64)])
    ev = b.events(0.3)
    tap(why is None and not ev, "5 WQEs left: no event yet", why or
        "events %s" % ev)
    why = b.transfers([("rc", 53, 64), ("ud", 54, 64)])
    ev = b.events(5)
    tap(why is None and ev == [e.IBV_EVENT_SRQ_LIMIT_REACHED],
        "3 WQEs left, below the limit: one SRQ_LIMIT_REACHED event",
        why or "events %s" % ev)
    tap(b.srq.query().srq_limit == 0, "the limit disarmed itself (query)")
    why = b.transfers([("uc", 55, 64), ("rc", 56, 64), ("ud", 57, 64)])
    ev = b.events(0.3)
    tap(why is None and not ev, "the SRQ drained: no second event",
        why or "events %s" % ev)


def test_resize(b):
    old = b.srq.query().max_wr
    for i in range(6):
        b.post(300 + i)
    b.srq.modify(SrqAttr(max_wr=64), e.IBV_SRQ_MAX_WR)
    attr = b.srq.query()
    tap(attr.max_wr >= 64, "resize to 64 WQEs (query gives %d)" % attr.max_wr)
    try:
        for i in range(40):
            b.post(400 + i)
        why = None
    except PyverbsError as exc:
        why = "post beyond the old size failed: %s" % exc
    tap(why is None and len(b.posted) > old, "40 more WQEs posted after the"
        " resize: %d outstanding, the old size was %d" % (len(b.posted), old),
        why)
    plan = [(("rc", "uc", "ud")[i % 3], 60 + i, 200 + i * 7)
            for i in range(len(b.posted))]
    why = b.transfers(plan)
    tap(why is None, "the 6 WQEs posted before the resize, then the 40"
        " after, are used in order, payloads verified", why)


def expect_errno(what, want, fn):
    try:
        fn()
    except (PyverbsError, PyverbsRDMAError) as exc:
        got = errno_of(exc)
        return tap(got == want, "%s: errno %s" % (what, got),
                   "expected %d: %s" % (want, exc))
    return tap(False, what + ": accepted")


def test_refused(b):
    for i in range(10):
        b.post(500 + i)
    expect_errno("resize below the 10 WQEs posted refused", errno.EINVAL,
                 lambda: b.srq.modify(SrqAttr(max_wr=4), e.IBV_SRQ_MAX_WR))
    expect_errno("limit above the SRQ size refused", errno.EINVAL,
                 lambda: b.srq.modify(SrqAttr(srq_limit=1000),
                                      e.IBV_SRQ_LIMIT))
    plan = [(("ud", "rc", "uc")[i % 3], 80 + i, 333) for i in range(10)]
    why = b.transfers(plan)
    tap(why is None, "the WQEs survive the refused changes, payloads"
        " verified", why)


def test_qp_error(b):
    for i in range(3):
        b.post(600 + i)
    b.events(0)
    b.recv["rc"].modify(QPAttr(qp_state=e.IBV_QPS_ERR), e.IBV_QP_STATE)
    ev = b.events(5)
    tap(e.IBV_EVENT_QP_LAST_WQE_REACHED in ev,
        "RC QP of the SRQ to the error state: LAST_WQE_REACHED",
        "events %s" % ev)
    n, wcs = b.rcq.poll()
    tap(n == 0, "no SRQ WQE flushed by that QP's error",
        "%d completions, first wr_id %s" % (n, wcs[0].wr_id if n else "-"))
    why = b.transfers([("ud", 90, 512), ("uc", 91, 512), ("ud", 92, 512)])
    tap(why is None, "the other QPs still receive into the SRQ, payloads"
        " verified", why)


def test_xrc(b):
    try:
        from pyverbs.xrcd import XRCD, XRCDInitAttr
    except ImportError as exc:
        tap(False, "XRC refused", "no pyverbs.xrcd: %s" % exc)
        return
    try:
        XRCD(b.ctx, XRCDInitAttr(e.IBV_XRCD_INIT_ATTR_FD |
                                 e.IBV_XRCD_INIT_ATTR_OFLAGS, os.O_CREAT, -1))
    except (PyverbsError, PyverbsRDMAError) as exc:
        got = errno_of(exc)
        tap(got in (errno.EOPNOTSUPP, errno.ENOSYS),
            "XRC refused: opening an XRC domain fails (errno %s)" % got,
            str(exc))
        return
    tap(False, "XRC refused", "an XRC domain was opened")


def main():
    args = tool_args(__doc__)
    try:
        b = Bench(args.dev, args.gid_index)
    except (PyverbsError, PyverbsRDMAError) as exc:
        tap(False, "set up the SRQ and six QPs", str(exc))
        return tap_done()
    tap(b.async_fd is not None, "the context's async event file was found")
    for t in (test_create, test_shared, test_limit, test_resize,
              test_refused, test_qp_error, test_xrc):
        try:
            t(b)
        except (PyverbsError, PyverbsRDMAError) as exc:
            tap(False, t.__name__, "verbs error: %s" % exc)
    return tap_done()


if __name__ == "__main__":
    sys.exit(main())
