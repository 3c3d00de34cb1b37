#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: twovm
# kernels: 6.1
# full-kernels: 6.12
# requires: sroce
# timeout: 300
#
# The NIC under sroce goes away and comes back: each VM's virtio-net driver
# is unbound and bound again (nic_reset in lib.sh, which the benchmark uses
# to bring back a link that QEMU stopped carrying) while sroce0 is attached
# to eth0 and the link is cut. The device must go with its netdev, the new
# eth0 must carry frames again, and a new sroce0 on it must move verified
# data as before.
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=datapath_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/datapath_lib.sh"
# The client (VM a) reports each pingpong; the server's side reports none.
if [ "$ROLE" = a ]; then plan 14; else plan 12; fi

pingpong() {
	dp_pair "$1" 120 \
		ibv_rc_pingpong -d @DEV@ -g @GID4@ -s 4096 -n 100 -c -- \
		ibv_rc_pingpong -d @DEV@ -g @GID4@ -s 4096 -n 100 -c @SRV4@
}

dp_setup
pingpong "ibv_rc_pingpong -c before the reset"
old=$(readlink -f /sys/class/net/eth0/device)

# The link stops: VM a drops all it sends, as a QEMU that stopped carrying
# its frames would. Whatever happens, the later scenarios of the boot get
# the link back.
trap 'tc qdisc del dev eth0 root 2>/dev/null; true' EXIT
barrier cut 120
[ "$ROLE" = a ] && tc qdisc replace dev eth0 root netem loss 100%
barrier cut-done 120
check_fail "the link is cut: no answer from the peer" peer_answers

check "nic_reset: virtio-net unbound and bound again, eth0 set up" nic_reset
check_wait "sroce0 went with the old eth0" 10 ibdev_gone sroce0
expect_eq "the same virtio device is eth0 again" "$old" \
	"$(readlink -f /sys/class/net/eth0/device)"
expect_eq "eth0 at MTU 1500" 1500 "$(cat /sys/class/net/eth0/mtu)"
expect_nomatch "no netem left on the new eth0" netem "$(tc qdisc show dev eth0)"
barrier reset-done 120
check_wait "the peer answers again" 30 peer_answers

dp_setup
pingpong "ibv_rc_pingpong -c after the reset"
check "rdma link delete sroce0" rdma link delete sroce0
check_wait "sroce0 is gone" 10 ibdev_gone sroce0
check "rmmod sroce" rmmod sroce
