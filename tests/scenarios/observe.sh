#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: netns
# kernels: 6.1
# full-kernels: 6.12
# requires: sroce
# timeout: 300
#
# Observability with the tools that already exist. With the sroce
# tracepoints enabled through tracefs, observe_verbs.py provokes known
# events between sroce0 (h1, the victim) and sroce1 (h2, the peer) and
# checks the trace against what it did: QP state changes of known QPs
# (connect, error, destroy, and a QP failed by RNR retries), packets
# injected with a bad P_Key or an out-of-window PSN traced as drops one
# for one with their QPN and PSN and agreeing with the counters, a
# sequence error NAK, RNR NAKs with their waits and resends, timeout
# resends towards a QPN that does not exist. "rdma resource show -dd"
# must show the driver's PSNs and queues of a live QP, an MR's rights
# and pages, a CQ's entries in use. perf trace, where installed, must decode
# the events from their tracefs format.
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=datapath_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/datapath_lib.sh"

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
inject=$(cd "$here/../.." && pwd)/tools/sroce-inject.py
# A tracefs of its own, out of /sys: "ip netns exec" mounts a sysfs of the
# namespace over /sys for the tool it runs.
tracefs=$(mktemp -d)
trap 'umount "$tracefs" 2>/dev/null; rmdir "$tracefs"' EXIT

dp_setup
if [ -z "$DP_CLI_GID6" ] || [ -z "$DP_SRV_GID6" ]; then
	bail "no IPv6 GIDs"
fi
check "tracefs mounted" mount -t tracefs tracefs "$tracefs" ||
	bail "no tracefs"
check "tracefs has events/sroce/" test -e "$tracefs/events/sroce/enable" ||
	bail "no sroce events in tracefs"

dp_tap_tool "observe" 240 "$here/observe_verbs.py" \
	--victim "$DP_CLI_DEV:$DP_CLI_GID6:$DP_CLI_IP6" \
	--peer "$DP_SRV_DEV:$DP_SRV_GID6:$DP_SRV_IP6" \
	--ns "$DP_SRV_NS" --inject "$inject" --tracefs "$tracefs"

# perf reads the events' formats: what it prints is what user space makes
# of them, symbols included. Its start costs 10 to 20 s under TCG, so it
# runs on one kernel; observe_verbs.py checks the formats on each.
if [ "$SROCE_KNAME" != 6.1 ]; then
	skip "perf trace decodes sroce_rx_drop events" "on 6.1 only (the event formats are checked on every kernel)"
elif command -v perf >/dev/null; then
	out=$(mktemp) t0=$SECONDS
	perf trace --libtraceevent_print --no-syscalls -o "$out" \
		-e sroce:sroce_rx_drop -a -- \
		ip netns exec "$DP_SRV_NS" /usr/bin/python3 "$inject" \
		--src "$DP_SRV_IP6" --dst "$DP_CLI_IP6" --qpn 0x123 --psn 77 \
		--op send-only --pkey 0x1234 --count 2 >/dev/null 2>&1
	log "perf took $((SECONDS - t0)) s"
	expect_eq "perf trace decodes 2 sroce_rx_drop events of the injected packets" \
		"dev=$DP_CLI_DEV reason=rx_bad_pkey qpn=291 psn=77|dev=$DP_CLI_DEV reason=rx_bad_pkey qpn=291 psn=78" \
		"$(grep -o 'dev=[^)]*' "$out" | paste -sd '|')"
	rm -f "$out"
else
	skip "perf trace decodes sroce_rx_drop events" "no perf"
fi
# The wire as other tools see it: SENDs, WRITEs, READs and atomics over
# IPv4 and IPv6 captured on h1's veth; roce_pcap.py checks each frame's
# format and ICRC with its own code, and that tshark decodes the same.
pcap=$(mktemp --suffix=.pcap) fields=$(mktemp)
ip netns exec "$DP_CLI_NS" tcpdump --immediate-mode -Z root -i v1 -s 0 -U -w "$pcap" udp port 4791 2>/dev/null &
capture=$!
wait_until 10 test -s "$pcap"
dp_pair "ibv_rc_pingpong -s 3000 -n 4 (IPv6 GID), captured" 120 \
	ibv_rc_pingpong -d @DEV@ -g @GID6@ -s 3000 -n 4 -c -- \
	ibv_rc_pingpong -d @DEV@ -g @GID6@ -s 3000 -n 4 -c @SRV4@
dp_perftest "captured: " ib_write_bw -n 5 -s 3000
dp_perftest "captured: " ib_read_bw -n 5 -s 3000
dp_perftest "captured: " ib_atomic_bw -n 5
kill -INT "$capture" 2>/dev/null
wait "$capture" 2>/dev/null
if command -v tshark >/dev/null; then
	tshark -r "$pcap" -Y infiniband -T fields -e infiniband.bth.opcode \
		-e infiniband.bth.destqp -e infiniband.bth.psn \
		-e infiniband.invariant.crc >"$fields" 2>/dev/null
	dp_tap_tool wire 60 "$here/roce_pcap.py" "$pcap" --tshark "$fields" \
		--expect SEND_FIRST,SEND_LAST,WRITE_FIRST,WRITE_LAST,READ_REQUEST,READ_RESPONSE_FIRST,READ_RESPONSE_LAST,FETCH_ADD,ATOMIC_ACKNOWLEDGE,ACKNOWLEDGE
else
	dp_tap_tool wire 60 "$here/roce_pcap.py" "$pcap" \
		--expect SEND_FIRST,SEND_LAST,WRITE_FIRST,WRITE_LAST,READ_REQUEST,READ_RESPONSE_FIRST,READ_RESPONSE_LAST,FETCH_ADD,ATOMIC_ACKNOWLEDGE,ACKNOWLEDGE
	skip "tshark decodes the frames" "no tshark"
fi
rm -f "$pcap" "$fields"
diag "$(dp_stats "$DP_CLI_DEV")"
done_testing
