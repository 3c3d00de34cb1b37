#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: netns
# kernels: 6.1
# full-kernels: 6.12
# requires: sroce
# timeout: 300
#
# Fault injection through debugfs (/sys/kernel/debug/sroce/DEV): every
# device has its directory. finj_verbs.py checks that all knobs are off on
# a new device and that garbage written to a knob is refused with EINVAL
# and changes nothing; then it drives each knob on RC connections from
# sroce0 (h1) to sroce1 (h2): failed send WQEs with the status asked for,
# dropped packets with a seed (twice, the same count), forced RNR and
# sequence NAKs, duplicated and corrupted packets, delayed packets (over
# IPv4 and IPv6) and a stalled completer; the application must see
# exactly the errors asked for and intact data otherwise, and the packet
# counters must agree with the faults counted. Last, a device deleted
# while one of its knob files is open takes its directory with it, and
# the open file fails cleanly.
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=datapath_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/datapath_lib.sh"

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tool=$here/finj_verbs.py
FINJ=/sys/kernel/debug/sroce

dp_setup
if [ -z "$DP_CLI_GID6" ] || [ -z "$DP_SRV_GID6" ]; then
	bail "no IPv6 GIDs"
fi
dir=$FINJ/$DP_CLI_DEV
for d in "$dir" "$FINJ/$DP_SRV_DEV"; do
	if [ -d "$d" ]; then ok "debugfs directory $d"; else not_ok "debugfs directory $d"; fi
done

# In the initial namespace: "ip netns exec" remounts /sys without debugfs.
out=$(mktemp)
timeout $((240 * SROCE_SLOW)) /usr/bin/python3 "$tool" \
	--client "$DP_CLI_DEV:$DP_CLI_GID4:$DP_CLI_GID6" \
	--server "$DP_SRV_DEV:$DP_SRV_GID4:$DP_SRV_GID6" >"$out" 2>&1
echo "# finj_verbs.py exit status $?" >&2
while IFS= read -r line; do
	case $line in
	"ok "*) ok "${line#ok * - }" ;;
	"not ok "*) not_ok "${line#not ok * - }" ;;
	1..*) ;;
	*) diag "$line" ;;
	esac
done <"$out"
grep -q '^1\.\.' "$out" || not_ok "finj_verbs.py finished" "$(tail -n 20 "$out")"
rm -f "$out"
diag "$(cat "$dir/counters")"

# Delete the device while a knob file is open: the directory goes, the
# open file fails its next write instead of reaching freed memory.
exec {fd}>"$dir/tx_drop"
check "delete $DP_CLI_DEV with a knob file open" \
	in_ns "$DP_CLI_NS" rdma link delete "$DP_CLI_DEV"
wait_until 30 ibdev_gone "$DP_CLI_DEV"
check "its debugfs directory is gone" test ! -e "$dir"
check_fail "the open knob file refuses writes" sh -c "echo 1 >&$fd"
exec {fd}>&-
done_testing
