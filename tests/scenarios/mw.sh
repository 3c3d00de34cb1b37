#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: netns
# kernels: 6.1
# full-kernels: 6.12
# requires: sroce
# timeout: 300
#
# Memory windows (mw_verbs.py): sroce0 in h1 sends to windows of sroce1 in
# h2, bound at an offset inside a region: a zero-based type 2 window and
# type 1 and type 2 windows at the region's addresses take WRITEs, READs
# and atomics, every byte of the region checked against the traffic;
# accesses past a window's end or wrapping past 2^64 fail with a remote
# access error and change nothing; a zero-based type 1 window is refused;
# a region with a window bound cannot be deregistered until it is gone.
# Then, with netem dropping 10% of the packets both ways, rounds of WRITE,
# READ and atomics through a zero-based window, all checked, while the
# responder answers the duplicates the losses cause from what it saved.
# Over the IPv4 GID. (At 20%, an operation whose request or answer kept
# being lost ran out of its eight tries (retry_cnt 7) about once in 75
# rounds: the odds of go-back-N at that loss rate, not a fault of the
# windows.)
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=datapath_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/datapath_lib.sh"

tool=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/mw_verbs.py

dp_setup
dp_tap_tool "IPv4 GID" 120 "$tool" --a "$DP_CLI_DEV:$DP_CLI_GID4" \
	--b "$DP_SRV_DEV:$DP_SRV_GID4"

# duplicates: requests the windows' device has answered again.
duplicates() {
	rdma statistic show link "$DP_SRV_DEV/1" | tr ' ' '\n' | paste - - |
		awk '$1 == "rx_duplicate_request" { print $2 }'
}

before=$(duplicates)
check "netem: 10% loss on v1 and v2" eval \
	'h1 tc qdisc add dev v1 root netem loss 10% && h2 tc qdisc add dev v2 root netem loss 10%'
dp_tap_tool "IPv4 GID, lossy" 120 "$tool" --a "$DP_CLI_DEV:$DP_CLI_GID4" \
	--b "$DP_SRV_DEV:$DP_SRV_GID4" --lossy 12
h1 tc qdisc del dev v1 root
h2 tc qdisc del dev v2 root
after=$(duplicates)
diag "rx_duplicate_request of $DP_SRV_DEV: ${before:-?} before, ${after:-?} after"
check "the losses made $DP_SRV_DEV answer duplicate requests" \
	test "${after:-0}" -gt "${before:-0}"
done_testing
