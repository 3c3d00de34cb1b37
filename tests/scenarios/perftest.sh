#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# perftest bandwidth and latency tests (send, write, read, atomic) over
# sroce, between two network namespaces of one guest and between two
# guests. perftest fails on any completion error; the bandwidth tests run
# a fixed number of iterations, never a duration, and the numbers they
# print are not checked (benchmarks do that).
#
# topology: netns twovm
# kernels: 6.1 6.12:twovm
# full-kernels: 6.12:netns
# timeout: 1200
# requires: sroce

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/datapath_lib.sh"

dp_setup
# it N: N iterations; a tenth (at least 10) on a KASAN kernel under TCG,
# which copies slowly. The same paths run either way.
it() {
	local n=$1
	[ "$SROCE_SLOW" -gt 1 ] && n=$((n / 10 > 10 ? n / 10 : 10))
	echo "$n"
}
pt() { dp_perftest "" "$@"; }
pt ib_send_bw -s 65536 -n "$(it 200)"
pt ib_send_bw -s 64 -n "$(it 1000)"
pt ib_write_bw -s 65536 -n "$(it 200)"
pt ib_write_bw -s 1048576 -n "$(it 20)"
pt ib_read_bw -s 65536 -n "$(it 200)" -o 4
pt ib_atomic_bw -n "$(it 500)" -o 4 -A CMP_AND_SWAP
pt ib_atomic_bw -n "$(it 500)" -A FETCH_AND_ADD
pt ib_send_lat -s 8 -n "$(it 200)"
pt ib_write_lat -s 4096 -n "$(it 200)"
pt ib_read_lat -s 8 -n "$(it 200)"
pt ib_atomic_lat -n "$(it 200)"

# zcopy_check NS NETDEV DEV: what DEV sent over NETDEV follows the zcopy
# parameter: at 1, or at -1 (auto, the default) over a netdev with
# scatter/gather (the veth pair), payload by page fragments (SENDs and
# WRITEs of the client, READ responses of the server); else (the
# virtio-net link between the guests has no scatter/gather) none by
# fragments, every payload copied.
zcopy_check() {
	local ns=$1 netdev=$2 dev=$3 mode sg z c
	read -r mode </sys/module/sroce/parameters/zcopy
	sg=$(in_ns "$ns" ethtool -k "$netdev" | grep '^scatter-gather:')
	z=$(dp_stats "$dev" | awk '$1 == "tx_zcopy_packets" { print $2 }')
	c=$(dp_stats "$dev" | awk '$1 == "tx_copy_packets" { print $2 }')
	diag "$dev: zcopy=$mode, $netdev $sg, tx_zcopy_packets ${z:-0}, tx_copy_packets ${c:-0}"
	if [ "$mode" = 1 ] ||
	   { [ "$mode" = -1 ] && [ "$sg" = "scatter-gather: on" ]; }; then
		check "$dev sent payload by page fragments over $netdev" \
			[ "${z:-0}" -gt 0 ]
	else
		expect_eq "$dev sent no payload by page fragments over $netdev" \
			0 "${z:-0}"
		check "$dev copied payload" [ "${c:-0}" -gt 0 ]
	fi
}

# batch_check WHAT PROG ARGS...: a stream of small READs or atomics. Over
# virtio-net, which splits transmit bursts, the server answers the
# requests of one receive batch together at its end: resp_batched counts
# those responses and tx_bursts the bursts they left in. Over the veth
# pair, which takes bursts whole, every response goes at once and none
# waits.
batch_check() {
	local what=$1 r0 b0 r b
	shift
	read -r r0 b0 <<<"$(batch_counts "$DP_SRV_DEV")"
	pt "$@"
	read -r r b <<<"$(batch_counts "$DP_SRV_DEV")"
	r=$((r - r0)) b=$((b - b0))
	if [ "$TOPO" = netns ]; then
		expect_eq "over veth no answer to $what waited for its batch" 0 "$r"
		return
	fi
	if [ "$ROLE" = b ]; then
		put "batch.$what" "$r $b"
		return
	fi
	read -r r b <<<"$(get "batch.$what" 120)"
	check "answers to $what left at the end of their receive batch ($r)" \
		[ "${r:-0}" -gt 0 ]
	check "answers to $what left together, in bursts ($b)" \
		[ "${b:-0}" -gt 0 ]
}
batch_counts() {
	dp_stats "$1" | awk '$1 == "resp_batched" { r = $2 }
		$1 == "tx_bursts" { b = $2 } END { print r + 0, b + 0 }'
}
batch_check READs ib_read_bw -s 1024 -n "$(it 2000)"
batch_check atomics ib_atomic_bw -n "$(it 2000)" -A FETCH_AND_ADD

# cork_check: a stream of 1 KiB WRITEs (one packet at any path MTU), one
# post_send each. Between the guests, virtio-net frees a sent packet only
# once the device has taken it, and a doorbell that finds its QP's earlier packets still
# there leaves its message for them to release (doorbells_corked): the
# messages then go in bursts, with tx_cork=0 each at once. The veth pair
# hands packets on as they come, so that its doorbells rarely find one.
cork_check() {
	local c0 c
	c0=$(dp_stat "$DP_CLI_DEV" doorbells_corked)
	pt ib_write_bw -s 1024 -n "$(it 2000)"
	c=$(($(dp_stat "$DP_CLI_DEV" doorbells_corked) - c0))
	diag "$DP_CLI_DEV: doorbells_corked $c over 1 KiB WRITEs"
	if [ "$TOPO" = twovm ] && [ "$ROLE" = a ]; then
		check "doorbells of a stream of 1 KiB WRITEs waited for packets in flight" \
			[ "$c" -gt 0 ]
	fi
	echo 0 >/sys/module/sroce/parameters/tx_cork
	c0=$(dp_stat "$DP_CLI_DEV" doorbells_corked)
	pt ib_write_bw -s 1024 -n "$(it 2000)"
	c=$(($(dp_stat "$DP_CLI_DEV" doorbells_corked) - c0))
	echo 1 >/sys/module/sroce/parameters/tx_cork
	[ "$ROLE" = b ] || expect_eq "with tx_cork=0 no doorbell waited" 0 "$c"
}
cork_check

if [ "$TOPO" = netns ]; then
	zcopy_check h1 v1 sroce0
	zcopy_check h2 v2 sroce1
else
	zcopy_check "" eth0 sroce0
fi
if [ "$ROLE" = a ]; then
	dp_stats "$DP_CLI_DEV" >&2
fi
done_testing
