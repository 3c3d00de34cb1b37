# SPDX-License-Identifier: GPL-2.0
"""pyverbs helpers shared by the scenario tools (srq_verbs.py, odp_verbs.py,
scale_mr.py): TAP output, payload patterns, QP attributes."""

import argparse
import sys
import time

import pyverbs.enums as e
from pyverbs.addr import AHAttr, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.pd import PD
from pyverbs.qp import QPAttr


def rc_rts_attr(dgid, gidx, dest_qpn, access=0):
    """Attributes taking an RC or UC QP to RTS towards QP dest_qpn at
    dgid, through GID index gidx, both PSNs 0, MTU 1024."""
    attr = QPAttr(port_num=1)
    attr.path_mtu = e.IBV_MTU_1024
    attr.dest_qp_num = dest_qpn
    attr.rq_psn = 0
    attr.sq_psn = 0
    attr.max_dest_rd_atomic = 1
    attr.max_rd_atomic = 1
    attr.min_rnr_timer = 12
    attr.timeout = 14
    attr.retry_cnt = 7
    attr.rnr_retry = 7
    attr.qp_access_flags = access
    gr = GlobalRoute(dgid=dgid, sgid_index=gidx, hop_limit=64)
    attr.ah_attr = AHAttr(port_num=1, is_global=1, gr=gr)
    return attr


def tool_args(doc, more=()):
    """The command line of a tool on one device: -d DEV -g GIDX, then the
    (flags, keyword arguments) pairs of more; doc's first paragraph is the
    description."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("-d", "--dev", required=True)
    ap.add_argument("-g", "--gid-index", type=int, required=True)
    for flags, kwargs in more:
        ap.add_argument(*flags, **kwargs)
    return ap.parse_args()


_counts = {"pass": 0, "fail": 0}


def tap(ok, what, why=None):
    """Report one TAP test point; why explains a failure. Returns ok."""
    n = _counts["pass"] + _counts["fail"] + 1
    _counts["pass" if ok else "fail"] += 1
    print("%s %d - %s" % ("ok" if ok else "not ok", n, what))
    if not ok and why:
        print("#   " + why)
    sys.stdout.flush()
    return ok


def tap_done():
    """Print the plan and the summary; return the exit status."""
    print("1..%d" % (_counts["pass"] + _counts["fail"]))
    print("# %d passed, %d failed" % (_counts["pass"], _counts["fail"]))
    return 1 if _counts["fail"] else 0


def pattern(seed, size):
    """size bytes that differ with seed, with the offset, and from one 4 KiB
    page to the next, so that a byte or a page out of place shows."""
    return bytes((seed * 131 + i * 7 + (i >> 8) + (i >> 12) * 29) & 0xff
                 for i in range(size))


def poll_one(cq, limit=30.0):
    """The next completion on cq, or None after limit seconds."""
    end = time.monotonic() + limit
    while time.monotonic() < end:
        n, wcs = cq.poll()
        if n:
            return wcs[0]
        time.sleep(0.0002)
    return None


class Loopback:
    """One device whose QPs send to its own GID: the context, the GID, a
    PD, a send CQ and a receive CQ."""

    def __init__(self, dev, gidx):
        self.ctx = Context(name=dev)
        self.gidx = gidx
        self.gid = self.ctx.query_gid(1, gidx)
        self.pd = PD(self.ctx)
        self.scq = CQ(self.ctx, 256)
        self.rcq = CQ(self.ctx, 256)
