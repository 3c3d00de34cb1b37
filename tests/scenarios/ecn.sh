#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: netns
# kernels: 6.12
# full-kernels: 6.1
# requires: sroce
# timeout: 600
#
# ECN congestion control. Without a bottleneck (h1 <-> h2), ECN on marks
# nothing and sends no CNP; the bandwidths with it off and on are printed.
# Then a router namespace between ec and es with a bottleneck for RoCEv2
# on its egress toward es (HTB at $BOTTLENECK, RED under it that marks
# ECN-capable packets and drops the others): two ib_write_bw flows of
# DURATION seconds share it, once with the ecn parameter off (RED drops)
# and once on (RED marks, the receiver sends CNPs, the senders slow down).
# What each flow delivers is measured while both run (see
# bottleneck_run). With ECN on, packets must be marked, CNPs sent and
# handled, and the requesters must retransmit no more than with ECN
# off; sroce-integrity then verifies data through the marking
# bottleneck. A capture behind the bottleneck shows the ECN field of the
# frames and the CNPs on the wire.
# With ECN on, the two flows must share the bottleneck fairly: Jain's
# index of their shares at least 0.9. Both runs' shares and indexes,
# the senders' DCQCN limits and windows, perftest's averages,
# retransmissions, the qdisc's drops and marks and what overflowed it
# are printed; no speed is asserted on.
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=datapath_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/datapath_lib.sh"

PARAMS=/sys/module/sroce/parameters
BOTTLENECK=30mbit
ITERS=64
TOOL=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/tools/bin/sroce-integrity
C_IP=198.19.2.1 RC_IP=198.19.2.126 RS_IP=198.19.2.129 S_IP=198.19.2.130

# cnt DEV NAME: one counter of DEV.
cnt() {
	rdma statistic show link "$1/1" | tr ' ' '\n' |
		awk -v k="$2" 'p { print; exit } $0 == k { p = 1 }'
}

# retrans DEV: the requester's go-backs: NAKs for a PSN sequence error
# plus retransmission timeouts.
retrans() {
	echo $(($(cnt "$1" seq_nak_received) + $(cnt "$1" retransmit_timeouts)))
}

set_ecn() {
	echo "$1" >"$PARAMS/ecn" && [ "$(cat "$PARAMS/ecn")" = "$2" ]
}

# bw_of [FILE]: perftest's average bandwidth (MB/s) from its report line.
bw_of() {
	awk '$1 == 65536 && NF >= 5 { print $4; exit }' "$@"
}

# snap DEV...: the counters that matter, "dev:name=value" words.
snap() {
	local d k
	for d; do
		for k in ecn_marked_packets cnp_sent cnp_handled seq_nak_received \
			retransmit_timeouts rx_out_of_sequence; do
			printf '%s:%s=%s ' "$d" "$k" "$(cnt "$d" "$k")"
		done
	done
	echo
}

check "modprobe sroce" modprobe sroce || need_module sroce
expect_eq "ecn is on by default" Y "$(cat "$PARAMS/ecn" 2>&1)"
expect_eq "cnp_interval_us defaults to 50" 50 "$(cat "$PARAMS/cnp_interval_us" 2>&1)"

# --- No bottleneck: ECN on must not change what happens. ---
dp_setup
check "ecn parameter off at run time" set_ecn 0 N
dp_perftest "plain path, ECN off: " ib_write_bw -s 65536 -n "$ITERS"
bw_plain_off=$(bw_of <<<"$DP_LAST_OUT")
check "ecn parameter on at run time" set_ecn 1 Y
dp_perftest "plain path, ECN on: " ib_write_bw -s 65536 -n "$ITERS"
bw_plain_on=$(bw_of <<<"$DP_LAST_OUT")
diag "no bottleneck: ib_write_bw 64 KiB x $ITERS: ECN off ${bw_plain_off:-?} MB/s, ECN on ${bw_plain_on:-?} MB/s"
expect_eq "plain path: no packet marked CE" 0 \
	"$(($(cnt "$DP_SRV_DEV" ecn_marked_packets) + $(cnt "$DP_CLI_DEV" ecn_marked_packets)))"
expect_eq "plain path: no CNP sent" 0 \
	"$(($(cnt "$DP_SRV_DEV" cnp_sent) + $(cnt "$DP_CLI_DEV" cnp_sent)))"
expect_eq "plain path: no CNP handled" 0 \
	"$(($(cnt "$DP_SRV_DEV" cnp_handled) + $(cnt "$DP_CLI_DEV" cnp_handled)))"

# --- A router with a bottleneck toward es. ---
router_up() {
	ip netns add ec && ip netns add er && ip netns add es &&
	ip link add c0 netns ec type veth peer name r0 netns er &&
	ip link add s0 netns es type veth peer name r1 netns er || return
	printf '%s\n' "addr add $C_IP/25 dev c0" "link set lo up" "link set c0 up" \
		"route add default via $RC_IP" | ip -n ec -batch - || return
	printf '%s\n' "addr add $S_IP/25 dev s0" "link set lo up" "link set s0 up" \
		"route add default via $RS_IP" | ip -n es -batch - || return
	printf '%s\n' "addr add $RC_IP/25 dev r0" "addr add $RS_IP/25 dev r1" \
		"link set lo up" "link set r0 up" "link set r1 up" | ip -n er -batch - || return
	ip netns exec er sysctl -qw net.ipv4.ip_forward=1 || return
	# RoCEv2 (UDP port 4791) goes through the bottleneck, where RED
	# marks ECN-capable packets and drops the others, early, from an
	# average queue of 15 KB up (all of them from 45 KB). The queue
	# itself holds 800 KB, a fifth of one flow's whole window (4 MiB):
	# with ECN on, DCQCN cuts the rate and each CNP the window (cc.c),
	# so that most of what they do not prevent is marked, not lost; a
	# burst may still overflow it by some hundreds of packets, more
	# when a loaded guest drains it slowly, and what overflowed it is
	# printed. The tools' TCP control connections go by: RED would
	# drop their packets as readily.
	tc -n er qdisc add dev r1 root handle 1: htb default 2 &&
	tc -n er class add dev r1 parent 1: classid 1:1 htb rate "$BOTTLENECK" ceil "$BOTTLENECK" &&
	tc -n er class add dev r1 parent 1: classid 1:2 htb rate 100mbit ceil 1gbit &&
	tc -n er qdisc add dev r1 parent 1:1 handle 10: red limit 800000 min 15000 \
		max 45000 avpkt 1100 burst 20 probability 0.1 bandwidth "$BOTTLENECK" ecn &&
	tc -n er filter add dev r1 parent 1: protocol ip u32 \
		match ip protocol 17 0xff match ip dport 4791 0xffff flowid 1:1
}
check "router namespace with an ECN-marking bottleneck" router_up || bail "no router"
check "sroceC on c0 in ec" ip netns exec ec rdma link add sroceC type sroce netdev c0 || bail "no sroceC"
check "sroceS on s0 in es" ip netns exec es rdma link add sroceS type sroce netdev s0 || bail "no sroceS"
wait_until 30 port_is sroceC PORT_ACTIVE
wait_until 30 port_is sroceS PORT_ACTIVE
wait_until 30 gid_index sroceC "$(gid_v4 $C_IP)"
wait_until 30 gid_index sroceS "$(gid_v4 $S_IP)"
CG=$(gid_index sroceC "$(gid_v4 $C_IP)")
SG=$(gid_index sroceS "$(gid_v4 $S_IP)")
if [ -z "$CG" ] || [ -z "$SG" ]; then
	bail "no GIDs on sroceC/sroceS"
fi
check "es is reachable through the router" ping_ok ec "$S_IP"

# The bottleneck's flows run for a fixed time (perftest's -D), and what
# each gets is measured while both run: a flow of a fixed size that ends
# first would leave the other the whole bottleneck and raise its average,
# and the later start of the second would do the same for the first. So
# perftest's own averages are only printed; the shares are read from the
# receiver's QPs, whose expected PSN (resp_epsn in rdma's QP resource)
# counts the packets that arrived in order, each one path MTU of a 64 KiB
# write: once both flows have delivered data, after WARM seconds for
# DCQCN to settle, over WINDOW seconds, both flows still running at its
# end. The window spans many of DCQCN's cycles of cuts and recovery: in
# a guest that shares its host with busy ones, one cycle of a marking
# queue that drains some hundreds of KB/s takes about a second, and over
# 5 s the index of fair flows once fell to 0.74 where over 15 s it was
# 0.94. Each look at the QPs takes up to a few seconds in such a guest,
# and both flows may take many seconds to deliver their first data (13 s
# once, with the debug kernel's guest and two others on a two-core host,
# where a run of flows of 35 s ended before the window did): the flows
# last 50 s, so that they still run when the window ends.
DURATION=50 WARM=3 WINDOW=15

# epsns DEV: "QPN:EPSN" words of DEV's QPs but QP1, in QPN order.
epsns() {
	rdma -dd resource show qp link "$1/1" | tr -s ' \t' '\n' |
		awk '$0 == "lqpn" { k = "q"; next } $0 ~ /resp_epsn$/ { k = "e"; next }
			k == "q" { q = $0 } k == "e" && q > 1 { print q ":" $0 } { k = "" }' |
		sort -n | paste -sd ' '
}

# limits DEV: "RATE/WINDOW" words of DEV's QPs (kbit/s, 0 unlimited;
# packets).
limits() {
	rdma -dd resource show qp link "$1/1" | tr -s ' \t' '\n' |
		awk '$0 == "drv_cwnd" { k = "w"; next } $0 == "drv_cc_rate_kbps" { k = "r"; next }
			k == "w" { w = $0 } k == "r" { print $0 "/" w } { k = "" }' | paste -sd ' '
}

# overflows: the packets the bottleneck's RED queue dropped for want of
# room (its "pdrop"), not early.
overflows() {
	tc -n er -s qdisc show dev r1 | awk '/^qdisc red/ { r = 1 }
		r && /pdrop/ { for (i = 1; i < NF; i++) if ($i == "pdrop") { print $(i + 1); exit } }'
}

# moved A B: snapshot B has two QPs, each in snapshot A too, with another
# PSN there.
moved() {
	local a=$1 b=$2 w n=0
	for w in $b; do
		[[ " $a " == *" ${w%%:*}:"* ]] || return 1
		[[ " $a " == *" $w "* ]] && return 1
		n=$((n + 1))
	done
	[ "$n" = 2 ]
}

# flowing: both flows delivered data since the last call (PREV).
flowing() {
	local b rc
	b=$(epsns sroceS)
	moved "$PREV" "$b"
	rc=$?
	PREV=$b
	return $rc
}

# shares S0 S1 SECONDS MTU: "QPN:MB/s" of each QP from snapshot S0 to S1.
shares() {
	echo "$1" "$2" | tr ' ' '\n' | awk -F: -v mtu="$4" -v dt="$3" '
		$1 in p { printf "%s:%.2f ", $1, ($2 - p[$1] + 16777216) % 16777216 * mtu / dt / 1e6; next }
		{ p[$1] = $2 }'
}

# jain SHARES: Jain's fairness index of two shares, (x + y)^2 / 2(x^2 + y^2),
# 1 when they are equal, 0.5 when one flow has it all.
jain() {
	echo "$1" | tr ' ' '\n' | awk -F: 'NF == 2 { s += $2; q += $2 * $2; n++ }
		END { if (n == 2 && q > 0) printf "%.3f", s * s / (n * q) }'
}

# bottleneck_flows TAG: two flows of DURATION seconds through the
# bottleneck, measured while both run; sets SHARES ("QPN:MB/s"), JAIN
# (their fairness index, empty when not measured), LIMITS (the senders'
# rate limits and windows at the window's end), WINDOW_SEEN (what the
# window saw), RCS and BW (each flow's exit status and perftest's
# average), and the counters' values at the start (the *0 variables).
# Fails when a flow did.
bottleneck_flows() {
	local i spids=() cpids=() t0 t1 s0='' s1='' running=1 mtu
	rt0=$(retrans sroceC) m0=$(cnt sroceS ecn_marked_packets)
	c0=$(cnt sroceS cnp_sent) h0=$(cnt sroceC cnp_handled) o0=$(overflows)
	mtu=$(ibv_attr sroceS active_mtu)
	for i in 0 1; do
		ip netns exec es timeout $(((DURATION + 30) * SROCE_SLOW)) ib_write_bw -d sroceS -x "$SG" \
			-p $((18700 + i)) -s 65536 -D "$DURATION" >"/tmp/ecn.$1.s$i" 2>&1 &
		spids+=($!)
	done
	for i in 0 1; do
		wait_until 30 dp_listening "${spids[i]}" $((18700 + i))
	done
	for i in 0 1; do
		ip netns exec ec timeout $(((DURATION + 30) * SROCE_SLOW)) ib_write_bw -d sroceC -x "$CG" \
			-p $((18700 + i)) -s 65536 -D "$DURATION" "$S_IP" >"/tmp/ecn.$1.c$i" 2>&1 &
		cpids+=($!)
	done
	SHARES='' JAIN='' PREV='' LIMITS=''
	if wait_until 30 flowing; then
		nap "$WARM"
		t0=$EPOCHREALTIME s0=$(epsns sroceS)
		nap "$WINDOW"
		t1=$EPOCHREALTIME s1=$(epsns sroceS)
		LIMITS=$(limits sroceC)
		for i in 0 1; do
			kill -0 "${cpids[i]}" 2>/dev/null || running=0
		done
		if [ "$running" = 1 ]; then
			SHARES=$(shares "$s0" "$s1" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" "$mtu")
			JAIN=$(jain "$SHARES")
		fi
	fi
	WINDOW_SEEN="window: ${s0:-?} -> ${s1:-?}; clients still running: $running"
	RCS=() BW=()
	for i in 0 1; do
		wait "${cpids[i]}"
		RCS+=($?)
		wait "${spids[i]}" || RCS[i]=1
		cat "/tmp/ecn.$1.s$i" "/tmp/ecn.$1.c$i" >&2
		BW+=("$(bw_of "/tmp/ecn.$1.c$i")")
	done
	[ "${RCS[*]}" = "0 0" ] && [ -n "${BW[0]}" ] && [ -n "${BW[1]}" ]
}

# bottleneck_run TAG: bottleneck_flows, again (at most twice) when
# perftest could not calibrate its clock (see datapath_lib.sh) and so
# failed a flow after its transfer; then reports. Sets JAIN, SHARES,
# LIMITS and RT (client retransmissions in the run), MARKED, CNPS,
# HANDLED, OVERFLOWED (packets the queue had no room for) and BWS
# (perftest's averages).
bottleneck_run() {
	local try i flows_ok=0 rt0 m0 c0 h0 o0
	for try in 1 2 3; do
		bottleneck_flows "$1" && flows_ok=1 && break
		grep -qsF -- "$DP_RERUN_IF" /tmp/ecn."$1".[sc][01] || break
		log "perftest could not calibrate its clock; running the flows again ($((try + 1)) of 3): $1"
	done
	for i in 0 1; do
		[ "${RCS[i]}" = 0 ] && [ -n "${BW[i]}" ] && continue
		diag "flow $i ($1) failed, exit status ${RCS[i]}:"
		diag_file "/tmp/ecn.$1.c$i" 20
	done
	expect_eq "bottleneck, $1: both ib_write_bw flows complete" 1 "$flows_ok"
	if [ -n "$JAIN" ]; then
		ok "bottleneck, $1: both flows measured over $WINDOW s while both ran"
	else
		not_ok "bottleneck, $1: both flows measured over $WINDOW s while both ran" "$WINDOW_SEEN"
		rdma -dd resource show qp link sroceS/1 >&2
	fi
	RT=$(($(retrans sroceC) - rt0))
	MARKED=$(($(cnt sroceS ecn_marked_packets) - m0))
	CNPS=$(($(cnt sroceS cnp_sent) - c0))
	HANDLED=$(($(cnt sroceC cnp_handled) - h0))
	OVERFLOWED=$(($(overflows) - o0))
	BWS="${BW[0]:-?} and ${BW[1]:-?} MB/s"
	diag "bottleneck $BOTTLENECK, $1: while both ran, QPN:MB/s ${SHARES:-?}(Jain's index ${JAIN:-?});" \
		"senders' rate limits/windows at the window's end (kbit/s, 0 unlimited/packets) ${LIMITS:-?};" \
		"perftest's averages $BWS; retransmissions $RT; marked $MARKED, CNPs sent $CNPS, handled $HANDLED;" \
		"the queue overflowed by $OVERFLOWED packets" \
		"$(tc -n er -s qdisc show dev r1 | grep -A3 '^qdisc red')"
	snap sroceC sroceS >&2
}

check "ecn parameter off" set_ecn 0 N
bottleneck_run "ECN off"
rt_off=$RT jain_off=${JAIN:-?} shares_off=${SHARES:-?}
expect_eq "ECN off: nothing marked" 0 "$MARKED"

check "ecn parameter on" set_ecn 1 Y
# The wire behind the bottleneck, as es sees it: the senders' frames
# ECN-capable, some marked CE by the router, and es's CNPs.
pcap=$(mktemp --suffix=.pcap)
ip netns exec es tcpdump --immediate-mode -Z root -i s0 -s 0 -U -w "$pcap" udp port 4791 2>/dev/null &
capture=$!
wait_until 10 test -s "$pcap"
bottleneck_run "ECN on"
rt_on=$RT
kill -INT "$capture" 2>/dev/null
wait "$capture" 2>/dev/null
dp_tap_tool "ECN on, wire" 60 "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/roce_pcap.py" "$pcap" \
	--ecn --expect CNP,WRITE_FIRST,ACKNOWLEDGE
rm -f "$pcap"
expect_ne "ECN on: the receiver saw packets marked CE" 0 "$MARKED"
expect_ne "ECN on: the receiver sent CNPs" 0 "$CNPS"
expect_ne "ECN on: the sender handled CNPs" 0 "$HANDLED"
# With ECN on, DCQCN holds each sender to its share: its limit starts
# from the rate the QP measured itself sending at and stays within twice
# that (cc.c), so the marks on the faster flow cut it back. With ECN off
# nothing does, and the shares are only printed.
diag "flows' shares while both ran: ECN off ${shares_off}(Jain's index $jain_off)," \
	"ECN on ${SHARES:-?}(Jain's index ${JAIN:-?})"
if [ -n "$JAIN" ] && awk -v j="$JAIN" 'BEGIN { exit !(j >= 0.9) }'; then
	ok "ECN on: the flows share the bottleneck fairly (Jain's index $JAIN >= 0.9)"
else
	not_ok "ECN on: the flows share the bottleneck fairly (Jain's index ${JAIN:-?} >= 0.9)" \
		"shares while both ran: ${SHARES:-?}"
fi
if [ "$rt_on" -le "$rt_off" ]; then
	ok "ECN on: retransmissions ($rt_on) no more than with ECN off ($rt_off)"
else
	not_ok "ECN on: retransmissions ($rt_on) no more than with ECN off ($rt_off)"
fi

# Data through the marking bottleneck, with the senders held back.
integrity() {
	ip netns exec es "$TOOL" -d sroceS -g "$SG" -p 18720 -t 120 -W 60 >/tmp/ecn.int.s 2>&1 &
	local pid=$! rc
	wait_until 30 dp_listening "$pid" 18720
	ip netns exec ec "$TOOL" -d sroceC -g "$CG" -p 18720 -t 120 -W 60 \
		-T rc_write,rc_send -q -b 2097152 "$S_IP" >/tmp/ecn.int.c 2>&1
	rc=$?
	wait "$pid" || rc=1
	cat /tmp/ecn.int.s /tmp/ecn.int.c
	return $rc
}
h0=$(cnt sroceC cnp_handled)
check "ECN on: sroce-integrity RC WRITE and SEND through the bottleneck" integrity
diag "integrity run: $(grep -E 'passed, .* failed' /tmp/ecn.int.c); CNPs handled $(($(cnt sroceC cnp_handled) - h0))" \
	"$(snap sroceC sroceS)" "$(tc -n er -s qdisc show dev r1 | grep -A3 '^qdisc red')"
done_testing
