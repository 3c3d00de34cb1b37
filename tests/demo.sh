#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The demonstration "make demo" runs: two QEMU guests on Debian's stock 6.1
# kernel, joined by one virtio-net link, each loading sroce with modprobe and
# attaching it to its NIC; ibv_devinfo on both, then ibv_rc_pingpong
# between them over the IPv4 RoCEv2 GID.
#
# SROCE_DEMO_KERNEL picks another kernel (6.12, debug).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
kernel=${SROCE_DEMO_KERNEL:-6.1}

"$root/scripts/build-kernels.sh" >&2

# The same commands run in both guests; ROLE tells them apart.
# shellcheck disable=SC2016 # expanded in the guests
cmd='
set -e
modprobe sroce
rdma link add sroce0 type sroce netdev eth0
wait_until 30 port_is sroce0 PORT_ACTIVE
gid=$(gid_index sroce0 "$(gid_v4 "$([ "$ROLE" = a ] && echo $NET4_A || echo $NET4_B)")")
echo "=== VM $ROLE: ibv_devinfo -d sroce0"
ibv_devinfo -d sroce0
echo "=== VM $ROLE: GID index $gid: $(cat /sys/class/infiniband/sroce0/ports/1/gids/$gid)"
if [ "$ROLE" = b ]; then
	barrier server
	timeout 120 ibv_rc_pingpong -d sroce0 -g "$gid" -s 4096 -n 1000
else
	barrier server
	sleep 2
	echo "=== VM a: ibv_rc_pingpong -d sroce0 -g $gid -s 4096 -n 1000 $NET4_B"
	timeout 120 ibv_rc_pingpong -d sroce0 -g "$gid" -s 4096 -n 1000 "$NET4_B"
fi
echo "=== VM $ROLE: rdma statistic show link sroce0/1"
rdma statistic show link sroce0/1
'
exec "$root/tests/vm/shell.sh" --kernel "$kernel" --topo twovm --timeout 300 \
	--cmd "$cmd"
