#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""On-demand paging checks for odp.sh, in one process on one device: QPs
send to their own GID through memory regions registered with
IBV_ACCESS_ON_DEMAND, whose pages the device maps only when a packet or a
WQE touches them. Prints TAP on stdout.

  odp_verbs.py -d DEV -g GIDX

Buffers come from mmap() so that the tool can take pages away under the
device: MADV_DONTNEED on a shared mapping drops the process's mapping (the
device's too, through its MMU notifier) but keeps the data, and munmap()
leaves the region's addresses with nothing behind them. Every transfer's
payload is checked byte by byte.
"""

import ctypes
import subprocess
import sys
import threading
import time

import pyverbs.enums as e
from pyverbs.addr import AH, AHAttr, GlobalRoute
from pyverbs.mr import MR
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.srq import SRQ, SrqAttr, SrqInitAttr
from pyverbs.wr import RecvWR, SGE, SendWR

from verbs_lib import (Loopback, pattern, poll_one, rc_rts_attr, tap,
                       tap_done, tool_args)

SIZE = 256 * 1024
MSG = 64 * 1024
GRH = 40
QKEY = 0x22222222
POLL_LIMIT = 30.0
PROT_RW = 0x3
MAP_SHARED, MAP_PRIVATE, MAP_ANONYMOUS = 0x01, 0x02, 0x20
MADV_DONTNEED = 4
REMOTE = (e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE |
          e.IBV_ACCESS_REMOTE_READ | e.IBV_ACCESS_REMOTE_ATOMIC)
ODP = REMOTE | e.IBV_ACCESS_ON_DEMAND

libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                      ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]


def first_diff(got, want):
    return next(i for i in range(len(want)) if got[i] != want[i])


class Buf:
    """An mmap()ed buffer registered on demand."""

    def __init__(self, pd, shared, access=ODP):
        flags = (MAP_SHARED if shared else MAP_PRIVATE) | MAP_ANONYMOUS
        self.addr = libc.mmap(None, SIZE, PROT_RW, flags, -1, 0)
        if self.addr in (None, ctypes.c_void_p(-1).value):
            raise OSError(ctypes.get_errno(), "mmap")
        self.mapped = True
        self.mr = MR(pd, SIZE, access, address=self.addr)

    def write(self, data, off=0):
        ctypes.memmove(self.addr + off, data, len(data))

    def read(self, size, off=0):
        return ctypes.string_at(self.addr + off, size)

    def dontneed(self):
        return libc.madvise(self.addr, SIZE, MADV_DONTNEED) == 0

    def unmap(self):
        libc.munmap(self.addr, SIZE)
        self.mapped = False

    def close(self):
        self.mr.close()
        if self.mapped:
            self.unmap()


class Bench(Loopback):
    """The device, an SRQ, and QPs sending to its own GID."""

    def __init__(self, dev, gidx):
        super().__init__(dev, gidx)
        self.srq = SRQ(self.pd, SrqInitAttr(SrqAttr(max_wr=16, max_sge=1)))
        gr = GlobalRoute(dgid=self.gid, sgid_index=gidx, hop_limit=64)
        self.ah = AH(self.pd, attr=AHAttr(port_num=1, is_global=1, gr=gr))

    def qp(self, qpt, srq=None):
        cap = QPCap(max_send_wr=16, max_recv_wr=0 if srq else 16,
                    max_send_sge=1, max_recv_sge=0 if srq else 1)
        init = QPInitAttr(qp_type=qpt, scq=self.scq, rcq=self.rcq, srq=srq,
                          cap=cap, sq_sig_all=1)
        attr = QPAttr(port_num=1)
        attr.qkey = QKEY
        attr.sq_psn = 0
        attr.qp_access_flags = REMOTE
        return QP(self.pd, init, attr)

    def rc_pair(self, srq=None):
        a, b = self.qp(e.IBV_QPT_RC), self.qp(e.IBV_QPT_RC, srq)
        a.to_rts(rc_rts_attr(self.gid, self.gidx, b.qp_num, REMOTE))
        b.to_rts(rc_rts_attr(self.gid, self.gidx, a.qp_num, REMOTE))
        return a, b

    @staticmethod
    def poll(cq):
        return poll_one(cq, POLL_LIMIT)

    def send_wc(self, what):
        wc = self.poll(self.scq)
        if wc is None:
            return None, "%s: no send completion" % what
        return wc, None

    def post_recv(self, qp, buf, off, size, srq=False):
        wr = RecvWR(wr_id=off, num_sge=1,
                    sg=[SGE(buf.addr + off, size, buf.mr.lkey)])
        (self.srq if srq else qp).post_recv(wr)

    def send(self, sq, rq, src, dst, seed, size, srq=False, ud=False):
        """SEND from src into dst through rq (or the SRQ); return None or
        what went wrong."""
        data = pattern(seed, size)
        src.write(data)
        dst.write(bytes(size + GRH))
        self.post_recv(rq, dst, 0, size + (GRH if ud else 0), srq)
        wr = SendWR(wr_id=seed, opcode=e.IBV_WR_SEND, num_sge=1,
                    sg=[SGE(src.addr, size, src.mr.lkey)])
        if ud:
            wr.set_wr_ud(self.ah, rq.qp_num, QKEY)
        sq.post_send(wr)
        wc, why = self.send_wc("send")
        if why or wc.status != e.IBV_WC_SUCCESS:
            return why or "send status %d" % wc.status
        rwc = self.poll(self.rcq)
        if rwc is None or rwc.status != e.IBV_WC_SUCCESS:
            return "receive: %s" % ("no completion" if rwc is None
                                    else "status %d" % rwc.status)
        got = dst.read(size, GRH if ud else 0)
        if got != data:
            return "payload differs from offset %d" % first_diff(got, data)
        return None

    def rdma(self, qp, opcode, local, remote, seed, size, off=0):
        """WRITE local to remote, or READ remote into local, at offset
        off; return None or what went wrong."""
        data = pattern(seed, size)
        if opcode == e.IBV_WR_RDMA_WRITE:
            local.write(data, off)
            dst = remote
        else:
            remote.write(data, off)
            local.write(bytes(size), off)
            dst = local
        wr = SendWR(wr_id=seed, opcode=opcode, num_sge=1,
                    sg=[SGE(local.addr + off, size, local.mr.lkey)])
        wr.set_wr_rdma(remote.mr.rkey, remote.addr + off)
        qp.post_send(wr)
        wc, why = self.send_wc("rdma")
        if why or wc.status != e.IBV_WC_SUCCESS:
            return why or "status %d" % wc.status
        got = dst.read(size, off)
        if got != data:
            return "payload differs from offset %d" % first_diff(got, data)
        return None

    def atomic(self, qp, opcode, local, remote, cmp_add, swap, off):
        """One atomic on remote at off; return (original, error)."""
        wr = SendWR(wr_id=off, opcode=opcode, num_sge=1,
                    sg=[SGE(local.addr + off, 8, local.mr.lkey)])
        wr.set_wr_atomic(remote.mr.rkey, remote.addr + off, cmp_add, swap)
        qp.post_send(wr)
        wc, why = self.send_wc("atomic")
        if why or wc.status != e.IBV_WC_SUCCESS:
            return None, why or "status %d" % wc.status
        return int.from_bytes(local.read(8, off), "little"), None


def counter(dev, name):
    """A counter of the device's port, as "rdma statistic" shows it."""
    out = subprocess.run(["rdma", "statistic", "show", "link", dev + "/1"],
                         capture_output=True, text=True, check=True).stdout
    words = out.split()
    return int(words[words.index(name) + 1])


def check_caps(b):
    caps = b.ctx.query_device_ex().odp_caps
    rc = (e.IBV_ODP_SUPPORT_SEND | e.IBV_ODP_SUPPORT_RECV |
          e.IBV_ODP_SUPPORT_WRITE | e.IBV_ODP_SUPPORT_READ |
          e.IBV_ODP_SUPPORT_ATOMIC | e.IBV_ODP_SUPPORT_SRQ_RECV)
    ud = e.IBV_ODP_SUPPORT_SEND | e.IBV_ODP_SUPPORT_RECV
    tap(caps.general_caps & e.IBV_ODP_SUPPORT and
        caps.rc_odp_caps & rc == rc and caps.uc_odp_caps & ud == ud and
        caps.ud_odp_caps & ud == ud,
        "ODP capabilities advertised for RC, UC and UD",
        "general %#x rc %#x uc %#x ud %#x" % (
            caps.general_caps, caps.rc_odp_caps, caps.uc_odp_caps,
            caps.ud_odp_caps))


def check_traffic(b, dev):
    a, r = b.rc_pair()
    src, dst = Buf(b.pd, False), Buf(b.pd, False)
    faults = counter(dev, "odp_page_faults")
    tap(b.send(a, r, src, dst, 1, MSG) is None,
        "RC SEND of 64 KiB between regions not yet mapped")
    tap(counter(dev, "odp_page_faults") > faults,
        "the device faulted pages in (odp_page_faults grew)")
    why = b.rdma(a, e.IBV_WR_RDMA_WRITE, src, dst, 2, MSG, MSG)
    tap(why is None, "RDMA WRITE of 64 KiB to unmapped pages", why)
    why = b.rdma(a, e.IBV_WR_RDMA_READ, src, dst, 3, MSG, 2 * MSG)
    tap(why is None, "RDMA READ of 64 KiB into and out of unmapped pages",
        why)
    dst.write((1000).to_bytes(8, "little"), 3 * MSG)
    orig, why = b.atomic(a, e.IBV_WR_ATOMIC_FETCH_AND_ADD, src, dst, 5, 0,
                         3 * MSG)
    new = int.from_bytes(dst.read(8, 3 * MSG), "little")
    tap(why is None and orig == 1000 and new == 1005,
        "fetch and add on an unmapped page",
        why or "returned %s, memory %d" % (orig, new))
    dst.write((7).to_bytes(8, "little"), 3 * MSG + 4096)
    orig, why = b.atomic(a, e.IBV_WR_ATOMIC_CMP_AND_SWP, src, dst, 7, 99,
                         3 * MSG + 4096)
    new = int.from_bytes(dst.read(8, 3 * MSG + 4096), "little")
    tap(why is None and orig == 7 and new == 99,
        "compare and swap on an unmapped page",
        why or "returned %s, memory %d" % (orig, new))
    for buf in (src, dst):
        buf.dontneed()
    tap(b.send(a, r, src, dst, 4, MSG) is None,
        "SEND again after the pages were taken away (MADV_DONTNEED)")

    s, d = Buf(b.pd, False), Buf(b.pd, False)
    ua, ur = b.qp(e.IBV_QPT_UD), b.qp(e.IBV_QPT_UD)
    why = b.send(ua, ur, s, d, 5, 1000, ud=True)
    tap(why is None, "UD SEND into an unmapped receive buffer", why)
    sa, sr = b.rc_pair(b.srq)
    why = b.send(sa, sr, s, d, 6, MSG, srq=True)
    tap(why is None, "RC SEND into an unmapped SRQ receive buffer", why)
    for buf in (src, dst, s, d):
        buf.close()


def check_race(b, dev, rounds, zap_us):
    """Transfers while another thread keeps taking the pages away: shared
    mappings keep their data, so every transfer must still be exact."""
    a, r = b.rc_pair()
    src, dst = Buf(b.pd, True), Buf(b.pd, True)
    stop = threading.Event()
    zaps = [0]

    def zapper():
        while not stop.is_set():
            src.dontneed()
            dst.dontneed()
            zaps[0] += 1
            time.sleep(zap_us / 1e6)

    faults = counter(dev, "odp_page_faults")
    t = threading.Thread(target=zapper)
    t.start()
    why = None
    ops = (e.IBV_WR_RDMA_WRITE, e.IBV_WR_RDMA_READ)
    try:
        for i in range(rounds):
            size = 4096 * (1 + i % 16) + i % 7
            if i % 3 == 2:
                why = b.send(a, r, src, dst, 100 + i, size)
            else:
                why = b.rdma(a, ops[i % 3], src, dst, 100 + i, size,
                             (i % 8) * 8192)
            if why:
                why = "round %d: %s" % (i, why)
                break
    finally:
        stop.set()
        t.join()
    tap(why is None, "%d SEND/WRITE/READ rounds while the pages are taken "
        "away %d times" % (rounds, zaps[0]), why)
    refaults = counter(dev, "odp_page_faults") - faults
    tap(refaults > 2 and zaps[0] > 2,
        "pages faulted in again after invalidation (%d faults)" % refaults)
    src.close()
    dst.close()


def check_unmapped(b, dev):
    """Regions whose memory is gone: the access fails, the QP with it."""
    errors = counter(dev, "odp_page_fault_errors")
    a, r = b.rc_pair()
    good, gone = Buf(b.pd, False), Buf(b.pd, False)
    gone.unmap()
    good.write(pattern(9, 4096))
    wr = SendWR(wr_id=9, opcode=e.IBV_WR_RDMA_WRITE, num_sge=1,
                sg=[SGE(good.addr, 4096, good.mr.lkey)])
    wr.set_wr_rdma(gone.mr.rkey, gone.addr)
    a.post_send(wr)
    wc = b.poll(b.scq)
    tap(wc is not None and wc.status == e.IBV_WC_REM_ACCESS_ERR,
        "RDMA WRITE to an unmapped range: remote access error",
        "no completion" if wc is None else "status %d" % wc.status)

    a, r = b.rc_pair()
    b.post_recv(r, good, 0, 4096)
    wr = SendWR(wr_id=10, opcode=e.IBV_WR_SEND, num_sge=1,
                sg=[SGE(gone.addr, 4096, gone.mr.lkey)])
    a.post_send(wr)
    wc = b.poll(b.scq)
    tap(wc is not None and wc.status == e.IBV_WC_LOC_PROT_ERR,
        "SEND from an unmapped range: local protection error",
        "no completion" if wc is None else "status %d" % wc.status)
    tap(counter(dev, "odp_page_fault_errors") >= errors + 2,
        "failed faults counted (odp_page_fault_errors)")
    good.close()
    gone.close()


def main():
    args = tool_args(__doc__, (
        (("--rounds",), {"type": int, "default": 200}),
        (("--zap-us",), {"type": int, "default": 500,
                         "help": "pause between two takings of the pages"})))
    b = Bench(args.dev, args.gid_index)
    check_caps(b)
    check_traffic(b, args.dev)
    check_race(b, args.dev, args.rounds, args.zap_us)
    check_unmapped(b, args.dev)
    return tap_done()


if __name__ == "__main__":
    sys.exit(main())
