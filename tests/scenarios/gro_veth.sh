#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: netns
# kernels: 6.1
# full-kernels: 6.12
# requires: sroce
# timeout: 300
#
# Receive chains over a veth pair with GRO turned on (a veth does GRO only
# when asked to, and for all traffic only with TSO off on the sending
# side; see Documentation/admin-guide.rst, "Receive chains"):
# tools/bin/sroce-integrity moves checked data between sroce0 (h1) and
# sroce1 (h2) over RC and UC, through their IPv4 GIDs and then their IPv6
# GIDs. Every case must pass and both devices must count packets taken
# from chains (rx_gro_packets). Then batches of datagrams to port 4791 from
# h2: to h1's address they come in chains; to an address h1 forwards they
# must not, each leaving h1 alone. Then the integrity cases again with
# rx_gro=N at run time, where nothing may be chained.
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=datapath_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/datapath_lib.sh"

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
integrity=$repo/tools/bin/sroce-integrity
PARAM=/sys/module/sroce/parameters/rx_gro
PORT=18530
tmp=$(mktemp -d)

gro_of() { dp_stat "$1" rx_gro_packets; }

# taken_since P0 N: whether sroce0's rx_packets rose by N or more from P0.
taken_since() { [ $(($(dp_stat sroce0 rx_packets) - $1)) -ge "$2" ]; }

# tx_of DEV: the packets DEV of h1 sent.
tx_of() { ip netns exec h1 cat "/sys/class/net/$1/statistics/tx_packets"; }

# sent_since T0 N: whether fwd0 sent N or more packets since T0.
sent_since() { [ $(($(tx_of fwd0) - $1)) -ge "$2" ]; }

BATCH=256
# A sender of random datagrams without a UDP checksum, as RoCEv2 over
# IPv4 sends them, all from one source port: one flow.
SENDER='
import random, socket, sys
dst, n = sys.argv[1], int(sys.argv[2])
rnd = random.Random(4791)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, 11, 1)
s.bind(("", 40791))
for i in range(n):
    s.sendto(rnd.randbytes(rnd.randrange(64, 1025)), (dst, 4791))
'

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

# Datagrams to port 4791 that h1 forwards are never chained: a chain
# would leave by fwd0, a dummy that counts what it sends (and sends nothing
# of its own: no IPv6), as one packet.
# netem on v2 holds each batch and its timer releases it at once, so that
# v1's GRO sees the datagrams in batches; the same batches to h1's own
# address must come in chains, or the test would prove nothing.
check "netem on v2 sends in batches" \
	ip netns exec h2 tc qdisc add dev v2 root netem delay 20ms
check "h1 forwards to 198.18.9.0/24 by fwd0" sh -c "
	ip netns exec h1 sysctl -qw net.ipv4.ip_forward=1 &&
	ip -n h1 link add fwd0 type dummy &&
	ip netns exec h1 sysctl -qw net.ipv6.conf.fwd0.disable_ipv6=1 &&
	ip -n h1 link set fwd0 up &&
	ip -n h1 addr add 198.18.10.1/24 dev fwd0 &&
	ip -n h1 route add 198.18.9.0/24 dev fwd0 &&
	ip -n h1 neigh add 198.18.9.9 lladdr 02:00:00:00:00:09 dev fwd0 &&
	ip -n h2 route add 198.18.9.0/24 via $NET4_A"
p0=$(dp_stat sroce0 rx_packets) g0=$(gro_of sroce0)
check "$BATCH datagrams to $NET4_A:4791" \
	ip netns exec h2 /usr/bin/python3 - "$NET4_A" "$BATCH" <<<"$SENDER"
wait_until 30 taken_since "$p0" "$BATCH"
p=$(($(dp_stat sroce0 rx_packets) - p0)) g=$(($(gro_of sroce0) - g0))
expect_eq "to h1: sroce0 took every datagram" "$BATCH" "$p"
check "to h1: datagrams came in chains ($g)" [ "$g" -gt 0 ]
t0=$(tx_of fwd0) p0=$(dp_stat sroce0 rx_packets) g0=$(gro_of sroce0)
check "$BATCH datagrams to 198.18.9.9:4791, through h1" \
	ip netns exec h2 /usr/bin/python3 - 198.18.9.9 "$BATCH" <<<"$SENDER"
wait_until 30 sent_since "$t0" "$BATCH"
expect_eq "forwarded: fwd0 sent each datagram alone" "$BATCH" \
	$(($(tx_of fwd0) - t0))
expect_eq "forwarded: nothing chained on sroce0" 0 $(($(gro_of sroce0) - g0))
expect_eq "forwarded: nothing reached sroce0" 0 \
	$(($(dp_stat sroce0 rx_packets) - p0))
check "netem off" ip netns exec h2 tc qdisc del dev v2 root

check "rx_gro=N at run time" sh -c "echo N > $PARAM"
round alone "$DP_SRV_GID4" "$DP_CLI_GID4" "$DP_SRV_IP4"
expect_eq "alone: nothing chained on sroce1" 0 "$CHAINED1"
expect_eq "alone: nothing chained on sroce0" 0 "$CHAINED0"
check "rx_gro back on" sh -c "echo Y > $PARAM"

rm -rf "$tmp"
done_testing
