#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest half of capture-icrc-vectors.sh: runs as the second stage of a test
# VM on a stock kernel. rdma_rxe sits on v1, one end of a veth pair whose
# other end (v2) is in namespace h2; pyverbs sends UD and RC packets towards
# v2's IPv4 and IPv6 GIDs while tcpdump records what leaves v1. Nobody
# answers: only the packets rdma_rxe puts on the wire matter, ICRC and all.
# Writes rxe.pcap and capture.log to the VM's "out" share, then powers off.

export PATH=/usr/sbin:/usr/bin:/sbin:/bin

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
mkdir -p /run/netns /out
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 out /out

exec >/out/capture.log 2>&1
set -x

finish() {
	sync
	echo o >/proc/sysrq-trigger
	sleep 30
}
trap finish EXIT

modprobe -a veth rdma_rxe ib_uverbs || exit 1
ip netns add h2
ip link add v1 type veth peer name v2 netns h2
ip addr add 198.18.0.1/24 dev v1
ip addr add 2001:db8::1/64 dev v1 nodad
ip link set v1 up
ip -n h2 addr add 198.18.0.2/24 dev v2
ip -n h2 addr add 2001:db8::2/64 dev v2 nodad
ip -n h2 link set lo up
ip -n h2 link set v2 up
rdma link add rxe0 type rxe netdev v1 || exit 1
# Static neighbours, so that no packet waits for resolution.
v2_mac=$(cat /sys/class/net/v2/address 2>/dev/null ||
	ip netns exec h2 cat /sys/class/net/v2/address)
ip neigh replace 198.18.0.2 lladdr "$v2_mac" dev v1 nud permanent
ip neigh replace 2001:db8::2 lladdr "$v2_mac" dev v1 nud permanent

tcpdump -i v1 -n -U -s 0 -w /out/rxe.pcap udp port 4791 &
tcpdump_pid=$!
sleep 2

/usr/bin/python3 - <<'EOF'
import time
from pyverbs.addr import AH, AHAttr, GID, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.wr import SGE, SendWR
import pyverbs.enums as e

DEV = 'rxe0'
PORTS = '/sys/class/infiniband/%s/ports/1' % DEV


def gid_index(gid):
    """Index of a RoCE v2 GID in the port's table."""
    for i in range(16):
        try:
            with open('%s/gids/%d' % (PORTS, i)) as f:
                g = f.read().strip()
            with open('%s/gid_attrs/types/%d' % (PORTS, i)) as f:
                t = f.read().strip()
        except OSError:
            continue
        if g == gid and t == 'RoCE v2':
            return i
    raise SystemExit('no RoCE v2 GID %s' % gid)


ctx = Context(name=DEV)
pd = PD(ctx)
cq = CQ(ctx, 64)
mr = MR(pd, 4096, e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE)
mr.write(bytes((i * 7 + 3) & 0xff for i in range(4096)), 4096)
cap = QPCap(max_send_wr=8, max_recv_wr=8, max_send_sge=1, max_recv_sge=1)

NETS = [
    ('0000:0000:0000:0000:0000:ffff:c612:0001',
     '0000:0000:0000:0000:0000:ffff:c612:0002'),
    ('2001:0db8:0000:0000:0000:0000:0000:0001',
     '2001:0db8:0000:0000:0000:0000:0000:0002'),
]


def ah_attr(sgid, dgid):
    gr = GlobalRoute(dgid=GID(dgid), sgid_index=gid_index(sgid),
                     hop_limit=64)
    return AHAttr(port_num=1, is_global=1, gr=gr)


def post(qp, opcode, length, imm=None, ud=None, rdma=None):
    wr = SendWR(opcode=opcode, num_sge=1, sg=[SGE(mr.buf, length, mr.lkey)])
    if imm is not None:
        wr.imm_data = imm
    if ud is not None:
        wr.set_wr_ud(*ud)
    if rdma is not None:
        wr.set_wr_rdma(*rdma)
    qp.post_send(wr)
    time.sleep(0.5)


for n, (sgid, dgid) in enumerate(NETS):
    # UD: SEND Only with Immediate, a payload needing pad.
    attr = QPAttr(port_num=1)
    attr.qkey = 0x1234567
    qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_UD, scq=cq, rcq=cq, cap=cap),
            attr)
    ah = AH(pd, attr=ah_attr(sgid, dgid))
    post(qp, e.IBV_WR_SEND_WITH_IMM, 41 + n, imm=0xa1b2c3d4,
         ud=(ah, 0x123, 0x1234567))

    # RC: RDMA WRITE Only and a SEND split into First and Last.
    qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, cap=cap),
            QPAttr(port_num=1))
    attr = QPAttr(port_num=1)
    attr.path_mtu = e.IBV_MTU_256
    attr.dest_qp_num = 0x456 + n
    attr.rq_psn = 0x10
    attr.sq_psn = 0xfffffe
    attr.timeout = 20
    attr.retry_cnt = 1
    attr.rnr_retry = 1
    attr.max_rd_atomic = 1
    attr.max_dest_rd_atomic = 1
    attr.ah_attr = ah_attr(sgid, dgid)
    qp.to_rts(attr)
    post(qp, e.IBV_WR_RDMA_WRITE, 64 + n, rdma=(0x5eed, 0x7f0012345000))
    post(qp, e.IBV_WR_SEND, 300 + n)
EOF
echo "pyverbs exit status $?"

sleep 2
kill "$tcpdump_pid"
wait "$tcpdump_pid"
tcpdump -n -r /out/rxe.pcap -v
