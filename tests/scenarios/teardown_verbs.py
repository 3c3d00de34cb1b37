#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""An application whose devices go away under it, for teardown.sh: one
process opens two devices, connects an RC and a UC QP pair between them
and moves verified data (SENDs and WRITEs, both ways) until a verb fails.
The scenario removes the devices meanwhile (link delete, netdev or
namespace deletion, module unload). Then each context must have received
IBV_EVENT_DEVICE_FATAL, its verbs must fail instead of hanging, and every
object must close. Prints TAP on stdout.

  teardown_verbs.py --a DEV:GIDX --b DEV:GIDX --ready FILE

FILE is written once data has moved and verified, so that the scenario
removes the devices under live traffic.
"""

import argparse
import signal
import sys
import time

import pyverbs.enums as e
from pyverbs.cq import CQ
from pyverbs.mr import MR
from pyverbs.pyverbs_error import PyverbsError
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.wr import RecvWR, SGE, SendWR

from qp_lib import Device, rc_rts_attr
from tap_lib import pattern, tap, tap_done

SIZE = 16384
MSG = 3000
ACCESS = e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE
# How long a completion may take while the devices are still there.
POLL_LIMIT = 20.0
# Seconds without a completion before asking whether the device is gone.
PROBE_EVERY = 0.5
# How long after the removal the fatal event may take to arrive.
EVENT_LIMIT = 30


class Gone(Exception):
    """A verb failed or a completion never came: the device went away."""


class Side(Device):
    """One device: context, PD, CQ and a region for each transport."""

    def __init__(self, spec):
        super().__init__(spec)
        self.cq = CQ(self.ctx, 64)
        self.mr = MR(self.pd, SIZE, ACCESS)
        self.qps = {}

    def qp(self, qpt):
        cap = QPCap(max_send_wr=8, max_recv_wr=8, max_send_sge=1,
                    max_recv_sge=1)
        init = QPInitAttr(qp_type=qpt, scq=self.cq, rcq=self.cq, cap=cap,
                          sq_sig_all=1)
        attr = QPAttr(port_num=1)
        attr.qp_access_flags = ACCESS
        self.qps[qpt] = QP(self.pd, init, attr)
        return self.qps[qpt]

    def close(self):
        for qp in self.qps.values():
            qp.close()
        for obj in (self.mr, self.cq, self.pd, self.ctx):
            obj.close()


def connect(a, b, qpt):
    qa, qb = a.qp(qpt), b.qp(qpt)
    qa.to_rts(rc_rts_attr(b.gid, a.gidx, qb.qp_num, ACCESS))
    qb.to_rts(rc_rts_attr(a.gid, b.gidx, qa.qp_num, ACCESS))
    return qa, qb


def completion(side, what):
    """The next completion on side's CQ. Polling a removed device's CQ
    finds nothing, without an error: while none comes, every PROBE_EVERY
    seconds a query_device() asks whether the device is still there."""
    now = time.monotonic()
    end, probe = now + POLL_LIMIT, now + PROBE_EVERY
    while now < end:
        try:
            n, wcs = side.cq.poll()
        except PyverbsError as exc:
            raise Gone("%s: poll: %s" % (what, exc)) from exc
        if n:
            if wcs[0].status != e.IBV_WC_SUCCESS:
                raise Gone("%s: completion status %d" % (what, wcs[0].status))
            return wcs[0]
        time.sleep(0.001)
        now = time.monotonic()
        if now >= probe:
            probe = now + PROBE_EVERY
            try:
                side.ctx.query_device()
            except PyverbsError as exc:
                raise Gone("%s: device gone: %s" % (what, exc)) from exc
    raise Gone("%s: no completion within %d s" % (what, POLL_LIMIT))


def post(what, fn, *args):
    try:
        fn(*args)
    except PyverbsError as exc:
        raise Gone("%s: %s" % (what, exc)) from exc


def transfer(src, sq, dst, rq, seed):
    """A SEND and then a WRITE from src to dst, both verified."""
    data = pattern(seed, MSG)
    src.mr.write(data, MSG, 0)
    dst.mr.write(bytes(MSG), MSG, 0)
    post("post_recv on " + dst.dev, rq.post_recv,
         RecvWR(wr_id=seed, num_sge=1, sg=[SGE(dst.mr.buf, MSG, dst.mr.lkey)]))
    post("post_send on " + src.dev, sq.post_send,
         SendWR(wr_id=seed, opcode=e.IBV_WR_SEND, num_sge=1,
                sg=[SGE(src.mr.buf, MSG, src.mr.lkey)]))
    completion(src, "send from " + src.dev)
    completion(dst, "receive on " + dst.dev)
    if dst.mr.read(MSG, 0) != data:
        raise ValueError("SEND %d from %s: received data differs" %
                         (seed, src.dev))
    data = pattern(seed + 1, MSG)
    src.mr.write(data, MSG, 8192)
    wr = SendWR(wr_id=seed, opcode=e.IBV_WR_RDMA_WRITE, num_sge=1,
                sg=[SGE(src.mr.buf + 8192, MSG, src.mr.lkey)])
    wr.set_wr_rdma(dst.mr.rkey, dst.mr.buf + 8192)
    post("post_send on " + src.dev, sq.post_send, wr)
    completion(src, "write from " + src.dev)
    # A UC WRITE completes at the sender before it lands; RC's has been
    # acknowledged. Either way the next round's SEND fences it.
    return dst


def on_alarm(signum, frame):
    raise TimeoutError


def fatal_event(side):
    """Whether side's context has IBV_EVENT_DEVICE_FATAL among its
    pending events (QP events may come first)."""
    seen = []
    signal.signal(signal.SIGALRM, on_alarm)
    try:
        signal.alarm(EVENT_LIMIT)
        while True:
            ev = side.ctx.get_async_event()
            seen.append(ev.event_type)
            ev.ack()
            if ev.event_type == e.IBV_EVENT_DEVICE_FATAL:
                return True, seen
    except TimeoutError:
        return False, seen
    except PyverbsError as exc:
        seen.append(str(exc))
        return False, seen
    finally:
        signal.alarm(0)


def fails(fn):
    """None when fn() raises a verbs error, else what it returned."""
    signal.signal(signal.SIGALRM, on_alarm)
    try:
        signal.alarm(EVENT_LIMIT)
        got = fn()
    except TimeoutError:
        return "no answer within %d s" % EVENT_LIMIT
    except PyverbsError as exc:
        print("#   %s" % exc)
        return None
    finally:
        signal.alarm(0)
    return "succeeded: %r" % (got,)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--a", required=True)
    ap.add_argument("--b", required=True)
    ap.add_argument("--ready", required=True)
    args = ap.parse_args()

    a, b = Side(args.a), Side(args.b)
    rc = connect(a, b, e.IBV_QPT_RC)
    uc = connect(a, b, e.IBV_QPT_UC)
    rounds = 0
    why = None
    try:
        while True:
            for qa, qb in (rc, uc):
                transfer(a, qa, b, qb, rounds * 4)
                transfer(b, qb, a, qa, rounds * 4 + 2)
            rounds += 1
            if rounds == 1:
                with open(args.ready, "w", encoding="ascii") as f:
                    f.write("moving\n")
    except Gone as exc:
        why = str(exc)
    except ValueError as exc:
        tap(False, "data verified while the devices lived", exc)
        return tap_done()
    tap(rounds > 0, "%d rounds of RC and UC SENDs and WRITEs verified "
        "before the removal" % rounds)
    print("# traffic stopped: %s" % why)
    for side in (a, b):
        ok, seen = fatal_event(side)
        tap(ok, "%s: IBV_EVENT_DEVICE_FATAL" % side.dev,
            "events: %s" % seen)
        # post_send on the live QP, a fresh CQ, a device query: each must
        # fail, not hang nor pretend to work.
        qp = side.qps[e.IBV_QPT_RC]
        wr = SendWR(wr_id=1, opcode=e.IBV_WR_SEND, num_sge=1,
                    sg=[SGE(side.mr.buf, 64, side.mr.lkey)])
        for what, fn in (("post_send", lambda: qp.post_send(wr)),
                         ("create_cq", lambda: CQ(side.ctx, 8)),
                         ("query_device", side.ctx.query_device)):
            bad = fails(fn)
            tap(bad is None, "%s: %s fails after the removal" %
                (side.dev, what), bad)
    for side in (a, b):
        try:
            side.close()
            tap(True, "%s: every object closes" % side.dev)
        except PyverbsError as exc:
            tap(False, "%s: every object closes" % side.dev, exc)
    return tap_done()


if __name__ == "__main__":
    sys.exit(main())
