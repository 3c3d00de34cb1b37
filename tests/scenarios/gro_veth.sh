#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: netns
# kernels: 6.1 6.12 debug
# requires: sroce
# timeout: 300
#
# Receive chains over a veth pair with GRO turned on (a veth does GRO only
# when asked to, and for all traffic only with TSO off on the sending
# side; see Documentation/admin-guide.rst, "Receive chains"):
# tools/bin/sroce-integrity moves checked data between sroce0 (h1) and
# sroce1 (h2) over RC and UC, through their IPv4 GIDs and then their IPv6
# GIDs. Every case must pass and both devices must count packets taken
# from chains (rx_gro_packets); then the same with rx_gro=N at run time,
# where neither may.
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=datapath_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/datapath_lib.sh"

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
integrity=$repo/tools/bin/sroce-integrity
PARAM=/sys/module/sroce/parameters/rx_gro
PORT=18530
tmp=$(mktemp -d)

gro_of() {
	dp_stats "$1" | awk '$1 == "rx_gro_packets" { v = $2 } END { print v + 0 }'
}

# round NAME SRV_GID CLI_GID SRV_ADDR: one integrity session, sroce1
# serving; sets CHAINED0 and CHAINED1, the packets each device took from
# chains meanwhile.
round() {
	local name=$1 port=$PORT spid rc_s rc_c summary g0 g1 opts
	opts="-p $port -t $((60 * SROCE_SLOW)) -W $((60 * SROCE_SLOW)) -s 7"
	PORT=$((PORT + 1))
	g0=$(gro_of sroce0) g1=$(gro_of sroce1)
	# shellcheck disable=SC2086
	ip netns exec h2 "$integrity" -d sroce1 -g "$2" $opts \
		>"$tmp/srv.out" 2>&1 &
	spid=$!
	dp_wait_server "$spid" "$port"
	# shellcheck disable=SC2086
	ip netns exec h1 "$integrity" -d sroce0 -g "$3" $opts \
		--quick --tests rc,uc -n 16 -b 262144 "$4" >"$tmp/cli.out" 2>&1
	rc_c=$?
	wait "$spid"
	rc_s=$?
	cat "$tmp/srv.out" "$tmp/cli.out" >&2
	summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$tmp/cli.out")
	if [ "$rc_c" = 0 ] && [ "$rc_s" = 0 ] && [[ $summary == *" 0 failed" ]]; then
		ok "$name: RC and UC, payload verified: $summary"
	else
		not_ok "$name: RC and UC, payload verified" \
			"client exit status $rc_c, server $rc_s, summary '${summary:-none}'"
		diag "$(grep -E '^not ok|error|fail' "$tmp/cli.out" | head -n 10)"
	fi
	CHAINED0=$(($(gro_of sroce0) - g0)) CHAINED1=$(($(gro_of sroce1) - g1))
	diag "$name: packets taken from chains: sroce0 $CHAINED0, sroce1 $CHAINED1"
}

[ -x "$integrity" ] ||
	bail "$integrity is missing: build it on the host with 'make -C tools'"
dp_setup
[ -n "$DP_CLI_GID6" ] && [ -n "$DP_SRV_GID6" ] || bail "no IPv6 GIDs"
# A veth hands its peer's packets to the GRO engine when GRO is on for
# it and, for anything but UDP socket traffic, TSO off for the peer.
check "GRO on and TSO off for v1" ip netns exec h1 ethtool -K v1 gro on tso off
check "GRO on and TSO off for v2" ip netns exec h2 ethtool -K v2 gro on tso off

round IPv4 "$DP_SRV_GID4" "$DP_CLI_GID4" "$DP_SRV_IP4"
check "IPv4: sroce1 took packets from chains ($CHAINED1)" [ "$CHAINED1" -gt 0 ]
check "IPv4: sroce0 took packets from chains ($CHAINED0)" [ "$CHAINED0" -gt 0 ]
round IPv6 "$DP_SRV_GID6" "$DP_CLI_GID6" "$DP_SRV_IP6"
check "IPv6: sroce1 took packets from chains ($CHAINED1)" [ "$CHAINED1" -gt 0 ]
check "IPv6: sroce0 took packets from chains ($CHAINED0)" [ "$CHAINED0" -gt 0 ]

check "rx_gro=N at run time" sh -c "echo N > $PARAM"
round alone "$DP_SRV_GID4" "$DP_CLI_GID4" "$DP_SRV_IP4"
expect_eq "alone: nothing chained on sroce1" 0 "$CHAINED1"
expect_eq "alone: nothing chained on sroce0" 0 "$CHAINED0"
check "rx_gro back on" sh -c "echo Y > $PARAM"

rm -rf "$tmp"
done_testing
