#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: netns
# kernels: 6.1
# full-kernels: 6.12
# requires: sroce
# timeout: 300
#
# A packet fuzzer against two live devices: tools/bin/sroce-integrity moves
# checked data between sroce0 (h1) and sroce1 (h2) over RC and UC, through
# their IPv6 GIDs, round after round, each round followed by
# ibv_rc_pingpong and ibv_uc_pingpong with --chk (QPs that live long
# enough for the fuzzers to find them), while tools/sroce-pktfuzz.py sends
# a burst at each device's live QPs (and QPNs 0, 1, 0xffffff and random
# ones) from a third address added to v2 and, with PSNs outside the
# receive window only, from the peer's own address. Every integrity case
# and pingpong must pass, no NAK that fails a QP may be sent, and the drop
# counters of each device must account for every packet sent to it: their
# sum rises by at least the packets sent, and each drop the packet alone
# decides (header, opcode, ICRC, P_Key, no QP) by at least what the fuzzer
# predicted. PKTFUZZ_COUNT packets in all (default 4000, divided by
# SROCE_SLOW), with PKTFUZZ_SEED (default 1); SROCE_SCENARIO_ENV sets them.
# The rounds go on for as long as the fuzzers send, so every byte moved
# during the burst is checked, however long it is (make check-full sends
# a million packets through tests/extra/pktfuzz_1m.sh).
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=datapath_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/datapath_lib.sh"

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
fuzz=$repo/tools/sroce-pktfuzz.py
integrity=$repo/tools/bin/sroce-integrity
THIRD6=2001:db8::3
PORT=18520
COUNT=${PKTFUZZ_COUNT:-$((4000 / SROCE_SLOW))}
SEED=${PKTFUZZ_SEED:-1}
# NAKs that fail the QP they answer: no fuzzed packet may draw one, and
# the integrity cases never do.
FATAL_NAKS="access_nak_sent invalid_nak_sent"

tmp=$(mktemp -d)
declare -A ctr sent expect

# snapshot WHEN DEV: the port's counters into ctr[WHEN:DEV:NAME].
snapshot() {
	local name value
	while read -r name value; do
		ctr["$1:$2:$name"]=$value
	done < <(rdma statistic show link "$2/1" | tr ' ' '\n' | paste - - | tail -n +2)
}

# delta DEV NAME: how much a counter rose during the burst.
delta() { echo $((${ctr["after:$1:$2"]:-0} - ${ctr["before:$1:$2"]:-0})); }

# backlog_drops: packets the CPUs' input queues dropped (softnet_stat's
# second column): a fuzzed packet lost there never reaches a device.
backlog_drops() {
	local n=0 f
	while read -r _ f _; do
		n=$((n + 0x$f))
	done </proc/net/softnet_stat
	echo "$n"
}

# fuzz_start N NS SRC DST DEV [ARGS...]: fuzzer N in the background.
fuzz_pids=()
fuzz_dev=()
fuzz_start() {
	local n=$1 ns=$2 src=$3 dst=$4 dev=$5
	shift 5
	log "+ fuzzer $n in $ns: --src $src --dst $dst --rdma-dev $dev $*"
	ip netns exec "$ns" /usr/bin/python3 "$fuzz" \
		--src "$src" --dst "$dst" --rdma-dev "$dev" \
		--seed $((SEED * 10 + n)) --count $((COUNT / 4)) \
		--qp-file "$tmp/qps" --refresh "$SROCE_SLOW" "$@" \
		>"$tmp/fuzz$n.out" 2>&1 &
	fuzz_pids[n]=$!
	fuzz_dev[n]=$dev
}

# list_qps: every device's QPs into $tmp/qps, replaced whole.
list_qps() {
	rdma -j resource show qp >"$tmp/qps.new" 2>/dev/null &&
		mv -f "$tmp/qps.new" "$tmp/qps"
}

# qp_lister: list_qps every SROCE_SLOW seconds, for all four fuzzers:
# an exec costs tenths of a second in a TCG guest, and four fuzzers each
# running rdma every second took much of the CPU they share.
qp_lister() {
	while sleep "$SROCE_SLOW"; do
		list_qps
	done
}

fuzzing() {
	local pid
	for pid in "${fuzz_pids[@]}"; do
		kill -0 "$pid" 2>/dev/null && return 0
	done
	return 1
}

# integrity_round N: one session of the integrity tool, sroce1 serving.
integrity_round() {
	local n=$1 spid rc_s rc_c summary opts
	opts="-p $PORT -t $((60 * SROCE_SLOW)) -W $((60 * SROCE_SLOW)) -s $((SEED * 100 + n))"
	# shellcheck disable=SC2086
	ip netns exec h2 "$integrity" -d sroce1 -g "$DP_SRV_GID6" $opts \
		>"$tmp/srv$n.out" 2>&1 &
	spid=$!
	dp_wait_server "$spid" "$PORT"
	[ "$n" != 1 ] || start_fuzzers
	# shellcheck disable=SC2086
	ip netns exec h1 "$integrity" -d sroce0 -g "$DP_CLI_GID6" $opts \
		--quick --tests rc,uc -n 16 -b 131072 "$DP_SRV_IP6" \
		>"$tmp/cli$n.out" 2>&1
	rc_c=$?
	wait "$spid"
	rc_s=$?
	cat "$tmp/srv$n.out" "$tmp/cli$n.out" >&2
	summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$tmp/cli$n.out")
	if [ "$rc_c" = 0 ] && [ "$rc_s" = 0 ] && [[ $summary == *" 0 failed" ]]; then
		ok "integrity round $n over RC and UC, payload verified: $summary"
	else
		not_ok "integrity round $n over RC and UC, payload verified" \
			"client exit status $rc_c, server $rc_s, summary '${summary:-none}'"
		diag "$(grep -E '^not ok|error|fail' "$tmp/cli$n.out" | head -n 10)"
		diag_file "$tmp/srv$n.out" 10
	fi
}

start_fuzzers() {
	snapshot before sroce0
	snapshot before sroce1
	backlog_before=$(backlog_drops)
	list_qps
	qp_lister &
	lister_pid=$!
	# From the third address, to each device (to its own address over
	# loopback for sroce1); from each device's peer, out of window.
	fuzz_start 1 h2 "$THIRD6" "$DP_CLI_IP6" sroce0
	fuzz_start 2 h2 "$DP_SRV_IP6" "$DP_CLI_IP6" sroce0 --peer-mode
	fuzz_start 3 h2 "$THIRD6" "$DP_SRV_IP6" sroce1
	fuzz_start 4 h1 "$DP_CLI_IP6" "$DP_SRV_IP6" sroce1 --peer-mode
}

[ -x "$integrity" ] ||
	bail "$integrity is missing: build it on the host with 'make -C tools'"
dp_setup
if [ -z "$DP_CLI_GID6" ] || [ -z "$DP_SRV_GID6" ]; then
	bail "no IPv6 GIDs"
fi
check "the ICRC code matches a captured packet" \
	/usr/bin/python3 "$repo/tools/sroce-inject.py" --selftest
check "the fuzzer's verdicts, seeding and peer mode" \
	/usr/bin/python3 "$fuzz" --selftest
check "a third address on v2: $THIRD6" \
	ip -n h2 addr add "$THIRD6/64" dev v2 nodad
diag "fuzzing with $COUNT packets in all, seed $SEED"

t0=$SECONDS
round=0
iters=$((2000 / SROCE_SLOW))
while :; do
	round=$((round + 1))
	integrity_round "$round"
	fuzzing || break
	# An integrity case's QPs live for milliseconds, less than a look at
	# the QP list takes: these live for seconds, long enough for the
	# fuzzers to aim at them with their current PSNs.
	for t in rc uc; do
		dp_pair "$t pingpong round $round under fuzz, payload checked" 120 \
			"ibv_${t}_pingpong" -d @DEV@ -g @GID6@ -n "$iters" -s 1024 -e --chk -- \
			"ibv_${t}_pingpong" -d @DEV@ -g @GID6@ -n "$iters" -s 1024 -e --chk @SRV4@
	done
	fuzzing || break
done
for n in 1 2 3 4; do
	wait "${fuzz_pids[n]}"
	rc=$?
	[ "$n" != 4 ] || kill "$lister_pid"
	cat "$tmp/fuzz$n.out" >&2
	if [ "$rc" = 0 ] && grep -qE '^sent [0-9]+$' "$tmp/fuzz$n.out"; then
		ok "fuzzer $n to ${fuzz_dev[n]}: $(tail -n 1 "$tmp/fuzz$n.out") packets"
	else
		not_ok "fuzzer $n to ${fuzz_dev[n]}" "exit status $rc"
		diag_file "$tmp/fuzz$n.out" 20
	fi
	diag "$(grep -E '^# (peer mode|to a live|handed)' "$tmp/fuzz$n.out")"
	expect_match "fuzzer $n read the live QPs of ${fuzz_dev[n]}" \
		'^# QP lists of [a-z0-9]+ read [1-9]' "$(cat "$tmp/fuzz$n.out")"
	dev=${fuzz_dev[n]}
	sent["$dev"]=$((${sent["$dev"]:-0} + $(sed -n 's/^sent //p' "$tmp/fuzz$n.out" | tail -n 1)))
	while read -r _ _ counter count; do
		expect["$dev:$counter"]=$((${expect["$dev:$counter"]:-0} + count))
	done < <(grep '^# expect ' "$tmp/fuzz$n.out")
done
log "fuzzing and $round integrity rounds took $((SECONDS - t0)) s"
# Requests held back behind READ responses are handled from a work item.
sleep "$SROCE_SLOW"
snapshot after sroce0
snapshot after sroce1
diag "input queue drops during the burst: $(($(backlog_drops) - backlog_before))"

for dev in sroce0 sroce1; do
	sum=0 breakdown=
	for c in $DP_DROPS; do
		d=$(delta "$dev" "$c")
		sum=$((sum + d))
		[ "$d" = 0 ] || breakdown+="$c +$d "
	done
	if [ "$sum" -ge "${sent[$dev]:-0}" ]; then
		ok "$dev: the drop counters rose by $sum for the ${sent[$dev]} packets fuzzed at it"
	else
		not_ok "$dev: the drop counters rose by $sum for the ${sent[$dev]} packets fuzzed at it" \
			"$breakdown"
	fi
	diag "$dev: $breakdown"
	short=
	for key in "${!expect[@]}"; do
		[ "${key%%:*}" = "$dev" ] || continue
		c=${key#*:}
		d=$(delta "$dev" "$c")
		[ "$d" -ge "${expect[$key]}" ] || short+="$c +$d (sent ${expect[$key]}) "
	done
	expect_eq "$dev: every drop decided by the packet alone counted by its reason" "" "$short"
	short=
	for c in $FATAL_NAKS; do
		d=$(delta "$dev" "$c")
		[ "$d" = 0 ] || short+="$c +$d "
	done
	expect_eq "$dev: no NAK that fails a QP was sent" "" "$short"
	d=$(delta "$dev" rx_packets)
	if [ "$d" -ge "${sent[$dev]:-0}" ]; then
		ok "$dev: rx_packets rose by $d, at least the ${sent[$dev]} fuzzed"
	else
		not_ok "$dev: rx_packets rose by $d, fewer than the ${sent[$dev]} fuzzed"
	fi
done
log "QPs left: $(rdma resource show qp 2>&1)"
rm -rf "$tmp"
done_testing
