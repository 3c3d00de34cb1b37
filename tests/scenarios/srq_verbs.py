#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Shared receive queue checks for srq.sh, in one process on one device:
RC, UC and UD QPs send to their own GID and the three receiving QPs share
one SRQ. Prints TAP on stdout. Senders and receivers are rdma-core's test
resources (tests.base: RCResources, UDResources, a UC variant, the
receivers a variant with their SRQ), connected as rdma-core's own tests
connect them; rdma-core's XRC resources must fail.

  srq_verbs.py -d DEV -g GIDX

Every message carries its own pattern and is checked byte by byte in the
WQE it must have landed in: SRQ WQEs are taken in the order they were
posted, whichever QP receives.
"""

import errno
import os
import random
import select
import sys
import time
import unittest

import pyverbs.enums as e
from pyverbs.pyverbs_error import PyverbsError, PyverbsRDMAError
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.srq import SrqAttr
from pyverbs.wr import RecvWR, SGE, SendWR

from verbs_lib import differs, pattern, poll_wc, tap, tap_done, tool_args
# verbs_lib made rdma-core's test package importable.
from tests.base import RCResources, UDResources, XRCResources
import tests.utils as u

SLOT = 2048          # receive buffer per WQE
SLOTS = 64
HEAD = 100           # the first SGE of every receive WQE; the rest follows
KINDS = ("rc", "uc", "ud")
QPT = {"rc": e.IBV_QPT_RC, "uc": e.IBV_QPT_UC, "ud": e.IBV_QPT_UD}


def errno_of(exc):
    for v in (getattr(exc, "error_code", None), getattr(exc, "errno", None)):
        if v:
            return abs(v)
    return None


def event_fds():
    """This process's async event files (one per device context)."""
    found = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            link = os.readlink("/proc/self/fd/" + fd)
        except OSError:
            continue
        if "infinibandevent" in link:
            found.add(int(fd))
    return found


class UCResources(RCResources):
    """rdma-core's RC resources with a UC QP."""

    def create_qp_init_attr(self):
        return QPInitAttr(qp_type=e.IBV_QPT_UC, scq=self.cq, rcq=self.cq,
                          srq=self.srq, cap=self.create_qp_cap())


SENDERS = {"rc": RCResources, "uc": UCResources, "ud": UDResources}


class SrqReceivers(RCResources):
    """rdma-core's resources with an SRQ (max_wr 16, 2 SGEs) that an RC, a
    UC and a UD QP (qps[0], [1], [2]) share, and a receive buffer of SLOTS
    slots; the async event file of its context is async_fd."""

    def __init__(self, dev, gidx):
        self.async_fd = None
        super().__init__(dev, 1, gidx, with_srq=True, qp_count=len(KINDS),
                         msg_size=SLOT * SLOTS)

    def create_context(self):
        before = event_fds()
        super().create_context()
        new = event_fds() - before
        if len(new) == 1:
            self.async_fd = new.pop()

    def create_srq_attr(self):
        return SrqAttr(max_wr=16, max_sge=2)

    def create_qps(self):
        cap = QPCap(max_send_wr=8, max_recv_wr=0, max_send_sge=1,
                    max_recv_sge=0)
        for kind in KINDS:
            init = QPInitAttr(qp_type=QPT[kind], scq=self.cq, rcq=self.cq,
                              srq=self.srq, cap=cap)
            attr = self.create_qp_attr()
            # pyverbs takes the UD QP all the way to RTS here, RC and UC
            # to INIT.
            attr.qkey = UDResources.UD_QKEY
            qp = QP(self.pd, init, attr)
            self.qps.append(qp)
            self.qps_num.append(qp.qp_num)
            self.psns.append(random.getrandbits(24))

    def to_rts(self):
        """rdma-core's RC connection for the RC and UC QPs, which come
        first; the UD QP is ready since its creation."""
        self.qp_count = 2
        try:
            super().to_rts()
        finally:
            self.qp_count = len(self.qps)


def grh_image_wrong(wc, image, gid):
    """What is wrong with a UD receive's GRH flag, SL and GRH image (its
    first 40 bytes) for a datagram from and to gid, or None. An IPv4
    header fills the image's last 20 bytes, an IPv6 header all of it; the
    SL says which (2 or 1, as ConnectX adapters report it), since UCX and
    other consumers read the addresses by it."""
    if not wc.wc_flags & e.IBV_WC_GRH:
        return "no IBV_WC_GRH in the completion's flags"
    if gid[:12] == bytes(10) + b"\xff\xff":
        want_sl, version, addrs = 2, image[20] >> 4, image[32:40]
        want_addrs = gid[12:] * 2
    else:
        want_sl, version, addrs = 1, image[0] >> 4, image[8:40]
        want_addrs = gid * 2
    if wc.sl != want_sl:
        return "SL %d for an IPv%d datagram, expected %d" % (
            wc.sl, 4 if want_sl == 2 else 6, want_sl)
    if version != (4 if want_sl == 2 else 6) or addrs != want_addrs:
        return "GRH image %s does not hold the datagram's IP header" % (
            image.hex())
    return None


class Bench:
    """Three senders, one per kind, each rdma-core resources of its own,
    towards the receivers sharing the SRQ, all on one device; the WQEs
    posted to the SRQ."""

    def __init__(self, dev, gidx):
        self.rx = SrqReceivers(dev, gidx)
        self.tx = {k: SENDERS[k](dev, 1, gidx, msg_size=SLOT) for k in KINDS}
        self.rx.pre_run([self.tx[k].psns[0] for k in KINDS],
                        [self.tx[k].qps_num[0] for k in KINDS])
        for i, k in enumerate(KINDS):
            self.tx[k].pre_run(self.rx.psns[i:i + 1], self.rx.qps_num[i:i + 1])
        self.ah = u.get_global_ah(self.tx["ud"], gidx, 1)
        # Sent from and to this GID: the 16 bytes of it.
        self.gid = bytes.fromhex(
            str(self.rx.ctx.query_gid(1, gidx)).replace(":", ""))
        self.srq = self.rx.srq
        self.next_slot = 0
        self.posted = []      # (wr_id, slot) in posting order

    def events(self, wait):
        """Async events of the receivers' context that arrive within wait
        seconds, acknowledged."""
        got = []
        end = time.monotonic() + wait
        while self.rx.async_fd is not None:
            left = end - time.monotonic()
            r, _, _ = select.select([self.rx.async_fd], [], [], max(left, 0))
            if not r:
                break
            ev = self.rx.ctx.get_async_event()
            got.append(ev.event_type)
            ev.ack()
        return got

    def post(self, wr_id):
        slot = self.next_slot
        self.next_slot = (self.next_slot + 1) % SLOTS
        mr = self.rx.mr
        base = mr.buf + slot * SLOT
        self.rx.mem_write(bytes(SLOT), SLOT, slot * SLOT)
        sges = [SGE(base, HEAD, mr.lkey),
                SGE(base + HEAD, SLOT - HEAD, mr.lkey)]
        # rdma-core's post_recv() posts to the SRQ when there is one.
        u.post_recv(self.rx, RecvWR(wr_id=wr_id, num_sge=2, sg=sges))
        self.posted.append((wr_id, slot))

    def transfer(self, kind, seed, size):
        """Send one message; return None or what went wrong."""
        data = pattern(seed, size)
        tx = self.tx[kind]
        tx.mem_write(data, size)
        wr = SendWR(wr_id=seed, opcode=e.IBV_WR_SEND, num_sge=1,
                    sg=[SGE(tx.mr.buf, size, tx.mr.lkey)],
                    send_flags=e.IBV_SEND_SIGNALED)
        u.post_send(tx, wr, ah=self.ah if kind == "ud" else None)
        swc = poll_wc(tx.cq)
        if swc is None or swc.status != e.IBV_WC_SUCCESS:
            return "%s send: %s" % (kind, "no completion" if swc is None
                                    else u.wc_status_to_str(swc.status))
        rwc = poll_wc(self.rx.cq)
        if rwc is None:
            return "%s: no receive completion" % kind
        if not self.posted:
            return "%s: a receive completed with no WQE posted" % kind
        wr_id, slot = self.posted.pop(0)
        grh = u.GRH_SIZE if kind == "ud" else 0
        if rwc.status != e.IBV_WC_SUCCESS:
            return "%s: receive status %s" % (
                kind, u.wc_status_to_str(rwc.status))
        if rwc.wr_id != wr_id:
            return "%s: receive took WQE %d, expected %d (the oldest)" % (
                kind, rwc.wr_id, wr_id)
        qpn = self.rx.qps_num[KINDS.index(kind)]
        if rwc.qp_num != qpn:
            return "%s: completion names QP %d, expected %d" % (
                kind, rwc.qp_num, qpn)
        if rwc.byte_len != size + grh:
            return "%s: byte_len %d, expected %d" % (kind, rwc.byte_len,
                                                     size + grh)
        if kind == "ud":
            why = grh_image_wrong(rwc, self.rx.mem_read(grh, slot * SLOT),
                                  self.gid)
            if why:
                return "ud: %s" % why
        why = differs(self.rx.mem_read(size, slot * SLOT + grh), data)
        return why and "%s: %s" % (kind, why)

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
        " in posting order, payloads verified (UD: GRH image and SL too)",
        why)


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
    b.rx.qps[0].modify(QPAttr(qp_state=e.IBV_QPS_ERR), e.IBV_QP_STATE)
    ev = b.events(5)
    tap(e.IBV_EVENT_QP_LAST_WQE_REACHED in ev,
        "RC QP of the SRQ to the error state: LAST_WQE_REACHED",
        "events %s" % ev)
    n, wcs = b.rx.cq.poll()
    tap(n == 0, "no SRQ WQE flushed by that QP's error",
        "%d completions, first wr_id %s" % (n, wcs[0].wr_id if n else "-"))
    why = b.transfers([("ud", 90, 512), ("uc", 91, 512), ("ud", 92, 512)])
    tap(why is None, "the other QPs still receive into the SRQ, payloads"
        " verified", why)


def test_xrc(b):
    """rdma-core's XRC resources: opening their XRC domain must fail, which
    rdma-core turns into a skip for EOPNOTSUPP."""
    try:
        XRCResources(b.rx.dev_name, 1, b.rx.gid_index)
    except unittest.SkipTest as exc:
        tap(True, "XRC refused: rdma-core's XRC resources are not supported"
            " (%s)" % exc)
        return
    except (PyverbsError, PyverbsRDMAError) as exc:
        got = errno_of(exc)
        tap(got in (errno.EOPNOTSUPP, errno.ENOSYS),
            "XRC refused: opening an XRC domain fails (errno %s)" % got,
            str(exc))
        return
    tap(False, "XRC refused", "rdma-core's XRC resources were created")


def main():
    args = tool_args(__doc__)
    try:
        b = Bench(args.dev, args.gid_index)
    except (PyverbsError, PyverbsRDMAError, unittest.SkipTest) as exc:
        tap(False, "set up the SRQ and six QPs", str(exc))
        return tap_done()
    tap(b.rx.async_fd is not None, "the context's async event file was found")
    for t in (test_create, test_shared, test_limit, test_resize,
              test_refused, test_qp_error, test_xrc):
        try:
            t(b)
        except (PyverbsError, PyverbsRDMAError) as exc:
            tap(False, t.__name__, "verbs error: %s" % exc)
    return tap_done()


if __name__ == "__main__":
    sys.exit(main())
