#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""On-demand paging checks for odp.sh, in one process on one device: QPs
send to their own GID through memory regions registered with
IBV_ACCESS_ON_DEMAND, whose pages the device maps only when a packet or a
WQE touches them. Prints TAP on stdout. Each pair of QPs is two of
rdma-core's ODP test resources (tests.test_odp: OdpRdmaRC, OdpUD,
OdpSrqRc), connected as rdma-core's own tests connect them, their regions
over the tool's buffers.

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
import unittest

import pyverbs.enums as e
from pyverbs.mr import MR
from pyverbs.wr import RecvWR, SGE, SendWR

from tap_lib import rdma_res
from verbs_lib import differs, pattern, poll_wc, tap, tap_done, tool_args
# verbs_lib made rdma-core's test package importable.
from tests.base import BaseResources
from tests.test_odp import OdpRdmaRC, OdpSrqRc, OdpUD
import tests.utils as u

SIZE = 256 * 1024
MSG = 64 * 1024
# The address space an implicit region maps per child umem (odp.c).
CHUNK = 16 << 20
PROT_RW = 0x3
MAP_SHARED, MAP_PRIVATE, MAP_ANONYMOUS = 0x01, 0x02, 0x20
MADV_DONTNEED = 4
REMOTE = (e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE |
          e.IBV_ACCESS_REMOTE_READ | e.IBV_ACCESS_REMOTE_ATOMIC)
ODP = REMOTE | e.IBV_ACCESS_ON_DEMAND
RC_CAPS = (e.IBV_ODP_SUPPORT_SEND | e.IBV_ODP_SUPPORT_RECV |
           e.IBV_ODP_SUPPORT_WRITE | e.IBV_ODP_SUPPORT_READ |
           e.IBV_ODP_SUPPORT_ATOMIC)

libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                      ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]


def mmap_anon(size, shared):
    flags = (MAP_SHARED if shared else MAP_PRIVATE) | MAP_ANONYMOUS
    addr = libc.mmap(None, size, PROT_RW, flags, -1, 0)
    if addr in (None, ctypes.c_void_p(-1).value):
        raise OSError(ctypes.get_errno(), "mmap")
    return addr


class Buf:
    """An mmap()ed buffer registered on demand. Through an implicit region
    (all of the address space), the buffer straddles a boundary between
    two of the driver's chunks, so that transfers across it need two."""

    def __init__(self, pd, shared, access=ODP, implicit=False):
        self.span = 2 * CHUNK + SIZE if implicit else SIZE
        self.area = mmap_anon(self.span, shared)
        self.addr = self.area
        if implicit:
            boundary = (self.area + 2 * CHUNK - 1) & ~(CHUNK - 1)
            self.addr = boundary - SIZE // 2
        self.mapped = True
        self.mr = MR(pd, SIZE, access, address=self.addr, implicit=implicit)

    def write(self, data, off=0):
        ctypes.memmove(self.addr + off, data, len(data))

    def read(self, size, off=0):
        return ctypes.string_at(self.addr + off, size)

    def dontneed(self):
        return libc.madvise(self.area, self.span, MADV_DONTNEED) == 0

    def unmap(self):
        libc.munmap(self.area, self.span)
        self.mapped = False


class MmapRegion:
    """For rdma-core's ODP resources: their region (mr) is that of buf, a
    Buf of SIZE bytes, shared mapping when the class says so, after
    rdma-core's check of the ODP capabilities the QP type needs."""

    shared = False
    odp_type, odp_caps = "rc", RC_CAPS

    def create_mr(self):
        u.odp_supported(self.ctx, self.odp_type, self.odp_caps)
        self.buf = Buf(self.pd, self.shared)
        self.mr = self.buf.mr


class RcSide(MmapRegion, OdpRdmaRC):
    """rdma-core's ODP RC resources for RDMA (QPs granting remote access)."""

    def __init__(self, dev, port, gidx):
        super().__init__(dev, port, gidx, msg_size=SIZE, odp_caps=RC_CAPS)


class SharedRcSide(RcSide):
    """The same over a shared mapping, which keeps its data when the pages
    are taken away."""
    shared = True


class ImplicitRcSide(RcSide):
    """rdma-core's ODP RC resources over an implicit region: all of the
    process's memory, at its own addresses."""

    def create_mr(self):
        u.odp_supported(self.ctx, self.odp_type, self.odp_caps)
        u.odp_implicit_supported(self.ctx)
        self.buf = Buf(self.pd, False, implicit=True)
        self.mr = self.buf.mr


class UdSide(MmapRegion, OdpUD):
    """rdma-core's ODP UD resources."""
    odp_type = "ud"
    odp_caps = e.IBV_ODP_SUPPORT_SEND | e.IBV_ODP_SUPPORT_RECV


class SrqSide(MmapRegion, OdpSrqRc):
    """rdma-core's ODP RC resources receiving through an SRQ."""
    odp_caps = e.IBV_ODP_SUPPORT_SEND | e.IBV_ODP_SUPPORT_SRQ_RECV


class Bench:
    """Pairs of rdma-core ODP resources on one device, connected as
    rdma-core's own tests connect them."""

    def __init__(self, dev, gidx):
        self.dev, self.gidx = dev, gidx

    def pair(self, cls=RcSide):
        """A sender and a receiver of class cls."""
        s, r = cls(self.dev, 1, self.gidx), cls(self.dev, 1, self.gidx)
        s.pre_run(r.psns, r.qps_num)
        r.pre_run(s.psns, s.qps_num)
        return s, r

    @staticmethod
    def send_wc(side, what):
        wc = poll_wc(side.cq)
        if wc is None:
            return None, "%s: no send completion" % what
        return wc, None

    @staticmethod
    def post_recv(side, buf, size):
        # rdma-core's post_recv() posts to the SRQ when there is one.
        u.post_recv(side, RecvWR(wr_id=size, num_sge=1,
                                 sg=[SGE(buf.addr, size, buf.mr.lkey)]))

    def send(self, s, r, seed, size):
        """SEND from s's buffer into r's; return None or what went
        wrong."""
        ud = s.qp.qp_type == e.IBV_QPT_UD
        grh = u.GRH_SIZE if ud else 0
        data = pattern(seed, size)
        s.buf.write(data)
        r.buf.write(bytes(size + grh))
        self.post_recv(r, r.buf, size + grh)
        wr = SendWR(wr_id=seed, opcode=e.IBV_WR_SEND, num_sge=1,
                    sg=[SGE(s.buf.addr, size, s.mr.lkey)],
                    send_flags=e.IBV_SEND_SIGNALED)
        ah = u.get_global_ah(s, self.gidx, 1) if ud else None
        u.post_send(s, wr, ah=ah)
        wc, why = self.send_wc(s, "send")
        if why or wc.status != e.IBV_WC_SUCCESS:
            return why or "send status %s" % u.wc_status_to_str(wc.status)
        rwc = poll_wc(r.cq)
        if rwc is None or rwc.status != e.IBV_WC_SUCCESS:
            return "receive: %s" % ("no completion" if rwc is None else
                                    u.wc_status_to_str(rwc.status))
        return differs(r.buf.read(size, grh), data)

    def rdma(self, s, r, opcode, seed, size, off=0):
        """WRITE s's buffer to r's, or READ r's into s's, at offset off;
        return None or what went wrong."""
        data = pattern(seed, size)
        local, remote = s.buf, r.buf
        if opcode == e.IBV_WR_RDMA_WRITE:
            local.write(data, off)
            dst = remote
        else:
            remote.write(data, off)
            local.write(bytes(size), off)
            dst = local
        wr = SendWR(wr_id=seed, opcode=opcode, num_sge=1,
                    sg=[SGE(local.addr + off, size, local.mr.lkey)],
                    send_flags=e.IBV_SEND_SIGNALED)
        wr.set_wr_rdma(remote.mr.rkey, remote.addr + off)
        u.post_send(s, wr)
        wc, why = self.send_wc(s, "rdma")
        if why or wc.status != e.IBV_WC_SUCCESS:
            return why or "status %s" % u.wc_status_to_str(wc.status)
        return differs(dst.read(size, off), data)

    def atomic(self, s, r, opcode, cmp_add, swap, off):
        """One atomic on r's buffer at off; return (original, error)."""
        local, remote = s.buf, r.buf
        wr = SendWR(wr_id=off, opcode=opcode, num_sge=1,
                    sg=[SGE(local.addr + off, 8, local.mr.lkey)],
                    send_flags=e.IBV_SEND_SIGNALED)
        wr.set_wr_atomic(remote.mr.rkey, remote.addr + off, cmp_add, swap)
        u.post_send(s, wr)
        wc, why = self.send_wc(s, "atomic")
        if why or wc.status != e.IBV_WC_SUCCESS:
            return None, why or "status %s" % u.wc_status_to_str(wc.status)
        return int.from_bytes(local.read(8, off), "little"), None


def counter(dev, name):
    """A counter of the device's port, as "rdma statistic" shows it."""
    out = subprocess.run(["rdma", "statistic", "show", "link", dev + "/1"],
                         capture_output=True, text=True, check=True).stdout
    words = out.split()
    return int(words[words.index(name) + 1])


def check_caps(b):
    caps = BaseResources(b.dev, 1, b.gidx).ctx.query_device_ex().odp_caps
    rc = RC_CAPS | e.IBV_ODP_SUPPORT_SRQ_RECV
    ud = e.IBV_ODP_SUPPORT_SEND | e.IBV_ODP_SUPPORT_RECV
    tap(caps.general_caps & e.IBV_ODP_SUPPORT and
        caps.rc_odp_caps & rc == rc and caps.uc_odp_caps & ud == ud and
        caps.ud_odp_caps & ud == ud,
        "ODP capabilities advertised for RC, UC and UD",
        "general %#x rc %#x uc %#x ud %#x" % (
            caps.general_caps, caps.rc_odp_caps, caps.uc_odp_caps,
            caps.ud_odp_caps))


def check_traffic(b, dev):
    a, r = b.pair()
    src, dst = a.buf, r.buf
    faults = counter(dev, "odp_page_faults")
    tap(b.send(a, r, 1, MSG) is None,
        "RC SEND of 64 KiB between regions not yet mapped")
    tap(counter(dev, "odp_page_faults") > faults,
        "the device faulted pages in (odp_page_faults grew)")
    why = b.rdma(a, r, e.IBV_WR_RDMA_WRITE, 2, MSG, MSG)
    tap(why is None, "RDMA WRITE of 64 KiB to unmapped pages", why)
    why = b.rdma(a, r, e.IBV_WR_RDMA_READ, 3, MSG, 2 * MSG)
    tap(why is None, "RDMA READ of 64 KiB into and out of unmapped pages",
        why)
    dst.write((1000).to_bytes(8, "little"), 3 * MSG)
    orig, why = b.atomic(a, r, e.IBV_WR_ATOMIC_FETCH_AND_ADD, 5, 0, 3 * MSG)
    new = int.from_bytes(dst.read(8, 3 * MSG), "little")
    tap(why is None and orig == 1000 and new == 1005,
        "fetch and add on an unmapped page",
        why or "returned %s, memory %d" % (orig, new))
    dst.write((7).to_bytes(8, "little"), 3 * MSG + 4096)
    orig, why = b.atomic(a, r, e.IBV_WR_ATOMIC_CMP_AND_SWP, 7, 99,
                         3 * MSG + 4096)
    new = int.from_bytes(dst.read(8, 3 * MSG + 4096), "little")
    tap(why is None and orig == 7 and new == 99,
        "compare and swap on an unmapped page",
        why or "returned %s, memory %d" % (orig, new))
    for buf in (src, dst):
        buf.dontneed()
    tap(b.send(a, r, 4, MSG) is None,
        "SEND again after the pages were taken away (MADV_DONTNEED)")

    why = b.send(*b.pair(UdSide), 5, 1000)
    tap(why is None, "UD SEND into an unmapped receive buffer", why)
    why = b.send(*b.pair(SrqSide), 6, MSG)
    tap(why is None, "RC SEND into an unmapped SRQ receive buffer", why)


def implicit_chunks(dev):
    """The chunk counts of the device's implicit regions."""
    objs, out = rdma_res("mr", "dev", dev)
    return [o.get("odp_chunks") for o in objs
            if o.get("odp") == 1 and o.get("iova") == 0 and
            o.get("length") == 2 ** 64 - 1], out


def check_implicit(b, dev):
    """Implicit regions: every transfer crosses or touches the boundary
    between two chunks of the address space."""
    caps = BaseResources(b.dev, 1, b.gidx).ctx.query_device_ex().odp_caps
    tap(caps.general_caps & e.IBV_ODP_SUPPORT_IMPLICIT,
        "implicit on-demand regions advertised",
        "general caps %#x" % caps.general_caps)
    a, r = b.pair(ImplicitRcSide)
    mid = SIZE // 2
    why = b.send(a, r, 11, SIZE)
    tap(why is None, "RC SEND of 256 KiB across two chunks of implicit "
        "regions, nothing mapped yet", why)
    why = b.rdma(a, r, e.IBV_WR_RDMA_WRITE, 12, MSG, mid - MSG // 2)
    tap(why is None, "RDMA WRITE across a chunk boundary", why)
    why = b.rdma(a, r, e.IBV_WR_RDMA_READ, 13, MSG, mid - MSG // 2 + 8)
    tap(why is None, "RDMA READ across a chunk boundary", why)
    for off, opcode, cmp_add, swap, want in (
            (mid - 8, e.IBV_WR_ATOMIC_FETCH_AND_ADD, 5, 0, 1005),
            (mid, e.IBV_WR_ATOMIC_CMP_AND_SWP, 1000, 77, 77)):
        r.buf.write((1000).to_bytes(8, "little"), off)
        orig, why = b.atomic(a, r, opcode, cmp_add, swap, off)
        new = int.from_bytes(r.buf.read(8, off), "little")
        tap(why is None and orig == 1000 and new == want,
            "atomic on the last 8 bytes %s the boundary" %
            ("before" if off < mid else "after"),
            why or "returned %s, memory %d" % (orig, new))
    chunks, out = implicit_chunks(dev)
    tap(chunks == [2, 2], "rdma resource show mr -dd: each implicit region "
        "has the two chunks its buffer spans", "%s\n%s" % (chunks, out))
    for buf in (a.buf, r.buf):
        buf.dontneed()
    why = b.send(a, r, 14, SIZE)
    tap(why is None, "SEND again after the pages were taken away", why)

    # An address with nothing behind it: the WRITE fails, the region
    # keeps no chunk for it.
    errors = counter(dev, "odp_page_fault_errors")
    hole = mmap_anon(2 * CHUNK, False)
    libc.munmap(hole, 2 * CHUNK)
    hole = (hole + CHUNK - 1) & ~(CHUNK - 1)
    a.buf.write(pattern(15, 4096))
    wr = SendWR(wr_id=15, opcode=e.IBV_WR_RDMA_WRITE, num_sge=1,
                sg=[SGE(a.buf.addr, 4096, a.mr.lkey)],
                send_flags=e.IBV_SEND_SIGNALED)
    wr.set_wr_rdma(r.mr.rkey, hole)
    u.post_send(a, wr)
    wc = poll_wc(a.cq)
    tap(wc is not None and wc.status == e.IBV_WC_REM_ACCESS_ERR,
        "RDMA WRITE through an implicit region to unmapped memory: remote "
        "access error",
        "no completion" if wc is None else u.wc_status_to_str(wc.status))
    chunks, out = implicit_chunks(dev)
    tap(counter(dev, "odp_page_fault_errors") > errors and chunks == [2, 2],
        "the failed fault is counted and leaves no chunk behind",
        "%s\n%s" % (chunks, out))
    try:
        for side in (a, r):
            side.mr.close()
        why = None
    except Exception as exc:  # pylint: disable=broad-except
        why = exc
    tap(why is None, "implicit regions with chunks deregistered", why)


def check_race(b, dev, rounds, zap_us):
    """Transfers while another thread keeps taking the pages away: shared
    mappings keep their data, so every transfer must still be exact."""
    a, r = b.pair(SharedRcSide)
    src, dst = a.buf, r.buf
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
                why = b.send(a, r, 100 + i, size)
            else:
                why = b.rdma(a, r, ops[i % 3], 100 + i, size,
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


def check_unmapped(b, dev):
    """Regions whose memory is gone: the access fails, the QP with it."""
    errors = counter(dev, "odp_page_fault_errors")
    a, r = b.pair()
    good, gone = a.buf, r.buf
    gone.unmap()
    good.write(pattern(9, 4096))
    wr = SendWR(wr_id=9, opcode=e.IBV_WR_RDMA_WRITE, num_sge=1,
                sg=[SGE(good.addr, 4096, good.mr.lkey)],
                send_flags=e.IBV_SEND_SIGNALED)
    wr.set_wr_rdma(gone.mr.rkey, gone.addr)
    u.post_send(a, wr)
    wc = poll_wc(a.cq)
    tap(wc is not None and wc.status == e.IBV_WC_REM_ACCESS_ERR,
        "RDMA WRITE to an unmapped range: remote access error",
        "no completion" if wc is None else u.wc_status_to_str(wc.status))

    a, r = b.pair()
    good, gone = r.buf, a.buf
    gone.unmap()
    b.post_recv(r, good, 4096)
    wr = SendWR(wr_id=10, opcode=e.IBV_WR_SEND, num_sge=1,
                sg=[SGE(gone.addr, 4096, gone.mr.lkey)],
                send_flags=e.IBV_SEND_SIGNALED)
    u.post_send(a, wr)
    wc = poll_wc(a.cq)
    tap(wc is not None and wc.status == e.IBV_WC_LOC_PROT_ERR,
        "SEND from an unmapped range: local protection error",
        "no completion" if wc is None else u.wc_status_to_str(wc.status))
    tap(counter(dev, "odp_page_fault_errors") >= errors + 2,
        "failed faults counted (odp_page_fault_errors)")


def main():
    args = tool_args(__doc__, (
        (("--rounds",), {"type": int, "default": 200}),
        (("--zap-us",), {"type": int, "default": 500,
                         "help": "pause between two takings of the pages"})))
    b = Bench(args.dev, args.gid_index)
    for check, more in ((check_caps, ()), (check_traffic, (args.dev,)),
                        (check_race, (args.dev, args.rounds, args.zap_us)),
                        (check_unmapped, (args.dev,)),
                        (check_implicit, (args.dev,))):
        try:
            check(b, *more)
        except unittest.SkipTest as exc:
            # rdma-core's resources skip what the device does not offer.
            tap(False, check.__name__, "rdma-core skips: %s" % exc)
    return tap_done()


if __name__ == "__main__":
    sys.exit(main())
