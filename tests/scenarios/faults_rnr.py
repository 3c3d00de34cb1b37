#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Receiver-not-ready cases for faults.sh: one RC SEND towards a peer that
has posted no receive buffer. Runs on both ends, each end rdma-core's RC
test resources (tests.base.RCResources) with the peer's GID for a route;
the server is the receiver; the two exchange QP numbers, PSNs and GIDs
over TCP.

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

import json
import socket
import sys
import time

import pyverbs.enums as e
from pyverbs.addr import AHAttr, GID, GlobalRoute
from pyverbs.wr import SGE, SendWR

from verbs_lib import differs, pattern, poll_wc, tool_args
# verbs_lib made rdma-core's test package importable.
from tests.base import (MAX_DEST_RD_ATOMIC, MAX_RD_ATOMIC, PATH_MTU,
                        RCResources, set_rnr_attributes)
import tests.utils as u

MSG_SIZE = 4096
RNR_RETRY = 2
# RNR NAK timer codes (IBTA table 45): 1 is 0.01 ms, 14 is 1.28 ms.
MIN_RNR_EXCEED = 1
MIN_RNR_RECOVER = 14


class Side(RCResources):
    """rdma-core's RC resources (one QP, a region of MSG_SIZE bytes)
    connected to a QP on another host: rdma-core's attributes, but the
    peer's GID instead of rdma-core's loopback route, and this case's
    RNR NAK timer and RNR retry count."""

    def __init__(self, dev, gidx):
        self.peer_gid = None
        self.min_rnr = self.rnr_retry = None
        super().__init__(dev, 1, gidx, msg_size=MSG_SIZE)

    def info(self):
        return {"qpn": self.qps_num[0], "psn": self.psns[0],
                "gid": str(self.ctx.query_gid(self.ib_port,
                                              self.gid_index))}

    def connect(self, peer, min_rnr, rnr_retry):
        self.peer_gid = GID(peer["gid"])
        self.min_rnr, self.rnr_retry = min_rnr, rnr_retry
        self.pre_run([peer["psn"]], [peer["qpn"]])

    def to_rts(self):
        attr = self.create_qp_attr()
        attr.path_mtu = PATH_MTU
        attr.max_dest_rd_atomic = MAX_DEST_RD_ATOMIC
        attr.max_rd_atomic = MAX_RD_ATOMIC
        set_rnr_attributes(attr)
        attr.min_rnr_timer = self.min_rnr
        attr.rnr_retry = self.rnr_retry
        gr = GlobalRoute(dgid=self.peer_gid, sgid_index=self.gid_index,
                         hop_limit=64)
        attr.ah_attr = AHAttr(port_num=self.ib_port, is_global=1, gr=gr)
        attr.dest_qp_num = self.rqps_num[0]
        attr.rq_psn = self.psns[0]
        attr.sq_psn = self.rpsns[0]
        self.qp.to_rts(attr)

    def post_send(self, data):
        self.mem_write(data, len(data))
        wr = SendWR(wr_id=1, opcode=e.IBV_WR_SEND, num_sge=1,
                    sg=[SGE(self.mr.buf, len(data), self.mr_lkey)],
                    send_flags=e.IBV_SEND_SIGNALED)
        u.post_send(self, wr)

    def post_recv(self):
        self.mem_write(bytes(MSG_SIZE), MSG_SIZE)
        u.post_recv(self, u.get_recv_wr(self))


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
        wc = poll_wc(side.cq)
        if wc is None:
            result = {"ok": False, "what": "no receive completion"}
        elif wc.status != e.IBV_WC_SUCCESS:
            result = {"ok": False, "what": "receive completion " +
                      status_text(wc)}
        elif wc.byte_len != MSG_SIZE:
            result = {"ok": False, "what": "receive byte_len %d, expected %d"
                      % (wc.byte_len, MSG_SIZE)}
        else:
            why = differs(side.mem_read(MSG_SIZE), pattern(msg["seed"],
                                                           MSG_SIZE))
            if why:
                result = {"ok": False, "what": why}
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
    seed = side.psns[0] & 0xff
    t0 = time.monotonic()
    side.post_send(pattern(seed, MSG_SIZE))
    send_line(sock, {"seed": seed})
    wc = poll_wc(side.cq)
    took = time.monotonic() - t0
    ok = True
    if wc is None:
        print("sender: no send completion within %.0f s" %
              u.POLL_CQ_TIMEOUT)
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
    args = tool_args(__doc__, (
        (("-p", "--port"), {"type": int, "default": 18530}),
        (("mode",), {"choices": ("exceed", "recover")}),
        (("server",), {"nargs": "?"})))
    side = Side(args.dev, args.gid_index)
    if args.server:
        return sender(args, side)
    return receiver(args, side)


if __name__ == "__main__":
    sys.exit(main())
