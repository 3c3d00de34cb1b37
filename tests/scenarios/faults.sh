#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# RC recovery over a faulty link between two guests. VM b serves, VM a is
# the client; netem on eth0 of both VMs impairs the link:
#
#   rnr:       a SEND to a QP without receive buffers must end in "RNR retry
#              counter exceeded" after rnr_retry + 1 RNR NAKs, and succeed
#              once the receiver posts a buffer while the sender retries
#              (faults_rnr.py: rdma-core's RC test resources on both VMs)
#   retry:     the peer vanishes during ibv_rc_pingpong (VM b drops every
#              UDP 4791 packet it receives, so no request of VM a is ever
#              acknowledged again): the client's WQE must complete with
#              "transport retry counter exceeded" (12) after retry_cnt + 1
#              retransmission timeouts; once the peer is back, a new
#              pingpong must pass
#   loss:      2% loss; the integrity tool's RC cases verify every byte and
#              the counters must show timeouts and sequence NAKs
#   reorder:   10 ms delay for 75% of the packets; sequence NAKs
#   duplicate: 2% duplicates; duplicate requests answered, data intact
#   corrupt:   1% bit flips in the bytes netem can reach; they must fail
#              the ICRC (rx_bad_icrc). A middle or last packet of a message
#              (requests on the server, READ responses on the client) is
#              checked in the copy that places it: the damaged bytes it
#              left are overwritten when the good packet comes again, and
#              the data is verified
#
# Counters are compared before and after each case, on both VMs. For a
# one-off run of some cases (tests/vm/shell.sh), FAULTS_CASES lists them,
# e.g. FAULTS_CASES="retry loss".
#
# topology: twovm
# kernels: 6.1
# full-kernels: 6.12
# timeout: 900
# requires: sroce

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=datapath_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/datapath_lib.sh"
# shellcheck source=integrity_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/integrity_lib.sh"

RNR_TOOL=$(dirname "${BASH_SOURCE[0]}")/faults_rnr.py
RNR_TOOL=$(cd "$(dirname "$RNR_TOOL")" && pwd)/faults_rnr.py
DEV=sroce0
# ibv_rc_pingpong's QP attributes: timeout 14 (67 ms), retry_cnt 7.
PP_RETRY_CNT=7
# faults_rnr.py's rnr_retry in the "exceed" case.
RNR_RETRY=2

# ---------------------------------------------------------------------------
# Link impairment

unimpair() {
	tc qdisc del dev eth0 root 2>/dev/null
	tc qdisc del dev eth0 ingress 2>/dev/null
	return 0
}
trap unimpair EXIT

# impair NETEM_ARGS...: netem on this VM's egress.
impair() {
	unimpair
	log "+ tc qdisc add dev eth0 root netem $*"
	tc qdisc add dev eth0 root netem "$@"
}

# drop_roce_ingress: drop every RoCE v2 packet this VM receives.
drop_roce_ingress() {
	tc qdisc add dev eth0 ingress &&
		tc filter add dev eth0 parent ffff: protocol ip prio 1 u32 \
			match ip protocol 17 0xff match ip dport "$ROCE_PORT" 0xffff \
			action drop
}

# ---------------------------------------------------------------------------
# Counters of sroce0 port 1

# ctr_snap FILE: "name value" lines.
ctr_snap() {
	rdma statistic show link "$DEV/1" | tr ' ' '\n' | paste - - |
		awk 'NR > 1 && NF == 2' >"$1"
}

# ctr_delta BEFORE AFTER: "name increase" lines.
ctr_delta() {
	awk 'NR == FNR { v[$1] = $2; next } { print $1, $2 - v[$1] }' "$1" "$2"
}

# ctr_now NAME: the counter's current value.
ctr_now() {
	rdma statistic show link "$DEV/1" | tr ' ' '\n' | paste - - |
		awk -v n="$1" '$1 == n { print $2 }'
}

# ctr_of DELTAS NAME: a counter's increase in a ctr_delta listing.
ctr_of() {
	awk -v n="$2" '$1 == n { print $2; f = 1 } END { if (!f) print 0 }' <<<"$1"
}

# ctr_nonzero DELTAS: the counters that moved, on one line.
ctr_nonzero() {
	awk '$2 != 0 { printf "%s%s %s", sep, $1, $2; sep = ", " }' <<<"$1"
}

# case_counters NAME BEFORE: on VM a sets CLI_D and SRV_D to the counter
# increases of both VMs since BEFORE; VM b publishes its own.
case_counters() {
	local name=$1 before=$2 after
	after=$(mktemp)
	ctr_snap "$after"
	if [ "$ROLE" = b ]; then
		put "ctr.$name" "$(ctr_delta "$before" "$after")"
	else
		CLI_D=$(ctr_delta "$before" "$after")
		SRV_D=$(get "ctr.$name" 300) || SRV_D=
	fi
	rm -f "$after" "$before"
	log "counters after $name: client: $(ctr_nonzero "${CLI_D:-}") server: $(ctr_nonzero "${SRV_D:-}")"
}

# expect_ctr DESC SIDE(cli|srv) NAME OP VALUE: a counter increase compared
# with VALUE (test's operators: -gt, -eq, -ge...).
expect_ctr() {
	local desc=$1 side=$2 name=$3 op=$4 want=$5 d got
	d=$CLI_D
	[ "$side" = srv ] && d=$SRV_D
	if [ "$side" = srv ] && [ -z "$SRV_D" ]; then
		not_ok "$desc" "VM b published no counters"
		return 1
	fi
	got=$(ctr_of "$d" "$name")
	if test "$got" "$op" "$want"; then
		ok "$desc ($name +$got)"
		return 0
	fi
	not_ok "$desc" "$side $name increased by $got, expected $op $want" \
		"client counters: $(ctr_nonzero "$CLI_D")" \
		"server counters: $(ctr_nonzero "$SRV_D")"
	return 1
}

# ---------------------------------------------------------------------------
# RNR

# rnr_case MODE: faults_rnr.py, VM b receives, VM a sends.
rnr_case() {
	local mode=$1 port=18531 before out rc srv
	[ "$mode" = recover ] && port=18532
	before=$(mktemp)
	out=$(mktemp)
	barrier "rnr-$mode" 120 || { not_ok "rnr $mode: peer ready"; return 1; }
	ctr_snap "$before"
	if [ "$ROLE" = b ]; then
		log "+ $RNR_TOOL -d $DEV -g $DP_SRV_GID4 -p $port $mode"
		timeout $((120 * SROCE_SLOW)) /usr/bin/python3 "$RNR_TOOL" -d $DEV \
			-g "$DP_SRV_GID4" -p $port "$mode" >"$out" 2>&1 &
		local pid=$!
		wait_until 60 sh -c "ss -ltn | grep -q ':$port '"
		put "rnr.$mode.ready" 1
		wait $pid
		rc=$?
		cat "$out" >&2
		put "rnr.$mode.srv" "exit status $rc: $(cat "$out")"
		case_counters "rnr-$mode" "$before"
		rm -f "$out"
		return 0
	fi
	get "rnr.$mode.ready" 120 >/dev/null
	log "+ $RNR_TOOL -d $DEV -g $DP_CLI_GID4 -p $port $mode $DP_SRV_IP4"
	timeout $((120 * SROCE_SLOW)) /usr/bin/python3 "$RNR_TOOL" -d $DEV \
		-g "$DP_CLI_GID4" -p $port "$mode" "$DP_SRV_IP4" >"$out" 2>&1
	rc=$?
	cat "$out" >&2
	srv=$(get "rnr.$mode.srv" 200) || srv="(no word from VM b)"
	if [ $rc = 0 ] && [[ $srv == "exit status 0:"* ]]; then
		ok "rnr $mode: $(grep '^sender: send completion' "$out")"
	else
		not_ok "rnr $mode: outcome" "sender exit status $rc:" "$(cat "$out")" \
			"receiver: $srv"
	fi
	case_counters "rnr-$mode" "$before"
	if [ "$mode" = exceed ]; then
		expect_ctr "rnr exceed: one RNR NAK per try, rnr_retry $RNR_RETRY + 1" \
			cli rnr_nak_received -eq $((RNR_RETRY + 1))
		expect_ctr "rnr exceed: the receiver sent them" srv rnr_nak_sent -eq $((RNR_RETRY + 1))
		expect_ctr "rnr exceed: counted once" cli rnr_retry_exceeded -eq 1
	else
		expect_ctr "rnr recover: the receiver sent RNR NAKs" srv rnr_nak_sent -gt 0
		expect_ctr "rnr recover: the sender received them" cli rnr_nak_received -gt 0
		expect_ctr "rnr recover: no RNR retry exhaustion" cli rnr_retry_exceeded -eq 0
	fi
	rm -f "$out"
}

# ---------------------------------------------------------------------------
# Retry exhaustion: the peer vanishes

# pp_listening PORT: a TCP listener on PORT.
pp_listening() { ss -ltn | grep -q ":$1 "; }

# tx_moved BASE: this VM sent 100 RoCE packets since tx_packets was BASE.
tx_moved() { [ "$(($(ctr_now tx_packets) - $1))" -ge 100 ]; }

retry_exhaustion() {
	local port=18545 before out rc pid t0 took limit=$((60 * SROCE_SLOW)) base
	local pp=(ibv_rc_pingpong -d "$DEV" -p "$port" -s 4096 -n 100000000)
	before=$(mktemp)
	out=$(mktemp)
	barrier retry 120 || { not_ok "retry: peer ready"; return 1; }
	ctr_snap "$before"
	if [ "$ROLE" = b ]; then
		log "+ ${pp[*]} -g $DP_SRV_GID4"
		"${pp[@]}" -g "$DP_SRV_GID4" >"$out" 2>&1 &
		pid=$!
		wait_until 60 pp_listening $port
		put retry.ready 1
		if get retry.cut $((limit * 2)) >/dev/null; then
			drop_roce_ingress
			put retry.cutdone "$?"
			get retry.clientdone $((limit * 2)) >/dev/null
		fi
		kill "$pid" 2>/dev/null
		wait "$pid"
		cat "$out" >&2
		unimpair
		put retry.restored 1
		case_counters retry "$before"
		rm -f "$out"
		return 0
	fi

	get retry.ready 120 >/dev/null
	base=$(ctr_now tx_packets)
	log "+ ${pp[*]} -g $DP_CLI_GID4 $DP_SRV_IP4"
	"${pp[@]}" -g "$DP_CLI_GID4" "$DP_SRV_IP4" >"$out" 2>&1 &
	pid=$!
	if ! wait_until 120 tx_moved "$base"; then
		not_ok "retry: pingpong runs before the peer vanishes" "$(cat "$out")"
		kill "$pid" 2>/dev/null
	else
		ok "retry: pingpong runs before the peer vanishes"
	fi
	put retry.cut 1
	rc=$(get retry.cutdone 120)
	if [ "$rc" = 0 ]; then
		ok "retry: VM b drops all RoCE traffic it receives (tc ingress filter)"
	else
		not_ok "retry: VM b drops all RoCE traffic" "tc on VM b failed: ${rc:-no answer}"
	fi
	t0=$EPOCHREALTIME
	# A bound for liveness only: retry_cnt 7 x 67 ms is far below it.
	wait_until "$limit" sh -c "! kill -0 $pid 2>/dev/null"
	took=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')
	if kill -0 "$pid" 2>/dev/null; then
		kill "$pid"
		wait "$pid"
		not_ok "retry: the client's WQE completes with an error" \
			"ibv_rc_pingpong still running $((limit)) s after the peer vanished" "$(tail -n 5 "$out")"
	else
		wait "$pid"
		rc=$?
		cat "$out" >&2
		if [ $rc != 0 ] && grep -q 'Failed status transport retry counter exceeded (12)' "$out"; then
			ok "retry: the client's WQE completes with RETRY_EXC_ERR (12), ${took} s after the cut"
		else
			not_ok "retry: the client's WQE completes with RETRY_EXC_ERR (12)" \
				"exit status $rc after ${took} s:" "$(tail -n 5 "$out")"
		fi
	fi
	put retry.clientdone 1
	get retry.restored 120 >/dev/null
	case_counters retry "$before"
	expect_ctr "retry: one timeout per try, retry_cnt $PP_RETRY_CNT + 1" \
		cli retransmit_timeouts -ge $((PP_RETRY_CNT + 1))
	expect_ctr "retry: retry exhaustion counted once" cli retry_exceeded -eq 1
	rm -f "$out"
}

# After the peer is back, new QPs work.
retry_after() {
	dp_pair "retry: the peer is back: ibv_rc_pingpong -s 4096 -c passes" 120 \
		ibv_rc_pingpong -d @DEV@ -g @GID4@ -p 18546 -s 4096 -n 20 -c -- \
		ibv_rc_pingpong -d @DEV@ -g @GID4@ -p 18546 -s 4096 -n 20 -c @SRV4@
}

# ---------------------------------------------------------------------------
# Integrity over an impaired link

# impaired NAME NETEM_ARGS: both VMs impair their egress, VM a runs the
# integrity tool's RC cases against VM b; counters in CLI_D and SRV_D.
impaired() {
	local name=$1 before rc
	shift
	before=$(mktemp)
	barrier "impair-$name" 120 || { not_ok "$name: peer ready"; return 1; }
	impair "$@"
	rc=$?
	if [ "$ROLE" = a ]; then
		local peer_rc
		peer_rc=$(get "impair-$name.rc" 60)
		if [ $rc = 0 ] && [ "$peer_rc" = 0 ]; then
			ok "$name: netem $* on both VMs"
		else
			not_ok "$name: netem $* on both VMs" "here: $rc, on VM b: ${peer_rc:-none}"
		fi
	else
		put "impair-$name.rc" $rc
	fi
	ctr_snap "$before"
	# shellcheck disable=SC2086
	integrity_session "$name" "$DP_CLI_GID4" "$DP_SRV_IP4" --quick --tests rc -k ${INTEGRITY_ARGS:-}
	barrier "impair-$name-end" 300
	unimpair
	case_counters "$name" "$before"
}

# perftest_impaired NAME PROGRAM ARGS...: a perftest pair on the still
# impaired link; perftest fails on any completion error.
perftest_impaired() {
	local name=$1
	shift
	dp_perftest "$name: " "$@"
}

# ---------------------------------------------------------------------------

[ -x "$INTEGRITY_TOOL" ] ||
	bail "$INTEGRITY_TOOL is missing: build it on the host with 'make -C tools'"
# A private copy: the host's tools/bin may be rebuilt while this runs.
cp "$INTEGRITY_TOOL" /tmp/sroce-integrity || bail "cannot copy $INTEGRITY_TOOL"
INTEGRITY_TOOL=/tmp/sroce-integrity
modprobe sch_netem || bail "no netem qdisc in this kernel"
modprobe -q sch_ingress
modprobe -q cls_u32
modprobe -q act_gact
dp_setup
# shellcheck disable=SC2034 # read by integrity_lib.sh
INTEGRITY_DEV=$DEV

case_rnr() {
	rnr_case exceed
	rnr_case recover
}

case_retry() {
	retry_exhaustion
	retry_after
}

case_loss() {
	impaired loss loss 2%
	if [ "$ROLE" = a ]; then
		# Only a loss that nothing after it reveals (a message's last
		# packet, its last ACK) needs a timeout: with many messages in
		# flight a run may have none, and the retry case checks
		# timeouts on their own.
		diag "loss: client retransmit_timeouts +$(ctr_of "$CLI_D" retransmit_timeouts)"
		expect_ctr "loss: the server asked for missing packets" srv seq_nak_sent -gt 0
		expect_ctr "loss: the client went back on sequence NAKs" cli seq_nak_received -gt 0
		expect_ctr "loss: no ICRC errors" cli rx_bad_icrc -eq 0
	fi
	# perftest's own RC traffic on the lossy link (completions checked only).
	barrier perftest-loss 120
	impair loss 2%
	perftest_impaired loss ib_write_bw -s 65536 -n 200
	perftest_impaired loss ib_read_bw -s 65536 -n 200
	barrier perftest-loss-end 300
	unimpair
}

case_reorder() {
	impaired reorder delay 10ms reorder 25% 50%
	[ "$ROLE" = a ] || return 0
	expect_ctr "reorder: the server saw packets out of sequence" srv rx_out_of_sequence -gt 0
	expect_ctr "reorder: the server sent sequence NAKs" srv seq_nak_sent -gt 0
	expect_ctr "reorder: no ICRC errors" cli rx_bad_icrc -eq 0
}

case_duplicate() {
	impaired duplicate duplicate 2%
	[ "$ROLE" = a ] || return 0
	expect_ctr "duplicate: the server recognised duplicate requests" srv rx_duplicate_request -gt 0
	expect_ctr "duplicate: no ICRC errors" cli rx_bad_icrc -eq 0
}

case_corrupt() {
	local bad
	impaired corrupt corrupt 1%
	[ "$ROLE" = a ] || return 0
	bad=$(($(ctr_of "$CLI_D" rx_bad_icrc) + $(ctr_of "$SRV_D" rx_bad_icrc)))
	if [ "$bad" -gt 0 ]; then
		ok "corrupt: corrupted packets failed the ICRC (rx_bad_icrc +$(ctr_of "$CLI_D" rx_bad_icrc) client, +$(ctr_of "$SRV_D" rx_bad_icrc) server)"
	else
		not_ok "corrupt: corrupted packets failed the ICRC" \
			"rx_bad_icrc did not move" \
			"client counters: $(ctr_nonzero "$CLI_D")" \
			"server counters: $(ctr_nonzero "$SRV_D")"
	fi
	expect_ctr "corrupt: requests checked in the copy that placed them" srv rx_icrc_in_copy -gt 0
	expect_ctr "corrupt: READ responses checked in the copy that placed them" cli rx_icrc_in_copy -gt 0
}

for c in ${FAULTS_CASES:-rnr retry loss reorder duplicate corrupt}; do
	"case_$c"
done

barrier faults-done 300
done_testing
