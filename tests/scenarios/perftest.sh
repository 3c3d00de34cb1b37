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
if [ "$ROLE" = a ]; then
	dp_stats "$DP_CLI_DEV" >&2
fi
done_testing
