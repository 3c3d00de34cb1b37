#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: netns
# kernels: 6.1 6.12
# requires: sroce
# timeout: 3600
# vcpus: 2
#
# The soak of "make check-full": SOAK_MINUTES (default 30) of mixed
# traffic between sroce0 (h1) and sroce1 (h2) on two vCPUs, in rounds.
# Each round first impairs both veths with netem (loss, reordering,
# duplication and corruption) and runs, side by side:
#   - sroce-integrity, every RC case (SEND, SEND with immediate, WRITE,
#     WRITE with immediate, READ, compare-and-swap, fetch-and-add), every
#     byte checked;
#   - ibv_srq_pingpong, four RC QPs on one SRQ, --chk;
#   - rping -V through the RDMA CM: a fresh connection, checked payloads,
#     a disconnect;
# then lifts the impairment and runs sroce-integrity's UC and UD cases
# (whose messages a lossy link may drop, so they run on a clean one). Every
# run of every round must pass. The kernel's Slab (/proc/meminfo) is
# sampled every round: from the first sample after a third of the soak
# (the tenth minute of 30) to the last, it may grow by at most 4 MiB or 5%,
# whichever is more.
# shellcheck source=../scenarios/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../scenarios/lib.sh"

minutes=${SOAK_MINUTES:-30}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
tool=/tmp/sroce-integrity
work=$(mktemp -d)
IMPAIR="loss 1% delay 1ms 1ms reorder 5% duplicate 1% corrupt 0.5%"

need_module sroce
cp "$repo/tools/bin/sroce-integrity" "$tool" || bail "no tools/bin/sroce-integrity (make tools)"
modprobe sch_netem || bail "no netem qdisc in this kernel"
check "attach sroce0 to v1" h1 rdma link add sroce0 type sroce netdev v1 || bail "no device"
check "attach sroce1 to v2" h2 rdma link add sroce1 type sroce netdev v2 || bail "no device"
wait_until 30 gid_index sroce0 "$(gid_v4 "$NET4_A")" &&
	wait_until 30 gid_index sroce1 "$(gid_v4 "$NET4_B")" || bail "no IPv4 GIDs"
G0=$(gid_index sroce0 "$(gid_v4 "$NET4_A")")
G1=$(gid_index sroce1 "$(gid_v4 "$NET4_B")")

slab_kib() { awk '$1 == "Slab:" { print $2 }' /proc/meminfo; }

impair() {
	local ns
	for ns in h1 h2; do
		ip netns exec "$ns" tc qdisc replace dev "v${ns#h}" root netem "$@" || return
	done
}

clear_impair() {
	ip netns exec h1 tc qdisc del dev v1 root 2>/dev/null
	ip netns exec h2 tc qdisc del dev v2 root 2>/dev/null
	return 0
}

# integrity_pair NAME PORT CLIENT_ARGS...: sroce-integrity served in h2,
# driven from h1; the output of both in $work/NAME.*; 0 when both exit 0
# and every case passed.
integrity_pair() {
	local name=$1 port=$2 pid rc_c rc_s
	shift 2
	h2 timeout $((600 * SROCE_SLOW)) "$tool" -d sroce1 -g "$G1" -p "$port" -W 120 \
		>"$work/$name.srv" 2>&1 &
	pid=$!
	wait_until 20 eval "h2 ss -Hltn 'sport = :$port' | grep -q ."
	h1 timeout $((600 * SROCE_SLOW)) "$tool" -d sroce0 -g "$G0" -p "$port" -W 120 "$@" "$NET4_B" \
		>"$work/$name.cli" 2>&1
	rc_c=$?
	wait "$pid"
	rc_s=$?
	[ $rc_c = 0 ] && [ $rc_s = 0 ] && grep -q '^[0-9]* passed, 0 failed' "$work/$name.cli"
}

srq_pair() {
	local pid rc_c
	h2 timeout $((300 * SROCE_SLOW)) ibv_srq_pingpong -d sroce1 -g "$G1" -p 18592 -q 4 -s 4096 -n 200 -c \
		>"$work/srq.srv" 2>&1 &
	pid=$!
	wait_until 20 eval "h2 ss -Hltn 'sport = :18592' | grep -q ."
	h1 timeout $((300 * SROCE_SLOW)) ibv_srq_pingpong -d sroce0 -g "$G0" -p 18592 -q 4 -s 4096 -n 200 -c "$NET4_B" \
		>"$work/srq.cli" 2>&1
	rc_c=$?
	wait "$pid" && [ $rc_c = 0 ]
}

rping_pair() {
	local pid rc_c
	h2 timeout $((300 * SROCE_SLOW)) rping -s -a "$NET4_B" -p 18593 -V -C 50 -S 4000 \
		>"$work/rping.srv" 2>&1 &
	pid=$!
	wait_until 20 eval "rdma resource show cm_id | grep -q 'state LISTEN .*comm rping '"
	h1 timeout $((300 * SROCE_SLOW)) rping -c -a "$NET4_B" -p 18593 -V -C 50 -S 4000 \
		>"$work/rping.cli" 2>&1
	rc_c=$?
	wait "$pid" && [ $rc_c = 0 ]
}

# round N: one round; prints what failed, nothing when all passed.
round() {
	local n=$1 p1 p2 p3 bad=''
	# shellcheck disable=SC2086 # netem's arguments
	impair $IMPAIR || echo "netem: cannot impair the link"
	integrity_pair "rc$n" 18590 -T rc -q -k -s "$n" &
	p1=$!
	srq_pair &
	p2=$!
	rping_pair &
	p3=$!
	wait $p1 || bad+=" integrity-rc"
	wait $p2 || bad+=" srq_pingpong"
	wait $p3 || bad+=" rping"
	clear_impair
	integrity_pair "ucud$n" 18591 -T uc,ud -q -k -s "$n" || bad+=" integrity-uc-ud"
	[ -z "$bad" ] && return 0
	echo "round $n:$bad"
	for f in "$work"/*; do
		case $bad in
		*integrity-rc*) [[ $f == */rc$n.* ]] && tail -n 15 "$f" ;;
		esac
		case $bad in
		*integrity-uc-ud*) [[ $f == */ucud$n.* ]] && tail -n 15 "$f" ;;
		esac
	done
	[[ $bad == *srq* ]] && tail -n 5 "$work"/srq.*
	[[ $bad == *rping* ]] && tail -n 5 "$work"/rping.*
	return 1
}

start=$SECONDS
end=$((start + minutes * 60))
third=$((start + minutes * 20))
rounds=0 failed=0 base='' base_at='' last=''
failures=$work/failures
: >"$failures"
log "soak: $minutes minutes, netem $IMPAIR"
while [ $SECONDS -lt $end ]; do
	rounds=$((rounds + 1))
	round "$rounds" >>"$failures" 2>&1 || failed=$((failed + 1))
	last=$(slab_kib)
	log "round $rounds done at +$((SECONDS - start)) s, Slab $last kB, $failed failed"
	if [ -z "$base" ] && [ $SECONDS -ge $third ]; then
		base=$last base_at=$((SECONDS - start))
	fi
done
clear_impair
# What the impairment cost: retransmissions, NAKs, drops by reason.
diag "$(rdma statistic show link sroce0/1)"

expect_eq "$rounds rounds of impaired RC, SRQ and RDMA CM traffic and clean UC and UD traffic in $minutes minutes, none failed" \
	0 "$failed"
[ "$failed" = 0 ] || diag "$(head -n 60 "$failures")"
if [ -z "$base" ]; then
	not_ok "Slab flat from a third of the soak to its end" "no sample after a third of the soak"
else
	limit=$((base / 20))
	[ $limit -ge 4096 ] || limit=4096
	growth=$((last - base))
	log "Slab: $base kB at +$base_at s, $last kB at the end ($growth kB, limit $limit kB)"
	if [ $growth -le $limit ]; then
		ok "Slab flat from a third of the soak to its end (+$growth kB)"
	else
		not_ok "Slab flat from a third of the soak to its end" \
			"$base kB at +$base_at s, $last kB at the end: +$growth kB, limit $limit kB"
		diag "$(sort -k3 -n -r /proc/slabinfo 2>/dev/null | head -n 15)"
	fi
fi
check "no QP left on sroce0 and sroce1 but the GSI QPs" \
	bash -c "! rdma resource show qp | grep -E 'link sroce[01]/' | grep -vq ' lqpn 1 '"
rm -rf "$work"
done_testing
