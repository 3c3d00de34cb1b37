# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The integrity scenarios (integrity.sh over sroce, integrity_rxe.sh over
# rdma_rxe) share this file; it is no scenario itself (no topology line).
#
# integrity_main MODULE LINKTYPE DEV: on twovm, load MODULE, add DEV of
# LINKTYPE on eth0 and run tools/bin/sroce-integrity between the VMs:
# VM b is the server, VM a the client, whose test cases become test
# points of this scenario.
#   v4:   every test case over the IPv4 RoCE v2 GID
#   v6:   every test case over the IPv6 RoCE v2 GID (control channel over
#         IPv6 too)
#   inject: a few runs with faults the client injects on purpose, each of
#         which must fail with the message that names it
# Over sroce, zero-copy transmit (payload as page fragments of the
# registered memory) is checked by its counters on each VM: the v4
# session runs with it forced on (zcopy=1: VM a's SENDs and WRITEs and VM
# b's READ responses leave by fragments, which the virtio-net link without
# scatter/gather linearises), the v6 session with the module's setting
# (the default, auto, copies over a netdev without scatter/gather), and a
# short session with zcopy=0 sends nothing by fragment, but copies.
# Extra client arguments: INTEGRITY_ARGS (e.g. "--quick"), and for the
# IPv6 session INTEGRITY_V6_ARGS.

shopt -s lastpipe

INTEGRITY_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
INTEGRITY_TOOL=$INTEGRITY_REPO/tools/bin/sroce-integrity
INTEGRITY_PORT=18520

# The common options of both sides.
_integrity_opts() {
	echo "-d $INTEGRITY_DEV -p $INTEGRITY_PORT -t $((120 * SROCE_SLOW)) -W $((120 * SROCE_SLOW))"
}

# integrity_relay NAME: the client's TAP on stdin becomes test points
# "NAME: DESC"; sets INTEGRITY_SUMMARY to its "N passed, N failed" line.
integrity_relay() {
	local name=$1 line desc
	INTEGRITY_SUMMARY=
	while IFS= read -r line; do
		printf '%s\n' "$line" >&2
		case $line in
		"ok "*)
			desc=${line#ok }
			ok "$name: ${desc#* - }"
			;;
		"not ok "*)
			desc=${line#not ok }
			not_ok "$name: ${desc#* - }"
			;;
		"#"*) printf '%s\n' "$line" ;;
		"1.."*) ;;
		*" passed, "*" failed") INTEGRITY_SUMMARY=$line ;;
		*) printf '# %s\n' "$line" ;;
		esac
	done
}

# integrity_server NAME GIDX WANT_RC: serve one client session.
integrity_server() {
	local name=$1 gidx=$2 want=$3 out rc
	out=$(mktemp)
	log "+ $INTEGRITY_TOOL $(_integrity_opts) -g $gidx"
	# shellcheck disable=SC2046
	"$INTEGRITY_TOOL" $(_integrity_opts) -g "$gidx" >"$out" 2>&1
	rc=$?
	cat "$out" >&2
	if [ "$rc" = "$want" ]; then
		ok "$name: server (exit status $rc)"
	else
		not_ok "$name: server" "exit status $rc, expected $want"
		diag_file "$out" 20
		_integrity_held
	fi
	rm -f "$out"
}

# _integrity_held: after a failed session, where this VM's packets may be
# held below sroce: eth0's qdisc and link counters, and the sroce
# counters (tx_packets here against the peer's rx_packets; packets in
# flight show as retransmit_deferred).
_integrity_held() {
	diag "$ROLE: eth0 qdisc: $(tc -s qdisc show dev eth0 2>&1 | tr -s ' \n' ' ')"
	diag "$ROLE: eth0: $(ip -s link show eth0 2>&1 | tr -s ' \n' ' ')"
	[ -n "${INTEGRITY_DEV:-}" ] &&
		diag "$ROLE: $(rdma statistic show link "$INTEGRITY_DEV/1" 2>&1 | tr ' ' '\n' | paste -d ' ' - - | awk 'NR > 1 && $2 != 0' | tr '\n' ' ')"
}

# integrity_client NAME GIDX PEER [ARGS...]: a full run, relayed as TAP.
integrity_client() {
	local name=$1 gidx=$2 peer=$3 rc
	shift 3
	log "+ $INTEGRITY_TOOL $(_integrity_opts) -g $gidx $* $peer"
	# The guests have no /dev/fd for a process substitution: the relay
	# runs as the last part of a pipeline in this shell (lastpipe).
	# shellcheck disable=SC2046
	"$INTEGRITY_TOOL" $(_integrity_opts) -g "$gidx" "$@" "$peer" |
		integrity_relay "$name"
	rc=${PIPESTATUS[0]}
	if [ "$rc" = 0 ] && [[ $INTEGRITY_SUMMARY =~ ^[0-9]+\ passed,\ 0\ failed$ ]]; then
		ok "$name: client: $INTEGRITY_SUMMARY"
	else
		not_ok "$name: client" "exit status $rc, summary '${INTEGRITY_SUMMARY:-none}'"
		_integrity_held
	fi
}

# integrity_caught NAME GIDX PEER TESTS KIND REGEX: a run with a fault
# injected must fail with a message matching REGEX.
integrity_caught() {
	local name=$1 gidx=$2 peer=$3 tests=$4 kind=$5 re=$6 out rc
	out=$(mktemp)
	log "+ $INTEGRITY_TOOL $(_integrity_opts) -g $gidx --quick --tests $tests --inject $kind $peer"
	# shellcheck disable=SC2046
	"$INTEGRITY_TOOL" $(_integrity_opts) -g "$gidx" --quick \
		--tests "$tests" --inject "$kind" "$peer" >"$out" 2>&1
	rc=$?
	cat "$out" >&2
	if [ "$rc" = 1 ] && grep -qE -- "$re" "$out"; then
		ok "$name: $kind fault in $tests caught"
	else
		not_ok "$name: $kind fault in $tests caught" \
			"exit status $rc (expected 1), looked for: $re"
		diag_file "$out" 20
	fi
	rm -f "$out"
}

# integrity_session NAME GIDX PEER [CLIENT ARGS...]
integrity_session() {
	local name=$1 gidx=$2 peer=$3
	shift 3
	if ! barrier "integrity-$name" 120; then
		not_ok "$name: peer ready"
		return 1
	fi
	if [ "$ROLE" = b ]; then
		integrity_server "$name" "$gidx" 0
	else
		integrity_client "$name" "$gidx" "$peer" "$@"
	fi
}

# integrity_inject NAME GIDX PEER: fault injection runs, one per line of
# the table: tests, fault, what the client must report.
integrity_inject() {
	local name=$1 gidx=$2 peer=$3 n=0 tests kind re
	while read -r tests kind re; do
		n=$((n + 1))
		if ! barrier "integrity-$name-$n" 120; then
			not_ok "$name: peer ready for run $n"
			return 1
		fi
		if [ "$ROLE" = b ]; then
			integrity_server "$name $tests" "$gidx" 1
		else
			integrity_caught "$name" "$gidx" "$peer" "$tests" "$kind" "$re"
		fi
	done <<'EOF'
rc_send payload msg 16: data received: payload offset 512 \(sge 0\): expected 0x[0-9a-f]{2}, got 0x
rc_write_imm imm msg 16: immediate data 0x[0-9a-f]{8}, expected 0x
ud_send short msg 16: receive completion byte_len 40, expected 41
rc_fetch_add payload msg 24: atomic returned original value 0x[0-9a-f]{16}, expected 0x
rc_read payload msg 16: data read: payload offset [0-9]+ \(sge 0\)
EOF
}

# _integrity_gid DEV GID: the index of GID (sysfs notation, RoCE v2).
_integrity_gid() {
	local dev=$1 gid=$2
	wait_until 30 gid_index "$dev" "$gid" || return 1
	gid_index "$dev" "$gid"
}

# _integrity_counter DEV NAME: the value of one of DEV's counters.
_integrity_counter() {
	rdma statistic show link "$1/1" | tr ' ' '\n' |
		awk -v n="$2" 'p { print; exit } $0 == n { p = 1 }'
}

# _integrity_zc DEV: "ZCOPY COPY", DEV's counters of data packets sent by
# page fragments and by copy.
_integrity_zc() {
	echo "$(_integrity_counter "$1" tx_zcopy_packets) $(_integrity_counter "$1" tx_copy_packets)"
}

# _integrity_zc_wanted MODE: whether zero-copy transmit is on over eth0
# with the zcopy parameter at MODE: 1, or -1 (auto) with scatter/gather.
_integrity_zc_wanted() {
	[ "$1" = 1 ] && return 0
	[ "$1" = -1 ] && ethtool -k eth0 | grep -qx 'scatter-gather: on'
}

# _integrity_zc_check DEV WHAT BEFORE FRAGS: after session WHAT, DEV sent
# data packets by fragments (FRAGS=1), or none by fragments and some by
# copy (FRAGS=0), since the counters were BEFORE ("ZCOPY COPY").
_integrity_zc_check() {
	local dev=$1 what=$2 z0=${3% *} c0=${3#* } frags=$4 z1 c1
	read -r z1 c1 <<<"$(_integrity_zc "$dev")"
	diag "$ROLE: $what: tx_zcopy_packets $z0 -> $z1, tx_copy_packets $c0 -> $c1"
	if [ "$frags" = 1 ]; then
		check "$ROLE: $what sent payload by page fragments" \
			[ "$z1" -gt "$z0" ]
	else
		expect_eq "$ROLE: $what sent no payload by page fragments" \
			"$z0" "$z1"
		check "$ROLE: $what copied payload" [ "$c1" -gt "$c0" ]
	fi
}

# integrity_nozcopy GIDX PEER: a short session with zero-copy transmit off
# on both VMs (zcopy=0) copies every payload.
integrity_nozcopy() {
	local gidx=$1 peer=$2 param=/sys/module/sroce/parameters/zcopy mode zc
	read -r mode <"$param"
	check "$ROLE: zcopy=0" sh -c "echo 0 >$param"
	zc=$(_integrity_zc "$INTEGRITY_DEV")
	integrity_session nozcopy "$gidx" "$peer" --quick \
		--tests rc_write,rc_read
	_integrity_zc_check "$INTEGRITY_DEV" nozcopy "$zc" 0
	check "$ROLE: zcopy=$mode again" sh -c "echo $mode >$param"
}

integrity_main() {
	local module=$1 type=$2 dev=$3 g4 g6 zparam mode zc frags
	INTEGRITY_DEV=$dev

	[ -x "$INTEGRITY_TOOL" ] ||
		bail "$INTEGRITY_TOOL is missing: build it on the host with 'make -C tools'"
	need_module "$module"
	check "rdma link add $dev type $type netdev eth0" \
		rdma link add "$dev" type "$type" netdev eth0 ||
		bail "cannot add $dev"
	check_wait "$dev port 1 active" 30 port_is "$dev" PORT_ACTIVE
	g4=$(_integrity_gid "$dev" "$(gid_v4 "$MY_IP4")") ||
		bail "no IPv4 RoCE v2 GID on $dev: $(gid_table "$dev")"
	g6=$(_integrity_gid "$dev" "$(gid_v6 "$MY_IP6")") ||
		bail "no IPv6 RoCE v2 GID on $dev: $(gid_table "$dev")"
	log "GID indexes: IPv4 $g4, IPv6 $g6"

	zparam=/sys/module/sroce/parameters/zcopy
	if [ "$module" = sroce ]; then
		read -r mode <"$zparam"
		log "zcopy=$mode; eth0: $(ethtool -k eth0 | grep '^scatter-gather:')"
		check "$ROLE: zcopy=1" sh -c "echo 1 >$zparam"
		zc=$(_integrity_zc "$dev")
	fi
	# shellcheck disable=SC2086
	integrity_session v4 "$g4" "$PEER_IP4" ${INTEGRITY_ARGS:-}
	if [ "$module" = sroce ]; then
		_integrity_zc_check "$dev" "v4 session" "$zc" 1
		check "$ROLE: zcopy=$mode again" sh -c "echo $mode >$zparam"
		zc=$(_integrity_zc "$dev")
	fi
	# shellcheck disable=SC2086
	integrity_session v6 "$g6" "$PEER_IP6" ${INTEGRITY_ARGS:-} \
		${INTEGRITY_V6_ARGS:-}
	if [ "$module" = sroce ]; then
		_integrity_zc_wanted "$mode" && frags=1 || frags=0
		_integrity_zc_check "$dev" "v6 session (zcopy=$mode)" "$zc" \
			"$frags"
	fi
	integrity_inject inject "$g4" "$PEER_IP4"
	[ "$module" = sroce ] && integrity_nozcopy "$g4" "$PEER_IP4"

	barrier integrity-done 120
	log "counters of $dev: $(rdma statistic show link "$dev/1" 2>&1)"
	if [ "$module" = sroce ] && [ "$ROLE" = b ]; then
		# Requests of one QP that arrive in one receive batch get one ACK.
		check "$dev answered requests of a batch with one ACK" \
			[ "$(_integrity_counter "$dev" acks_coalesced)" -gt 0 ]
	fi
	check "rdma link delete $dev" rdma link delete "$dev"
	done_testing
}
