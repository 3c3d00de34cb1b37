#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ibv_rc/uc/ud/srq_pingpong over sroce with payload checks (rdma-core's
# example programs check every received buffer with -c) over RC, UC and
# UD, through both GIDs: between two network namespaces of one guest, and
# between two guests.
#
# topology: netns twovm
# kernels: 6.1 6.12 debug:netns
# timeout: 900
# requires: sroce

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/datapath_lib.sh"

dp_setup
# A KASAN kernel under TCG copies slowly: fewer 1 MiB rounds there, the
# same checks.
big_n=50
[ "$SROCE_SLOW" -gt 1 ] && big_n=2
# The port counters in sysfs (answered by the device's performance
# management agent) must follow the traffic of the client's port.
pma=/sys/class/infiniband/$DP_CLI_DEV/ports/1/counters
pma_read() { cat "$pma/$1" 2>/dev/null || echo -1; }
declare -A pma0
for c in port_xmit_data port_rcv_data port_xmit_packets port_rcv_packets; do
	pma0[$c]=$(pma_read $c)
done
payload=0
for size in 1 4096 1048576; do
	n=50
	[ "$size" = 1048576 ] && n=$big_n
	payload=$((payload + size * n))
	dp_pair "ibv_rc_pingpong -s $size -n $n (IPv4 GID)" 120 \
		ibv_rc_pingpong -d @DEV@ -g @GID4@ -s "$size" -n "$n" -c -- \
		ibv_rc_pingpong -d @DEV@ -g @GID4@ -s "$size" -n "$n" -c @SRV4@
done
if [ "$ROLE" = a ]; then
	for c in port_xmit_data port_rcv_data; do
		d=$(($(pma_read $c) - pma0[$c]))
		if [ "${pma0[$c]}" -ge 0 ] && [ $((d * 4)) -ge "$payload" ]; then
			ok "$c rose by at least the payload ($((d * 4)) of $payload bytes)"
		else
			not_ok "$c rose by at least the payload" "from ${pma0[$c]} by $d words, payload $payload bytes"
		fi
	done
	for c in port_xmit_packets port_rcv_packets; do
		d=$(($(pma_read $c) - pma0[$c]))
		# 50 + 50 messages of one packet and the 1 MiB ones of 1024
		# packets at least (path MTU 1024), each way.
		min=$((100 + big_n * 1024))
		if [ "${pma0[$c]}" -ge 0 ] && [ "$d" -ge "$min" ]; then
			ok "$c rose by at least $min ($d)"
		else
			not_ok "$c rose by at least $min" "from ${pma0[$c]} by $d"
		fi
	done
	tx=$(rdma statistic show link "$DP_CLI_DEV/1" | tr ' ' '\n' | sed -n '/^tx_bytes$/{n;p}')
	expect_eq "port_xmit_data is the device's tx_bytes / 4" "$((${tx:-0} / 4))" "$(pma_read port_xmit_data)"
fi
dp_pair "ibv_rc_pingpong -e (completion events)" 120 \
	ibv_rc_pingpong -d @DEV@ -g @GID4@ -s 4096 -n 100 -e -c -- \
	ibv_rc_pingpong -d @DEV@ -g @GID4@ -s 4096 -n 100 -e -c @SRV4@
# The examples exchange QP numbers and GIDs over an IPv4 TCP connection;
# the RDMA traffic itself follows the GID.
dp_pair "ibv_rc_pingpong -s 65536 (IPv6 GID)" 120 \
	ibv_rc_pingpong -d @DEV@ -g @GID6@ -s 65536 -n 50 -c -- \
	ibv_rc_pingpong -d @DEV@ -g @GID6@ -s 65536 -n 50 -c @SRV4@
dp_pair "ibv_uc_pingpong -s 4096" 120 \
	ibv_uc_pingpong -d @DEV@ -g @GID4@ -s 4096 -n 50 -c -- \
	ibv_uc_pingpong -d @DEV@ -g @GID4@ -s 4096 -n 50 -c @SRV4@
dp_pair "ibv_ud_pingpong -s 512" 120 \
	ibv_ud_pingpong -d @DEV@ -g @GID4@ -s 512 -n 50 -c -- \
	ibv_ud_pingpong -d @DEV@ -g @GID4@ -s 512 -n 50 -c @SRV4@
dp_pair "ibv_ud_pingpong -s 1024 (IPv6 GID)" 120 \
	ibv_ud_pingpong -d @DEV@ -g @GID6@ -s 1024 -n 50 -c -- \
	ibv_ud_pingpong -d @DEV@ -g @GID6@ -s 1024 -n 50 -c @SRV4@
# Eight RC QPs per side receiving through one shared receive queue.
srq_n=50
[ "$SROCE_SLOW" -gt 1 ] && srq_n=10
dp_pair "ibv_srq_pingpong -q 8 -s 4096 -n $srq_n" 180 \
	ibv_srq_pingpong -d @DEV@ -g @GID4@ -q 8 -s 4096 -n "$srq_n" -c -- \
	ibv_srq_pingpong -d @DEV@ -g @GID4@ -q 8 -s 4096 -n "$srq_n" -c @SRV4@
if [ "$ROLE" = a ]; then
	dp_stats "$DP_CLI_DEV" >&2
fi
done_testing
