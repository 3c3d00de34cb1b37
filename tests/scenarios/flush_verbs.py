#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""IBTA 1.5 FLUSH checks for flush.sh, in one process on one device: an RC
QP sends FLUSH requests (send WQE opcode 14) to a QP of its own GID and
checks each completion, the data the FLUSH covers, and the errors. Prints
TAP on stdout. The requester and the responder are rdma-core's RC test
resources (tests.base.RCResources), connected as rdma-core's own tests
connect them.

  flush_verbs.py -d DEV -g GIDX

rdma-core 44 has no ibv_wr_flush(), so the tool writes the WQE into the
send ring itself, with the fields a newer librxe writes (user ABI: the
wr.flush variant of the send WR), and rings the doorbell by posting an
ordinary WRITE after it: librxe takes the ring's producer index from the
ring, where the tool advanced it.
"""

import ctypes
import os
import struct
import sys

import pyverbs.enums as e
from pyverbs.qp import QPCap
from pyverbs.wr import SGE, SendWR

from verbs_lib import pattern, poll_wc, tap, tap_done, tool_args
# verbs_lib made rdma-core's test package importable.
from tests.base import RCResources
import tests.utils as u

WR_FLUSH = 14
WC_FLUSH = 8
ACCESS_FLUSH_GLOBAL = 1 << 8
ACCESS_FLUSH_PERSISTENT = 1 << 9
DEVICE_FLUSH_GLOBAL = 1 << 38
DEVICE_FLUSH_PERSISTENT = 1 << 39
FLUSH_GLOBAL, FLUSH_PERSISTENT = 1, 2
LEVEL_RANGE, LEVEL_MR = 0, 1
SIZE = 128 * 1024
DOORBELL = SIZE - 8
SQ_WR = 64
# QP pairs: one for the FLUSHes that work, one per refused FLUSH (its
# error leaves the pair in the error state).
PAIRS = 7
REMOTE = (e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_REMOTE_READ |
          e.IBV_ACCESS_REMOTE_ATOMIC)

# struct rxe_queue_buf: indices at 128 and 256, slots from 384.
Q_PROD, Q_CONS, Q_DATA = 128, 256, 384
# struct rxe_send_wqe: wr.{wr_id, opcode, send_flags} at 0, 12, 16;
# wr.wr.flush.{remote_addr, length, rkey, type, level} at 24, 32, 36, 40,
# 41; iova at 152; dma.{length, resid, num_sge} at 184, 188, 196.


def uverbs_mappings():
    """The address ranges of this process's mappings of uverbs devices."""
    found = set()
    with open("/proc/self/maps") as maps:
        for line in maps:
            if "/dev/infiniband/uverbs" in line:
                lo, hi = line.split()[0].split("-")
                found.add((int(lo, 16), int(hi, 16)))
    return found


def u32(addr):
    return ctypes.c_uint32.from_address(addr)


class SendRing:
    """A QP's send queue, as the user ABI lays it out in shared memory."""

    def __init__(self, addr):
        self.addr = addr
        self.log2 = u32(addr).value
        self.mask = u32(addr + 4).value

    def post_flush(self, wr_id, rkey, addr, length, ptype, level):
        prod = u32(self.addr + Q_PROD).value
        if (prod + 1) & self.mask == u32(self.addr + Q_CONS).value:
            raise OSError("send queue full")
        slot = self.addr + Q_DATA + (prod << self.log2)
        ctypes.memset(slot, 0, 1 << self.log2)
        buf = (ctypes.c_char * 200).from_address(slot)
        struct.pack_into("<QIII", buf, 0, wr_id, 0, WR_FLUSH,
                         e.IBV_SEND_SIGNALED)
        struct.pack_into("<QIIBB", buf, 24, addr, length, rkey, ptype, level)
        struct.pack_into("<Q", buf, 152, addr)
        struct.pack_into("<II", buf, 184, length, length)
        # x86 keeps stores in order: the slot is written before the index.
        u32(self.addr + Q_PROD).value = (prod + 1) & self.mask


class FlushRC(RCResources):
    """rdma-core's RC resources with PAIRS QPs granting remote access, a
    deep send queue and a local region of SIZE bytes; rings[i] is the send
    ring of qps[i], found among the mappings its creation added."""

    def __init__(self, dev, gidx):
        self.rings = []
        super().__init__(dev, 1, gidx, qp_count=PAIRS, msg_size=SIZE)

    def create_mr(self):
        self.mr = u.create_custom_mr(self, REMOTE)

    def create_qp_cap(self):
        return QPCap(max_send_wr=SQ_WR, max_recv_wr=2, max_send_sge=1,
                     max_recv_sge=1)

    def create_qp_attr(self):
        attr = super().create_qp_attr()
        attr.qp_access_flags = e.IBV_ACCESS_LOCAL_WRITE | REMOTE
        return attr

    def create_qps(self):
        """rdma-core's QPs, one at a time, each with its send ring."""
        count, self.qp_count = self.qp_count, 1
        try:
            for _ in range(count):
                before = uverbs_mappings()
                super().create_qps()
                ring = None
                for lo, _ in uverbs_mappings() - before:
                    if u32(lo + 4).value + 1 >= SQ_WR:
                        ring = SendRing(lo)
                if ring is None:
                    raise OSError("no send ring among the new mappings")
                self.rings.append(ring)
        finally:
            self.qp_count = count


class Bench:
    """A requester and a responder on one device, rdma-core's resources
    each, their QP pairs connected through rdma-core's pre_run(); pairs
    are used up one by one, the targets of FLUSH are regions of the
    responder."""

    def __init__(self, dev, gidx):
        self.cli = FlushRC(dev, gidx)
        self.srv = FlushRC(dev, gidx)
        self.cli.pre_run(self.srv.psns, self.srv.qps_num)
        self.srv.pre_run(self.cli.psns, self.cli.qps_num)
        self.used = 0

    def pair(self):
        """The index of a pair not used yet."""
        self.used += 1
        return self.used - 1

    def target(self, access):
        """A region of the responder, writable locally, with access."""
        return u.create_custom_mr(self.srv, access, SIZE)

    def write(self, qp_idx, mr, off, data, wr_id):
        self.cli.mem_write(data, len(data), off)
        wr = SendWR(wr_id=wr_id, opcode=e.IBV_WR_RDMA_WRITE, num_sge=1,
                    sg=[SGE(self.cli.mr.buf + off, len(data),
                            self.cli.mr.lkey)],
                    send_flags=e.IBV_SEND_SIGNALED)
        wr.set_wr_rdma(mr.rkey, mr.buf + off)
        u.post_send(self.cli, wr, qp_idx=qp_idx)

    def flush(self, qp_idx, mr, wr_id, addr, length, ptype=FLUSH_GLOBAL,
              level=LEVEL_RANGE):
        """Post a FLUSH, then a WRITE of the last 8 bytes (no range a check
        reads) that rings the doorbell; return their two completions (None
        for a missing one)."""
        self.cli.rings[qp_idx].post_flush(wr_id, mr.rkey, addr, length,
                                          ptype, level)
        wr = SendWR(wr_id=wr_id + 1, opcode=e.IBV_WR_RDMA_WRITE, num_sge=1,
                    sg=[SGE(self.cli.mr.buf + DOORBELL, 8, self.cli.mr.lkey)],
                    send_flags=e.IBV_SEND_SIGNALED)
        wr.set_wr_rdma(mr.rkey, mr.buf + DOORBELL)
        u.post_send(self.cli, wr, qp_idx=qp_idx)
        return poll_wc(self.cli.cq), poll_wc(self.cli.cq)


def flushable():
    """Registration rights a region needs to be flushed: its own right where
    the kernel knows it (6.2 on), the right to be written before."""
    return ACCESS_FLUSH_GLOBAL if new_kernel() else 0


def new_kernel():
    major, minor = (int(x) for x in os.uname().release.split(".")[:2])
    return (major, minor) >= (6, 2)


def check_caps(b):
    caps = b.cli.ctx.query_device_ex().device_cap_flags_ex
    if new_kernel():
        tap(caps & DEVICE_FLUSH_GLOBAL and
            not caps & DEVICE_FLUSH_PERSISTENT,
            "FLUSH_GLOBAL advertised, FLUSH_PERSISTENT not",
            "device_cap_flags_ex 0x%x" % caps)
        try:
            b.target(REMOTE | ACCESS_FLUSH_PERSISTENT).close()
            tap(False, "a persistent-flush region is refused", "registered")
        except Exception:  # pylint: disable=broad-except
            tap(True, "a persistent-flush region is refused")
    else:
        tap(not caps & (DEVICE_FLUSH_GLOBAL | DEVICE_FLUSH_PERSISTENT),
            "no FLUSH capability bits where ib_core has none",
            "device_cap_flags_ex 0x%x" % caps)


def wc_ok(wc, wr_id, opcode):
    if wc is None:
        return "no completion"
    if wc.status != e.IBV_WC_SUCCESS or wc.wr_id != wr_id or \
            wc.opcode != opcode:
        return "status %d, wr_id %d, opcode %d" % (wc.status, wc.wr_id,
                                                   wc.opcode)
    return None


def check_flush(b):
    """WRITEs then a FLUSH of their range, of the whole region from an
    address outside it, and a run of them; the data is checked."""
    target = b.target(REMOTE | flushable())
    a = b.pair()
    why = None
    for i in range(40):
        data = pattern(i, 4096)
        off = (i % 16) * 4096
        b.write(a, target, off, data, 1000 + i)
        why = wc_ok(poll_wc(b.cli.cq), 1000 + i, e.IBV_WC_RDMA_WRITE)
        level = LEVEL_MR if i % 2 else LEVEL_RANGE
        addr = target.buf + off if level == LEVEL_RANGE else 8
        flush, door = b.flush(a, target, 2 * i, addr, 4096, level=level)
        why = why or wc_ok(flush, 2 * i, WC_FLUSH) or \
            wc_ok(door, 2 * i + 1, e.IBV_WC_RDMA_WRITE)
        if not why and target.read(4096, off) != data:
            why = "round %d: the flushed range holds other data" % i
        if why:
            why = "round %d: %s" % (i, why)
            break
    tap(not why, "40 WRITEs, each followed by a FLUSH of its range or of "
        "the whole region: completions and data", why)
    target.close()


def check_refused(b, what, target, addr, length, ptype, level, status):
    """A FLUSH that must fail with status; the WRITE behind it is then
    flushed by the QP's error."""
    flush, door = b.flush(b.pair(), target, 7, addr, length, ptype, level)
    why = None
    if flush is None or flush.status != status or flush.wr_id != 7:
        why = "FLUSH: %s" % ("no completion" if flush is None else
                             "status %d" % flush.status)
    elif door is None or door.status != e.IBV_WC_WR_FLUSH_ERR:
        why = "the WRITE behind it: %s" % (
            "no completion" if door is None else "status %d" % door.status)
    tap(not why, what, why)


def check_errors(b):
    target = b.target(REMOTE | flushable())
    check_refused(b, "FLUSH past the region's end: remote access error",
                  target, target.buf + SIZE - 8, 16, FLUSH_GLOBAL,
                  LEVEL_RANGE, e.IBV_WC_REM_ACCESS_ERR)
    check_refused(b, "persistent FLUSH: remote access error", target,
                  target.buf, 8, FLUSH_PERSISTENT, LEVEL_RANGE,
                  e.IBV_WC_REM_ACCESS_ERR)
    check_refused(b, "FLUSH with no placement type: local QP error", target,
                  target.buf, 8, 0, LEVEL_RANGE, e.IBV_WC_LOC_QP_OP_ERR)
    check_refused(b, "FLUSH with an unknown selectivity level: local QP "
                  "error", target, target.buf, 8, FLUSH_GLOBAL, 3,
                  e.IBV_WC_LOC_QP_OP_ERR)
    read_only = b.target(e.IBV_ACCESS_REMOTE_READ)
    check_refused(b, "FLUSH of a region without the right: remote access "
                  "error", read_only, read_only.buf, 8, FLUSH_GLOBAL,
                  LEVEL_RANGE, e.IBV_WC_REM_ACCESS_ERR)
    read_only.close()
    if new_kernel():
        writable = b.target(REMOTE)
        check_refused(b, "FLUSH of a writable region without the right to "
                      "be flushed: remote access error", writable,
                      writable.buf, 8, FLUSH_GLOBAL, LEVEL_RANGE,
                      e.IBV_WC_REM_ACCESS_ERR)
        writable.close()
    target.close()


def main():
    args = tool_args(__doc__)
    b = Bench(args.dev, args.gid_index)
    check_caps(b)
    check_flush(b)
    check_errors(b)
    return tap_done()


if __name__ == "__main__":
    sys.exit(main())
