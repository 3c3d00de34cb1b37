#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Receiver-not-ready cases for faults.sh: one RC SEND towards a peer that
has posted no receive buffer. Runs on both ends (pyverbs), the server is
the receiver; the two exchange QP numbers, PSNs and GIDs over TCP.

  faults_rnr.py -d DEV -g GIDX -p PORT MODE             (receiver)
  faults_rnr.py -d DEV -g GIDX -p PORT MODE SERVER      (sender)

MODE exceed:  the receiver never posts a buffer; the sender's rnr_retry is
              RNR_RETRY, so the SEND must complete with "RNR retry counter
              exceeded" (13) after RNR_RETRY + 1 RNR NAKs.
MODE recover: the receiver posts its buffer a second after the SEND was
              posted; the sender retries forever (rnr_retry 7), so the
              SEND must complete successfully and the receiver must find
              the bytes that were sent.

Prints what happened; exit status 0 when the outcome is the expected one.
"""

import argparse
import json
import socket
import sys
import time

import pyverbs.enums as e
from pyverbs.addr import AHAttr, GID, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.wr import RecvWR, SGE, SendWR

MSG_SIZE = 4096
RNR_RETRY = 2
# RNR NAK timer codes (IBTA table 45): 1 is 0.01 ms, 14 is 1.28 ms.
MIN_RNR_EXCEED = 1
MIN_RNR_RECOVER = 14
POLL_LIMIT = 30.0


def pattern(seed):
    return bytes((seed * 31 + i * 7 + (i >> 8)) & 0xff for i in range(MSG_SIZE))


class Side:
    def __init__(self, dev, gidx):
        self.ctx = Context(name=dev)
        self.gidx = gidx
        self.pd = PD(self.ctx)
        self.cq = CQ(self.ctx, 8)
        self.mr = MR(self.pd, MSG_SIZE, e.IBV_ACCESS_LOCAL_WRITE)
        cap = QPCap(max_send_wr=4, max_recv_wr=4, max_send_sge=1,
                    max_recv_sge=1)
        init = QPInitAttr(qp_type=e.IBV_QPT_RC, scq=self.cq, rcq=self.cq,
                          cap=cap, sq_sig_all=1)
        self.qp = QP(self.pd, init, QPAttr(port_num=1))
        self.psn = int(time.time() * 1000) & 0xffffff
        self.gid = str(self.ctx.query_gid(1, gidx))

    def info(self):
        return {"qpn": self.qp.qp_num, "psn": self.psn, "gid": self.gid}

    def connect(self, peer, min_rnr, rnr_retry):
        attr = QPAttr(port_num=1)
        attr.path_mtu = e.IBV_MTU_1024
        attr.dest_qp_num = peer["qpn"]
        attr.rq_psn = peer["psn"]
        attr.sq_psn = self.psn
        attr.max_dest_rd_atomic = 1
        attr.max_rd_atomic = 1
        attr.min_rnr_timer = min_rnr
        attr.timeout = 14
        attr.retry_cnt = 7
        attr.rnr_retry = rnr_retry
        gr = GlobalRoute(dgid=GID(peer["gid"]), sgid_index=self.gidx,
                         hop_limit=64)
        attr.ah_attr = AHAttr(port_num=1, is_global=1, gr=gr)
        self.qp.to_rts(attr)

    def poll_one(self, limit=POLL_LIMIT):
        """The next completion, or None after limit seconds."""
        end = time.monotonic() + limit
        while time.monotonic() < end:
            n, wcs = self.cq.poll()
            if n:
                return wcs[0]
            time.sleep(0.001)
        return None

    def post_send(self, data):
        self.mr.write(data, len(data))
        sge = SGE(self.mr.buf, len(data), self.mr.lkey)
        self.qp.post_send(SendWR(wr_id=1, opcode=e.IBV_WR_SEND, num_sge=1,
                                 sg=[sge]))

    def post_recv(self):
        self.mr.write(bytes(MSG_SIZE), MSG_SIZE)
        sge = SGE(self.mr.buf, MSG_SIZE, self.mr.lkey)
        self.qp.post_recv(RecvWR(wr_id=2, num_sge=1, sg=[sge]))


def send_line(sock, obj):
    sock.sendall((json.dumps(obj) + "\n").encode())


def recv_line(f):
    line = f.readline()
    if not line:
        raise RuntimeError("the peer closed the control connection")
    return json.loads(line)


def status_text(wc):
    return "%s (%d)" % (e.ibv_wc_status(wc.status).name, wc.status)


def receiver(args, side):
    lsock = socket.create_server(("", args.port), family=socket.AF_INET6,
                                 dualstack_ipv6=True)
    lsock.settimeout(120)
    conn, _ = lsock.accept()
    conn.settimeout(120)
    f = conn.makefile("r")
    peer = recv_line(f)
    min_rnr = MIN_RNR_EXCEED if args.mode == "exceed" else MIN_RNR_RECOVER
    side.connect(peer, min_rnr, 0)
    send_line(conn, side.info())
    result = {"ok": True, "what": "no receive buffer was posted"}
    msg = recv_line(f)
    if args.mode == "recover":
        # The SEND is out: let the sender meet RNR NAKs for a while.
        time.sleep(1.0)
        side.post_recv()
        wc = side.poll_one()
        if wc is None:
            result = {"ok": False, "what": "no receive completion"}
        elif wc.status != e.IBV_WC_SUCCESS:
            result = {"ok": False, "what": "receive completion " +
                      status_text(wc)}
        elif wc.byte_len != MSG_SIZE:
            result = {"ok": False, "what": "receive byte_len %d, expected %d"
                      % (wc.byte_len, MSG_SIZE)}
        else:
            got = side.mr.read(MSG_SIZE, 0)
            want = pattern(msg["seed"])
            bad = [i for i in range(MSG_SIZE) if got[i] != want[i]]
            if bad:
                result = {"ok": False, "what": "payload differs at %d bytes,"
                          " first at offset %d" % (len(bad), bad[0])}
            else:
                result = {"ok": True, "what": "received %d bytes, payload"
                          " verified" % MSG_SIZE}
    send_line(conn, result)
    recv_line(f)
    print("receiver: " + result["what"])
    return 0 if result["ok"] else 1


def sender(args, side):
    sock = socket.create_connection((args.server, args.port), timeout=120)
    f = sock.makefile("r")
    send_line(sock, side.info())
    peer = recv_line(f)
    rnr_retry = RNR_RETRY if args.mode == "exceed" else 7
    side.connect(peer, MIN_RNR_EXCEED, rnr_retry)
    seed = side.psn & 0xff
    t0 = time.monotonic()
    side.post_send(pattern(seed))
    send_line(sock, {"seed": seed})
    wc = side.poll_one()
    took = time.monotonic() - t0
    ok = True
    if wc is None:
        print("sender: no send completion within %.0f s" % POLL_LIMIT)
        ok = False
    else:
        print("sender: send completion %s after %.3f s (rnr_retry %d)" %
              (status_text(wc), took, rnr_retry))
        want = (e.IBV_WC_RNR_RETRY_EXC_ERR if args.mode == "exceed"
                else e.IBV_WC_SUCCESS)
        if wc.status != want:
            print("sender: expected %s" % e.ibv_wc_status(want).name)
            ok = False
    result = recv_line(f)
    send_line(sock, {"done": True})
    print("receiver said: " + result["what"])
    return 0 if ok and result["ok"] else 1


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("-d", "--dev", required=True)
    p.add_argument("-g", "--gid-index", type=int, required=True)
    p.add_argument("-p", "--port", type=int, default=18530)
    p.add_argument("mode", choices=("exceed", "recover"))
    p.add_argument("server", nargs="?")
    args = p.parse_args()
    side = Side(args.dev, args.gid_index)
    if args.server:
        return sender(args, side)
    return receiver(args, side)


if __name__ == "__main__":
    sys.exit(main())
