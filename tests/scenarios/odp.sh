#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: netns
# kernels: 6.1 6.12
# requires: sroce
# timeout: 600
#
# On-demand paging (odp_verbs.py): RC SEND, WRITE, READ and atomics, UD and
# SRQ receives through regions registered with IBV_ACCESS_ON_DEMAND whose
# pages are not mapped yet; transfers racing with MADV_DONTNEED taking the
# pages away, every payload checked; access to a range with no memory
# behind it failing with the right completion status; the page fault
# counters. Over the IPv4 and the IPv6 GID. rdma-core's own ODP cases run in
# the rdma_core_suite scenario.
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=datapath_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/datapath_lib.sh"

tool=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/odp_verbs.py

# run_tool LABEL GIDX: the tool's TAP, each line prefixed with LABEL.
run_tool() {
	local label=$1 gidx=$2 out line
	# A slow (debug) kernel races fewer rounds, and takes the pages away
	# as often relative to its speed.
	out=$(mktemp)
	in_ns h1 timeout $((300 * SROCE_SLOW)) /usr/bin/python3 "$tool" \
		-d sroce0 -g "$gidx" --rounds $((200 / SROCE_SLOW + 20)) \
		--zap-us $((500 * SROCE_SLOW)) \
		>"$out" 2>&1
	echo "# odp_verbs.py ($label) exit status $?" >&2
	while IFS= read -r line; do
		case $line in
		"ok "*) ok "$label: ${line#ok * - }" ;;
		"not ok "*) not_ok "$label: ${line#not ok * - }" ;;
		"#"*) diag "$line" ;;
		1..*) ;;
		*) diag "$line" ;;
		esac
	done <"$out"
	grep -q '^1\.\.' "$out" || not_ok "$label: odp_verbs.py finished" "$(tail -n 20 "$out")"
	rm -f "$out"
}

dp_setup
run_tool "IPv4 GID" "$DP_CLI_GID4"
run_tool "IPv6 GID" "$DP_CLI_GID6"
done_testing
