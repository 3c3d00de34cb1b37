#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Register and deregister many memory regions, for scale.sh.

  scale_mr.py -d DEV -g GIDX -n COUNT

Registers COUNT regions of 4 KiB (each over its own page of one buffer),
checks that every key is distinct, uses the last one as the target of an
RDMA WRITE over an RC QP looped back to the device's own GID (the bytes
must arrive), deregisters them all, and repeats the write to a region
registered afterwards. Prints the time taken per thousand registrations
(information only) and exits 0 when everything worked.
"""

import argparse
import sys
import time

import pyverbs.enums as e
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.wr import SGE, SendWR

from verbs_lib import rc_rts_attr

PAGE = 4096


def connect(ctx, pd, cq, gidx):
    gid = ctx.query_gid(1, gidx)
    cap = QPCap(max_send_wr=4, max_recv_wr=4, max_send_sge=1, max_recv_sge=1)
    init = QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, cap=cap,
                      sq_sig_all=1)
    access = e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_LOCAL_WRITE
    # pyverbs applies the INIT attributes, the access flags among them,
    # when it creates the QP.
    init_attr = QPAttr(port_num=1)
    init_attr.qp_access_flags = access
    qps = [QP(pd, init, init_attr) for _ in range(2)]
    for me, peer in ((qps[0], qps[1]), (qps[1], qps[0])):
        me.to_rts(rc_rts_attr(gid, gidx, peer.qp_num, access))
    return qps


def write_check(qp, cq, src, dst_mr, dst_off, seed):
    data = bytes((seed + i * 13) & 0xff for i in range(PAGE))
    src.write(data, PAGE)
    wr = SendWR(wr_id=seed, opcode=e.IBV_WR_RDMA_WRITE, num_sge=1,
                sg=[SGE(src.buf, PAGE, src.lkey)])
    wr.set_wr_rdma(dst_mr.rkey, dst_mr.buf + dst_off)
    qp.post_send(wr)
    end = time.monotonic() + 30
    while time.monotonic() < end:
        n, wcs = cq.poll()
        if n:
            if wcs[0].status != e.IBV_WC_SUCCESS:
                return "write completed with status %d" % wcs[0].status
            got = dst_mr.read(PAGE, dst_off)
            return None if got == data else "written bytes differ"
        time.sleep(0.001)
    return "no completion"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("-d", "--dev", required=True)
    p.add_argument("-g", "--gid-index", type=int, required=True)
    p.add_argument("-n", "--count", type=int, default=10000)
    args = p.parse_args()
    ctx = Context(name=args.dev)
    pd = PD(ctx)
    cq = CQ(ctx, 8)
    qps = connect(ctx, pd, cq, args.gid_index)
    src = MR(pd, PAGE, e.IBV_ACCESS_LOCAL_WRITE)
    access = e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE
    big = MR(pd, PAGE * args.count, access)
    mrs = []
    t0 = time.monotonic()
    per_k = []
    for i in range(args.count):
        mrs.append(MR(pd, PAGE, access))
        if (i + 1) % 1000 == 0:
            now = time.monotonic()
            per_k.append(now - t0)
            t0 = now
    keys = {m.rkey for m in mrs}
    ok = True
    print("# %d regions registered; seconds per thousand: %s" %
          (len(mrs), " ".join("%.2f" % t for t in per_k)))
    if len(keys) != len(mrs):
        print("distinct keys: %d of %d" % (len(keys), len(mrs)))
        ok = False
    why = write_check(qps[0], cq, src, mrs[-1], 0, 7)
    if why:
        print("write to the last region: " + why)
        ok = False
    for m in mrs:
        m.close()
    after = MR(pd, PAGE, access)
    why = write_check(qps[0], cq, src, after, 0, 11)
    if why:
        print("write to a region registered after: " + why)
        ok = False
    why = write_check(qps[0], cq, src, big, PAGE * (args.count - 1), 5)
    if why:
        print("write to the last page of a %d-page region: %s" %
              (args.count, why))
        ok = False
    print("result: %s" % ("ok" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
