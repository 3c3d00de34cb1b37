# SPDX-License-Identifier: GPL-2.0
"""Devices and connected QPs between them, for the scenario tools that
build their own pairs with pyverbs (spoof_verbs.py, teardown_verbs.py,
mw_verbs.py).
"""

import pyverbs.enums as e
from pyverbs.addr import AHAttr, GlobalRoute
from pyverbs.device import Context
from pyverbs.pd import PD
from pyverbs.qp import QPAttr


class Device:
    """One device a tool opens from its "DEV:GIDX" argument: the context,
    the GID at that index of port 1, and a PD."""

    def __init__(self, spec):
        self.dev, gidx = spec.split(":")
        self.gidx = int(gidx)
        self.ctx = Context(name=self.dev)
        self.gid = self.ctx.query_gid(1, self.gidx)
        self.pd = PD(self.ctx)


def rc_rts_attr(dgid, gidx, dest_qpn, access=0):
    """Attributes taking an RC or UC QP to RTS towards QP dest_qpn at dgid,
    both PSNs 0: the spoofing checks aim at PSNs they know."""
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
