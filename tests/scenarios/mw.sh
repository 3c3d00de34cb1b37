#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: netns
# kernels: 6.1 6.12
# requires: sroce
# timeout: 300
#
# Memory windows (mw_verbs.py): sroce0 in h1 sends to windows of sroce1 in
# h2, bound at an offset inside a region: a zero-based type 2 window and
# type 1 and type 2 windows at the region's addresses take WRITEs, READs
# and atomics, every byte of the region checked against the traffic;
# accesses past a window's end or wrapping past 2^64 fail with a remote
# access error and change nothing; a zero-based type 1 window is refused.
# Over the IPv4 GID.
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=datapath_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/datapath_lib.sh"

tool=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/mw_verbs.py

dp_setup
dp_tap_tool "IPv4 GID" 120 "$tool" --a "$DP_CLI_DEV:$DP_CLI_GID4" \
	--b "$DP_SRV_DEV:$DP_SRV_GID4"
done_testing
