#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Register and deregister many memory regions, for scale.sh.

  scale_mr.py -d DEV -g GIDX -n COUNT

Registers COUNT regions of 4 KiB, checks that every key is distinct, uses
the last one as the target of an RDMA WRITE over an RC QP looped back to
the device's own GID (the bytes must arrive), deregisters them all, and
repeats the write to a region registered afterwards and to the last page
of one region of COUNT pages. Requester and responder are rdma-core's RC
test resources (tests.base.RCResources), the regions the responder's.
Prints the time taken per thousand registrations (information only) and
exits 0 when everything worked.
"""

import sys
import time

import pyverbs.enums as e
from pyverbs.mr import MR
from pyverbs.wr import SGE, SendWR

from verbs_lib import differs, pattern, poll_wc, tool_args
# verbs_lib made rdma-core's test package importable.
from tests.base import RCResources
import tests.utils as u

PAGE = 4096
ACCESS = e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE


class WriteRC(RCResources):
    """rdma-core's RC resources whose QP may be written to, with a region
    of one page to write from."""

    def __init__(self, dev, gidx):
        super().__init__(dev, 1, gidx, msg_size=PAGE)

    def create_qp_attr(self):
        attr = super().create_qp_attr()
        attr.qp_access_flags = ACCESS
        return attr


def write_check(cli, dst_mr, dst_off, seed):
    """An RDMA WRITE of a page from cli into dst_mr at dst_off; None or
    what went wrong."""
    data = pattern(seed, PAGE)
    cli.mem_write(data, PAGE)
    wr = SendWR(wr_id=seed, opcode=e.IBV_WR_RDMA_WRITE, num_sge=1,
                sg=[SGE(cli.mr.buf, PAGE, cli.mr_lkey)],
                send_flags=e.IBV_SEND_SIGNALED)
    wr.set_wr_rdma(dst_mr.rkey, dst_mr.buf + dst_off)
    u.post_send(cli, wr)
    wc = poll_wc(cli.cq)
    if wc is None:
        return "no completion"
    if wc.status != e.IBV_WC_SUCCESS:
        return "write completed with status %s" % u.wc_status_to_str(
            wc.status)
    return differs(dst_mr.read(PAGE, dst_off), data)


def main():
    args = tool_args(__doc__, ((("-n", "--count"), {"type": int,
                                                   "default": 10000}),))
    cli = WriteRC(args.dev, args.gid_index)
    srv = WriteRC(args.dev, args.gid_index)
    cli.pre_run(srv.psns, srv.qps_num)
    srv.pre_run(cli.psns, cli.qps_num)
    # The regions belong to the responder's protection domain.
    big = MR(srv.pd, PAGE * args.count, ACCESS)
    mrs = []
    t0 = time.monotonic()
    per_k = []
    for i in range(args.count):
        mrs.append(MR(srv.pd, PAGE, ACCESS))
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
    why = write_check(cli, mrs[-1], 0, 7)
    if why:
        print("write to the last region: " + why)
        ok = False
    for m in mrs:
        m.close()
    after = MR(srv.pd, PAGE, ACCESS)
    why = write_check(cli, after, 0, 11)
    if why:
        print("write to a region registered after: " + why)
        ok = False
    why = write_check(cli, big, PAGE * (args.count - 1), 5)
    if why:
        print("write to the last page of a %d-page region: %s" %
              (args.count, why))
        ok = False
    print("result: %s" % ("ok" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
