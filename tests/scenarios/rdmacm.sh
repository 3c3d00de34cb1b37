#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# librdmacm's examples (rping, ucmatose, udaddy, rdma_server/client) and
# perftest over the RDMA CM, between two network namespaces of one guest
# and between two guests. The RDMA CM's messages travel as MADs on each
# device's GSI QP (QP1): a kernel QP with kernel CQs, kernel AHs and the
# DMA region.
#
# topology: netns twovm
# kernels: 6.1
# full-kernels: 6.12
# timeout: 900
# requires: sroce

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/datapath_lib.sh"

dp_setup
n=50
[ "$SROCE_SLOW" -gt 1 ] && n=10
# rping -V checks every ping's payload on the server side.
dp_pair "rping -V -C $n (IPv4)" 120 \
	rping -s -a @SRV4@ -p 18700 -V -C "$n" -S 1000 -- \
	rping -c -a @SRV4@ -p 18700 -V -C "$n" -S 1000
dp_pair "rping -V -C $n (IPv6)" 120 \
	rping -s -a @SRV6@ -p 18701 -V -C "$n" -S 1000 -- \
	rping -c -a @SRV6@ -p 18701 -V -C "$n" -S 1000
dp_pair "ucmatose: 4 connections, $n messages each" 120 \
	ucmatose -b @SRV4@ -p 18702 -c 4 -C "$n" -- \
	ucmatose -s @SRV4@ -p 18702 -c 4 -C "$n"
dp_pair "udaddy: 4 UD endpoints, $n messages each (SIDR)" 120 \
	udaddy -b @SRV4@ -c 4 -C "$n" -- \
	udaddy -s @SRV4@ -c 4 -C "$n"
# Multicast: the receiver's UD QP is attached to the group (the netdev
# joins it), the sender sends to QP 0xffffff. The kernel's RDMA CM joins
# IPv4 groups only over RoCEv2.
dp_pair "mckey: IPv4 group 239.1.2.3, $n datagrams" 120 \
	mckey -m 239.1.2.3 -b @SRV4@ -C "$n" -- \
	mckey -m 239.1.2.3 -b @CLI4@ -s -C "$n"
dp_pair "rdma_server / rdma_client" 120 \
	rdma_server -s @SRV4@ -p 18704 -- \
	rdma_client -s @SRV4@ -p 18704
dp_pair "ib_write_bw -R (connection through the RDMA CM)" 300 \
	ib_write_bw -R -d @DEV@ -p 18705 -n 200 -s 65536 -- \
	ib_write_bw -R -d @DEV@ -p 18705 -n 200 -s 65536 @SRV4@
# qperf -cm1 connects its RC QPs through the RDMA CM (the control
# connection is TCP); the server goes away with the "quit" test. Both
# results must be numbers. qperf resolves IPv4 addresses only.
#
# Debian's qperf 0.4.11 server tells the client its RDMA CM port before it
# calls rdma_listen(), so a quick client can reach the CM first and is
# rightly rejected (no listener for the service ID); in a TCG guest about
# one connection in four is. Only that rejection is retried, up to ten
# attempts in all; any other failure fails at once.
qperf_cm() {
	local host=$1 test out try pat
	shift
	for test in rc_bw rc_lat; do
		pat='bw += +[0-9.]+ [KMG]B/sec'
		[ "$test" = rc_lat ] && pat='latency += +[0-9.]+ (ns|us|ms)'
		for try in $(seq 10); do
			out=$(qperf "$host" -cm1 "$@" -t 1 "$test" 2>&1)
			echo "$out"
			grep -q 'Event rejected' <<<"$out" || break
			echo "($test attempt $try: connected before the server listened)"
		done
		grep -Eq "$pat" <<<"$out" || break
	done
	qperf "$host" "$@" quit >/dev/null 2>&1
	grep -Eq "$pat" <<<"$out" && [ "$test" = rc_lat ]
}
export -f qperf_cm
dp_pair "qperf -cm1 rc_bw rc_lat (IPv4)" 120 \
	qperf -lp 19765 -- \
	bash -c 'qperf_cm "$0" -lp 19765' @SRV4@
if [ "$ROLE" = a ]; then
	dp_stats "$DP_CLI_DEV" >&2
fi
done_testing
