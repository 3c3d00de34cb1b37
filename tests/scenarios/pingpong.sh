#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ibv_rc/uc/ud/srq_pingpong over sroce with payload checks (rdma-core's
# example programs check every received buffer with -c) over RC, UC and
# UD, through both GIDs: between two network namespaces of one guest, and
# between two guests.
#
# topology: netns twovm
# kernels: 6.1 6.12
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
# ACK holds (admin-guide.rst, "ACK coalescing"). ibv_rc_pingpong answers
# every message with one of its own: once a QP has answered four ACKs sent
# at once within ack_hold_us, its next owed ACKs wait for its requests and
# leave with them (acks_held, acks_joined). A hold ends at a timer tick,
# so it lasts from the time asked less a tick to that time: at 10000 us,
# long enough for both sides to answer even on one vCPU, and at any HZ
# short enough for the examples' QPs, which time out after 67 ms (above
# four holds). The last message each side receives is answered by
# nothing, and its peer's last completion waits for that ACK: it must
# arrive whether the hold runs out or the QP is destroyed first, or the
# peer's pingpong fails once its retries run out. With ack_hold_us=0, or
# a hold whose bound (20 ms) is over a quarter of the QPs' timeout,
# nothing is held. Retransmission timeouts are counted, not checked: a
# busy host can delay any ACK past 67 ms.
hold_param=/sys/module/sroce/parameters/ack_hold_us
hold_devs=$DP_CLI_DEV
[ "$TOPO" = netns ] && hold_devs="$DP_CLI_DEV $DP_SRV_DEV"
hold_counts() {
	local c d s
	for c in acks_held acks_joined ack_holds_expired retransmit_timeouts; do
		s=0
		for d in $hold_devs; do
			s=$((s + $(dp_stat "$d" "$c")))
		done
		printf '%s ' "$s"
	done
}
# hold_run NAME US: ibv_rc_pingpong with ack_hold_us=US; HOLD_* are the
# counters' rise on both sides.
hold_run() {
	local name=$1 us=$2 before after other i
	check "$name: ack_hold_us=$us" sh -c "echo $us > $hold_param"
	read -ra before <<<"$(hold_counts)"
	dp_pair "$name: ibv_rc_pingpong -s 64 -n 200" 120 \
		ibv_rc_pingpong -d @DEV@ -g @GID4@ -s 64 -n 200 -c -- \
		ibv_rc_pingpong -d @DEV@ -g @GID4@ -s 64 -n 200 -c @SRV4@
	read -ra after <<<"$(hold_counts)"
	for i in 0 1 2 3; do
		after[i]=$((after[i] - before[i]))
	done
	if [ "$TOPO" = twovm ]; then
		put "hold.$name.$ROLE" "${after[*]}"
		read -ra other <<<"$(get "hold.$name.$PEER" 120)"
		for i in 0 1 2 3; do
			after[i]=$((after[i] + ${other[i]:-0}))
		done
	fi
	HOLD_HELD=${after[0]} HOLD_JOINED=${after[1]}
	HOLD_EXPIRED=${after[2]} HOLD_TIMEOUTS=${after[3]}
	diag "$name: ACKs held $HOLD_HELD, joined $HOLD_JOINED, holds run out $HOLD_EXPIRED; retransmission timeouts $HOLD_TIMEOUTS"
}
hold_default=$(cat "$hold_param")
expect_eq "ack_hold_us is 100 by default" 100 "$hold_default"
# Whether the QPs answer within the hold is the guests' pace: a host busy
# enough to hold a guest's answers past it leaves nothing held, so the
# run goes again, three times at most, before the holds count as missing.
# 400 messages, each owing an ACK; the first few are answered at once, and
# a hold that ends a tick early sends the next one at once too. An ACK
# owed when the requester runs before the batch's end rides without a
# hold: the holds need not outnumber the joins.
for try in 1 2 3; do
	hold_run "held$try" 10000
	[ "$HOLD_JOINED" -ge 100 ] && [ "$HOLD_HELD" -ge 100 ] && break
	diag "held$try: fewer than 100 ACKs held or joined; running again"
done
check "held: ACKs rode with requests ($HOLD_JOINED of 400)" \
	[ "$HOLD_JOINED" -ge 100 ]
check "held: ACKs were held for requests ($HOLD_HELD)" \
	[ "$HOLD_HELD" -ge 100 ]
hold_run off 0
expect_eq "off: no ACK held" 0 "$HOLD_HELD"
hold_run long 20000
expect_eq "long: no ACK held past a quarter of the timeout" 0 "$HOLD_HELD"
check "ack_hold_us back to $hold_default" sh -c "echo $hold_default > $hold_param"
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
