#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Memory window checks for mw.sh, in one process on two devices: RC QP
pairs from device A (the requester) to device B, whose region the windows
open onto, at an offset inside the region that is neither 0 nor a page
boundary. Prints TAP on stdout.

  mw_verbs.py --a DEV:GIDX --b DEV:GIDX [--lossy ROUNDS]

Each window kind (type 2 zero-based, type 1 and type 2 at the region's
addresses) takes a WRITE of the whole window from its first address, one
of its last byte, READs of all of it and of a part, and a fetch-and-add
and a compare-and-swap at 8-byte aligned window addresses; every result
and every byte of the region, inside and around the window, is checked
against a model of what the traffic must have left. Then accesses past
the window's end, with an address whose sum with the length passes 2^64,
or (zero-based) at the region's addresses must fail with a remote access
error and leave the region as it was. A zero-based type 1 window is
refused, by ibv_bind_mw() and by a BIND_MW work request. Two BIND_MW
work requests posted as one chain must both complete, each window then
open to a READ: a local operation waits for the one before it to retire.
A region with a window bound to it cannot be deregistered (EBUSY, the
window still working), and can be once the window is gone.

With --lossy, on a link the scenario makes drop packets, ROUNDS rounds
of a WRITE of the whole zero-based window, a READ of it, a fetch-and-add
and a compare-and-swap, all checked: requests and answers lost make the
requester send again, and the responder answer duplicates from what it
saved (a READ from where the lost responses start, an atomic from its
saved result, never executed twice).
"""

import argparse
import errno
import sys
import time

import pyverbs.enums as e
from pyverbs.cq import CQ
from pyverbs.mr import MR, MW, MWBind, MWBindInfo
from pyverbs.pyverbs_error import PyverbsError, PyverbsRDMAError
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.wr import SGE, SendWR

from qp_lib import Device, rc_rts_attr
from tap_lib import differs, pattern, tap, tap_done

SIZE = 16384
# The window: 8-byte aligned for the atomics, across a page boundary of
# the region, a multiple of 8 bytes long, several MTUs (1024) long.
OFF = 0x1238
WLEN = 6000
REMOTE = (e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_REMOTE_READ |
          e.IBV_ACCESS_REMOTE_ATOMIC)
POLL_LIMIT = 20.0
U64 = (1 << 64) - 1


class Side(Device):
    """One device: context, PD, CQ and a region of SIZE bytes."""

    def __init__(self, spec, access):
        super().__init__(spec)
        self.cq = CQ(self.ctx, 64)
        self.mr = MR(self.pd, SIZE, access)
        self.access = access

    def qp(self):
        cap = QPCap(max_send_wr=16, max_recv_wr=1, max_send_sge=1,
                    max_recv_sge=1)
        init = QPInitAttr(qp_type=e.IBV_QPT_RC, scq=self.cq, rcq=self.cq,
                          cap=cap)
        attr = QPAttr(port_num=1)
        attr.qp_access_flags = self.access & (REMOTE |
                                              e.IBV_ACCESS_LOCAL_WRITE)
        return QP(self.pd, init, attr)

    def completion(self):
        """The next completion on the CQ, whatever its status; None when
        none comes within POLL_LIMIT seconds."""
        end = time.monotonic() + POLL_LIMIT
        while time.monotonic() < end:
            n, wcs = self.cq.poll()
            if n:
                return wcs[0]
            time.sleep(0.0005)
        return None


class Bench:
    """Device A sends, device B holds the region and its windows; model
    is what B's region must hold."""

    def __init__(self, a, b):
        self.a = Side(a, e.IBV_ACCESS_LOCAL_WRITE)
        self.b = Side(b, e.IBV_ACCESS_LOCAL_WRITE | REMOTE |
                      e.IBV_ACCESS_MW_BIND)
        self.model = bytearray(pattern(7, SIZE))
        self.b.mr.write(bytes(self.model), SIZE, 0)
        self.qa = self.qb = None

    def pair(self):
        """A fresh connected QP pair (an error leaves the last one broken)."""
        for qp in (self.qa, self.qb):
            if qp:
                qp.close()
        self.qa, self.qb = self.a.qp(), self.b.qp()
        self.qa.to_rts(rc_rts_attr(self.b.gid, self.a.gidx, self.qb.qp_num))
        self.qb.to_rts(rc_rts_attr(self.a.gid, self.b.gidx, self.qa.qp_num,
                                   REMOTE | e.IBV_ACCESS_LOCAL_WRITE))

    def info(self, access, length=WLEN):
        return MWBindInfo(self.b.mr, self.b.mr.buf + OFF, length, access)

    def bind_wr(self, mw, access):
        """Bind mw by a BIND_MW work request on B's QP: (status, rkey)."""
        wr = SendWR(wr_id=1, opcode=e.IBV_WR_BIND_MW,
                    send_flags=e.IBV_SEND_SIGNALED)
        wr.set_bind_wr(mw, self.info(access))
        self.qb.post_send(wr)
        wc = self.b.completion()
        return (None if wc is None else wc.status), wr.rkey

    def bind_verb(self, mw, access):
        """Bind a type 1 window with ibv_bind_mw() on B's QP: its status."""
        self.qb.bind_mw(mw, MWBind(self.info(access), e.IBV_SEND_SIGNALED))
        wc = self.b.completion()
        return None if wc is None else wc.status

    def post(self, wr):
        """Post wr on A's QP: its completion's status, or why none came."""
        self.qa.post_send(wr)
        wc = self.a.completion()
        return "no completion" if wc is None else wc.status

    def write(self, rkey, va, data):
        self.a.mr.write(data, len(data), 0)
        wr = SendWR(wr_id=2, opcode=e.IBV_WR_RDMA_WRITE, num_sge=1,
                    sg=[SGE(self.a.mr.buf, len(data), self.a.mr.lkey)],
                    send_flags=e.IBV_SEND_SIGNALED)
        wr.set_wr_rdma(rkey, va)
        return self.post(wr)

    def read(self, rkey, va, length):
        """READ length bytes: (status, the bytes)."""
        self.a.mr.write(bytes(length), length, 0)
        wr = SendWR(wr_id=3, opcode=e.IBV_WR_RDMA_READ, num_sge=1,
                    sg=[SGE(self.a.mr.buf, length, self.a.mr.lkey)],
                    send_flags=e.IBV_SEND_SIGNALED)
        wr.set_wr_rdma(rkey, va)
        return self.post(wr), self.a.mr.read(length, 0)

    def atomic(self, rkey, va, opcode, add_or_cmp, swap=0):
        """An atomic operation: (status, the original 8 bytes)."""
        self.a.mr.write(bytes(8), 8, 0)
        wr = SendWR(wr_id=4, opcode=opcode, num_sge=1,
                    sg=[SGE(self.a.mr.buf, 8, self.a.mr.lkey)],
                    send_flags=e.IBV_SEND_SIGNALED)
        wr.set_wr_atomic(rkey, va, add_or_cmp, swap)
        return self.post(wr), int.from_bytes(self.a.mr.read(8, 0), "little")

    def region_as_modelled(self):
        """None when B's region holds what the model says, else where not."""
        got = self.b.mr.read(SIZE, 0)
        why = differs(got, bytes(self.model))
        if why:
            i = next(i for i in range(SIZE) if got[i] != self.model[i])
            where = "inside" if OFF <= i < OFF + WLEN else "outside"
            why = "region: %s (%s the window)" % (why, where)
        return why


class Window:
    """A window of kind (type, zero-based) bound on the current pair; base
    is the address its first byte has for its peers."""

    def __init__(self, bench, mw_type, zero_based):
        self.bench = bench
        self.type = mw_type
        self.zb = zero_based
        self.base = 0 if zero_based else bench.b.mr.buf + OFF
        self.mw = None
        self.rkey = None

    def name(self):
        return "type %d %s window" % (
            1 if self.type == e.IBV_MW_TYPE_1 else 2,
            "zero-based" if self.zb else "VA-based")

    def bind(self):
        """Bind the window on the current pair (a type 2 window is tied to
        its QP, so a new one each time): None or why it failed."""
        access = REMOTE | (e.IBV_ACCESS_ZERO_BASED if self.zb else 0)
        if self.type == e.IBV_MW_TYPE_2:
            if self.mw:
                self.mw.close()
            self.mw = MW(self.bench.b.pd, self.type)
            status, self.rkey = self.bench.bind_wr(self.mw, access)
        else:
            if not self.mw:
                self.mw = MW(self.bench.b.pd, self.type)
            status = self.bench.bind_verb(self.mw, access)
            self.rkey = self.mw.rkey
        if status != e.IBV_WC_SUCCESS:
            return "bind: status %s" % status
        return None

    def close(self):
        if self.mw:
            self.mw.close()
            self.mw = None


def status_ok(status, what):
    if status != e.IBV_WC_SUCCESS:
        return "%s: status %s" % (what, status)
    return None


def traffic(b, w):
    """WRITEs, READs and atomics through w, checked against the model."""
    n = w.name()
    b.pair()
    why = w.bind()
    tap(not why, "%s: %d bytes bound at region offset %#x" % (n, WLEN, OFF),
        why)
    if why:
        return

    data = pattern(11 + w.zb, WLEN)
    why = status_ok(b.write(w.rkey, w.base, data), "WRITE")
    if not why:
        b.model[OFF:OFF + WLEN] = data
        why = b.region_as_modelled()
    tap(not why, "%s: a WRITE of %d bytes at its first address lands at "
        "the window's offset, the bytes around it untouched" % (n, WLEN), why)

    why = status_ok(b.write(w.rkey, w.base + WLEN - 1, b"\xa5"), "WRITE")
    if not why:
        b.model[OFF + WLEN - 1] = 0xa5
        why = b.region_as_modelled()
    tap(not why, "%s: a WRITE of its last byte" % n, why)

    status, got = b.read(w.rkey, w.base, WLEN)
    why = status_ok(status, "READ") or \
        differs(got, bytes(b.model[OFF:OFF + WLEN]))
    tap(not why, "%s: a READ of all of it" % n, why)
    status, got = b.read(w.rkey, w.base + 1000, 2100)
    why = status_ok(status, "READ") or \
        differs(got, bytes(b.model[OFF + 1000:OFF + 3100]))
    tap(not why, "%s: a READ of 2100 bytes at window offset 1000" % n, why)

    at = WLEN - 8
    orig = int.from_bytes(b.model[OFF + at:OFF + at + 8], "little")
    status, got = b.atomic(w.rkey, w.base + at,
                           e.IBV_WR_ATOMIC_FETCH_AND_ADD, 0x1000001)
    why = status_ok(status, "fetch-and-add")
    if not why and got != orig:
        why = "fetch-and-add returned %#x, the bytes held %#x" % (got, orig)
    if not why:
        b.model[OFF + at:OFF + at + 8] = \
            ((orig + 0x1000001) & U64).to_bytes(8, "little")
        why = b.region_as_modelled()
    tap(not why, "%s: fetch-and-add of its last 8 bytes" % n, why)

    at = 16
    orig = int.from_bytes(b.model[OFF + at:OFF + at + 8], "little")
    status, got = b.atomic(w.rkey, w.base + at,
                           e.IBV_WR_ATOMIC_CMP_AND_SWP, orig,
                           0x0123456789abcdef)
    why = status_ok(status, "compare-and-swap")
    if not why and got != orig:
        why = "compare-and-swap returned %#x, the bytes held %#x" % (got,
                                                                      orig)
    if not why:
        b.model[OFF + at:OFF + at + 8] = \
            (0x0123456789abcdef).to_bytes(8, "little")
        why = b.region_as_modelled()
    tap(not why, "%s: compare-and-swap at window offset 16" % n, why)


def refused(b, w, what, op):
    """op(rkey) on a fresh pair and a fresh bind must complete with a
    remote access error and leave the region untouched."""
    b.pair()
    why = w.bind()
    if not why:
        status = op(w.rkey)
        if status != e.IBV_WC_REM_ACCESS_ERR:
            why = "status %s, expected REM_ACCESS_ERR" % status
    why = why or b.region_as_modelled()
    tap(not why, "%s: %s: remote access error, region untouched" %
        (w.name(), what), why)


def errors(b, w):
    base = w.base
    junk = pattern(99, 64)
    refused(b, w, "WRITE of 2 bytes at its last byte",
            lambda rkey: b.write(rkey, base + WLEN - 1, junk[:2]))
    refused(b, w, "READ of 1 byte just past its end",
            lambda rkey: b.read(rkey, base + WLEN, 1)[0])
    refused(b, w, "fetch-and-add just past its end",
            lambda rkey: b.atomic(rkey, base + WLEN,
                                  e.IBV_WR_ATOMIC_FETCH_AND_ADD, 1)[0])
    # The address plus the length passes 2^64 and wraps to a small number.
    refused(b, w, "WRITE of 64 bytes at 2^64 - 32",
            lambda rkey: b.write(rkey, (1 << 64) - 32, junk))
    refused(b, w, "READ of 16 bytes at 2^64 - 8",
            lambda rkey: b.read(rkey, (1 << 64) - 8, 16)[0])
    if w.zb:
        refused(b, w, "WRITE at the region's address of its first byte",
                lambda rkey: b.write(rkey, b.b.mr.buf + OFF, junk[:8]))
    else:
        refused(b, w, "WRITE of 8 bytes 4 before its first",
                lambda rkey: b.write(rkey, base - 4, junk[:8]))


def type1_zero_based(b):
    """A zero-based type 1 window is refused: by librxe's ibv_bind_mw(),
    and by sroce when a BIND_MW work request asks for it."""
    b.pair()
    mw = MW(b.b.pd, e.IBV_MW_TYPE_1)
    access = REMOTE | e.IBV_ACCESS_ZERO_BASED
    try:
        status = b.bind_verb(mw, access)
        why = "ibv_bind_mw() took it, completion status %s" % status
    except PyverbsError:
        why = None
    tap(not why, "type 1 zero-based window: ibv_bind_mw() refuses it", why)
    b.pair()
    status, rkey = b.bind_wr(mw, access)
    why = None
    if status != e.IBV_WC_MW_BIND_ERR:
        why = "bind completion status %s, expected MW_BIND_ERR" % status
    else:
        b.pair()
        status = b.write(rkey, 0, b"\x5a" * 8)
        if status != e.IBV_WC_REM_ACCESS_ERR:
            why = "a WRITE at 0 through its key: status %s" % status
    why = why or b.region_as_modelled()
    tap(not why, "type 1 zero-based window: a BIND_MW work request fails "
        "with MW_BIND_ERR and the key opens nothing", why)
    mw.close()


def chained_binds(b):
    """Two BIND_MW work requests in one post, nothing on the wire: the
    second must not wait for a retirement only an acknowledgment would
    have brought. Each window then takes a READ."""
    b.pair()
    mws = [MW(b.b.pd, e.IBV_MW_TYPE_2) for _ in range(2)]
    wrs = []
    for i, mw in enumerate(mws):
        wr = SendWR(wr_id=10 + i, opcode=e.IBV_WR_BIND_MW,
                    send_flags=e.IBV_SEND_SIGNALED)
        wr.set_bind_wr(mw, b.info(REMOTE))
        wrs.append(wr)
    wrs[0].next_wr = wrs[1]
    b.qb.post_send(wrs[0])
    why = None
    for i in range(2):
        wc = b.b.completion()
        if wc is None:
            why = "bind %d of 2: no completion" % (i + 1)
        elif wc.wr_id != 10 + i or wc.status != e.IBV_WC_SUCCESS:
            why = "bind %d of 2: wr_id %d, status %s" % (i + 1, wc.wr_id,
                                                         wc.status)
        if why:
            break
    base = b.b.mr.buf + OFF
    for i, wr in enumerate(wrs):
        if why:
            break
        status, got = b.read(wr.rkey, base, 8)
        why = status_ok(status, "READ through window %d" % (i + 1)) or \
            differs(got, bytes(b.model[OFF:OFF + 8]))
    tap(not why, "two BIND_MW work requests posted as one chain both "
        "complete, and each window takes a READ", why)
    for mw in mws:
        mw.close()


def round_trip(b, w, i):
    """One lossy round through w: None or what went wrong."""
    data = pattern(100 + i, WLEN)
    why = status_ok(b.write(w.rkey, 0, data), "WRITE")
    if why:
        return why
    b.model[OFF:OFF + WLEN] = data
    status, got = b.read(w.rkey, 0, WLEN)
    why = status_ok(status, "READ") or differs(got, data)
    if why:
        return why
    at = 8 * (i % (WLEN // 8))
    orig = int.from_bytes(b.model[OFF + at:OFF + at + 8], "little")
    status, got = b.atomic(w.rkey, at, e.IBV_WR_ATOMIC_FETCH_AND_ADD, i + 1)
    why = status_ok(status, "fetch-and-add")
    if not why and got != orig:
        why = "fetch-and-add returned %#x, the bytes held %#x" % (got, orig)
    if why:
        return why
    new = (orig + i + 1) & U64
    status, got = b.atomic(w.rkey, at, e.IBV_WR_ATOMIC_CMP_AND_SWP, new,
                           new ^ U64)
    why = status_ok(status, "compare-and-swap")
    if not why and got != new:
        why = "compare-and-swap returned %#x, the bytes held %#x" % (got,
                                                                      new)
    if why:
        return why
    b.model[OFF + at:OFF + at + 8] = (new ^ U64).to_bytes(8, "little")
    return b.region_as_modelled()


def lossy(b, rounds):
    w = Window(b, e.IBV_MW_TYPE_2, True)
    b.pair()
    why = w.bind()
    i = 0
    while not why and i < rounds:
        why = round_trip(b, w, i)
        if why:
            why = "round %d: %s" % (i, why)
        i += 1
    tap(not why, "%s on a lossy link: %d rounds of a WRITE, a READ and two "
        "atomics, results and region checked" % (w.name(), rounds), why)
    w.close()


def bound_region(b):
    """A region with a window bound to it cannot be deregistered: the
    attempt fails with EBUSY and leaves the window working. Once the
    window is deallocated the region can be."""
    b.pair()
    mr = MR(b.b.pd, SIZE, e.IBV_ACCESS_LOCAL_WRITE | REMOTE |
            e.IBV_ACCESS_MW_BIND)
    data = pattern(41, 64)
    mr.write(data, len(data), 0)
    mw = MW(b.b.pd, e.IBV_MW_TYPE_2)
    wr = SendWR(wr_id=20, opcode=e.IBV_WR_BIND_MW,
                send_flags=e.IBV_SEND_SIGNALED)
    wr.set_bind_wr(mw, MWBindInfo(mr, mr.buf, WLEN, REMOTE))
    b.qb.post_send(wr)
    wc = b.b.completion()
    why = status_ok(None if wc is None else wc.status, "bind")
    if not why:
        try:
            mr.close()
            why = "deregistered with a window bound"
        except PyverbsRDMAError as exc:
            if exc.error_code != errno.EBUSY:
                why = "deregistration failed with %d, not EBUSY" % \
                    exc.error_code
    if not why:
        status, got = b.read(wr.rkey, mr.buf, len(data))
        why = status_ok(status, "READ through the window") or \
            differs(got, data)
    tap(not why, "a region with a window bound: deregistration fails "
        "with EBUSY, and the window still reads the region", why)
    mw.close()
    why = None
    try:
        mr.close()
    except PyverbsRDMAError as exc:
        why = "deregistration failed with %d" % exc.error_code
    tap(not why, "... and once the window is deallocated, the region is "
        "deregistered", why)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--a", required=True, help="DEV:GIDX of the requester")
    ap.add_argument("--b", required=True, help="DEV:GIDX of the windows")
    ap.add_argument("--lossy", type=int, metavar="ROUNDS",
                    help="only the rounds for a link that drops packets")
    args = ap.parse_args()
    b = Bench(args.a, args.b)
    if args.lossy:
        lossy(b, args.lossy)
        return tap_done()
    for mw_type, zb in ((e.IBV_MW_TYPE_2, True), (e.IBV_MW_TYPE_1, False),
                        (e.IBV_MW_TYPE_2, False)):
        w = Window(b, mw_type, zb)
        traffic(b, w)
        errors(b, w)
        w.close()
    type1_zero_based(b)
    chained_binds(b)
    bound_region(b)
    return tap_done()


if __name__ == "__main__":
    sys.exit(main())
