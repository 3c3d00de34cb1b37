#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: netns
# kernels: 6.1 6.12
# requires: sroce
# timeout: 600
#
# Shared receive queues (srq_verbs.py): RC, UC and UD QPs receiving
# through one SRQ, WQEs taken in posting order, the one-shot limit event,
# resizing with WQEs posted, refused changes, a QP's error leaving the SRQ's
# WQEs alone, XRC refused; over the IPv4 and the IPv6 GID. ibv_srq_pingpong
# runs in the pingpong scenarios.
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=datapath_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/datapath_lib.sh"

tool=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/srq_verbs.py

# run_tool LABEL GIDX: the tool's TAP, each line prefixed with LABEL.
run_tool() {
	local label=$1 gidx=$2 out line
	out=$(mktemp)
	in_ns h1 timeout $((120 * SROCE_SLOW)) /usr/bin/python3 "$tool" \
		-d sroce0 -g "$gidx" >"$out" 2>&1
	echo "# srq_verbs.py ($label) exit status $?" >&2
	while IFS= read -r line; do
		case $line in
		"ok "*) ok "$label: ${line#ok * - }" ;;
		"not ok "*) not_ok "$label: ${line#not ok * - }" ;;
		"#"*) diag "$line" ;;
		1..*) ;;
		*) diag "$line" ;;
		esac
	done <"$out"
	grep -q '^1\.\.' "$out" || not_ok "$label: srq_verbs.py finished" "$(tail -n 20 "$out")"
	rm -f "$out"
}

dp_setup
run_tool "IPv4 GID" "$DP_CLI_GID4"
run_tool "IPv6 GID" "$DP_CLI_GID6"
done_testing
