# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Shared by the data-path scenarios (pingpong_*.sh, perftest_*.sh); no
# scenario itself (no topology line). A test runs a server and a client:
#
#   netns: sroce1 on v2 in h2 serves, sroce0 on v1 in h1 is the client;
#   twovm: sroce0 on eth0 of VM b serves, sroce0 of VM a is the client.
#
# dp_setup: load sroce and attach the devices; sets DP_SRV_DEV, DP_CLI_DEV,
#   DP_SRV_NS, DP_CLI_NS, DP_SRV_IP4/6 and the GID indices DP_SRV_GID4/6,
#   DP_CLI_GID4/6.
# dp_pair DESC TIMEOUT SERVER_CMD... -- CLIENT_CMD...: run the pair; ok
#   when both exit 0. "@DEV@", "@GID4@", "@GID6@" and "@SRV4@"/"@SRV6@" in
#   the commands are replaced by the side's device, GID indices and the
#   server's addresses. A perftest pair that failed only to calibrate its
#   clock runs again (see DP_RERUN_IF).

dp_ns_dev() {
	if [ "$TOPO" = netns ]; then
		DP_SRV_NS=h2 DP_CLI_NS=h1 DP_SRV_DEV=sroce1 DP_CLI_DEV=sroce0
		DP_SRV_IP4=$NET4_B DP_SRV_IP6=$NET6_B
		DP_CLI_IP4=$NET4_A DP_CLI_IP6=$NET6_A
	else
		DP_SRV_NS= DP_CLI_NS= DP_SRV_DEV=sroce0 DP_CLI_DEV=sroce0
		DP_SRV_IP4=$NET4_B DP_SRV_IP6=$NET6_B
		DP_CLI_IP4=$NET4_A DP_CLI_IP6=$NET6_A
	fi
}

dp_setup() {
	need_module sroce
	dp_ns_dev
	if [ "$TOPO" = netns ]; then
		check "attach sroce0 to v1" in_ns h1 rdma link add sroce0 type sroce netdev v1 || bail "no device"
		check "attach sroce1 to v2" in_ns h2 rdma link add sroce1 type sroce netdev v2 || bail "no device"
		wait_until 30 port_is sroce0 PORT_ACTIVE
		wait_until 30 port_is sroce1 PORT_ACTIVE
	else
		# A device left by an earlier scenario would be reused otherwise.
		rdma link delete sroce0 >/dev/null 2>&1
		check "attach sroce0 to eth0" rdma link add sroce0 type sroce netdev eth0 || bail "no device"
		wait_until 30 port_is sroce0 PORT_ACTIVE
	fi
	# GIDs appear asynchronously, after the addresses are seen. On twovm
	# each guest knows only its own device: both sides use their own.
	local cli4=$NET4_A srv4=$NET4_B cli6=$NET6_A srv6=$NET6_B
	if [ "$TOPO" = twovm ]; then
		cli4=$MY_IP4 srv4=$MY_IP4 cli6=$MY_IP6 srv6=$MY_IP6
	fi
	wait_until 30 gid_index "$DP_CLI_DEV" "$(gid_v4 "$cli4")"
	wait_until 30 gid_index "$DP_SRV_DEV" "$(gid_v4 "$srv4")"
	wait_until 30 gid_index "$DP_CLI_DEV" "$(gid_v6 "$cli6")"
	wait_until 30 gid_index "$DP_SRV_DEV" "$(gid_v6 "$srv6")"
	DP_CLI_GID4=$(gid_index "$DP_CLI_DEV" "$(gid_v4 "$cli4")")
	DP_SRV_GID4=$(gid_index "$DP_SRV_DEV" "$(gid_v4 "$srv4")")
	DP_CLI_GID6=$(gid_index "$DP_CLI_DEV" "$(gid_v6 "$cli6")")
	DP_SRV_GID6=$(gid_index "$DP_SRV_DEV" "$(gid_v6 "$srv6")")
	[ -n "$DP_CLI_GID4" ] && [ -n "$DP_SRV_GID4" ] || bail "no IPv4 GIDs"
}

# dp_subst SIDE WORD...: print the words with the side's values filled in.
dp_subst() {
	local side=$1 w dev gid4 gid6
	shift
	if [ "$side" = srv ]; then
		dev=$DP_SRV_DEV gid4=$DP_SRV_GID4 gid6=$DP_SRV_GID6
	else
		dev=$DP_CLI_DEV gid4=$DP_CLI_GID4 gid6=$DP_CLI_GID6
	fi
	for w in "$@"; do
		w=${w//@DEV@/$dev}
		w=${w//@GID4@/$gid4}
		w=${w//@GID6@/$gid6}
		w=${w//@SRV4@/$DP_SRV_IP4}
		w=${w//@SRV6@/$DP_SRV_IP6}
		w=${w//@CLI4@/$DP_CLI_IP4}
		w=${w//@CLI6@/$DP_CLI_IP6}
		printf '%s\n' "$w"
	done
}

_dp_n=0

# dp_server_port SERVER_CMD...: how to see that the server is ready for
# its client: the TCP port it listens on, for the tools that exchange
# their parameters over TCP (rdma-core's examples, perftest: -p/--port,
# default 18515; qperf -lp; ucx_perftest -p, default 13337;
# sroce-ucpcheck -p, default 18530; fi_pingpong -B, default 47592, its -p
# being the provider); "cm" for the servers that listen through the
# RDMA CM (rping, ucmatose, udaddy, rdma_server, perftest's -R); nothing
# for the others (mckey joins a group and listens on nothing).
dp_server_port() {
	local prog=${1##*/} flag=-p port= cm=
	case $prog in
	ibv_*_pingpong | ib_*_bw | ib_*_lat) port=18515 ;;
	ucx_perftest) port=13337 ;;
	sroce-ucpcheck) port=18530 ;;
	fi_pingpong) port=47592 flag=-B ;;
	rping | ucmatose | udaddy | rdma_server) echo cm; return 0 ;;
	qperf) ;;
	*) return 0 ;;
	esac
	shift
	while [ $# -gt 0 ]; do
		case $1 in
		"$flag" | --port | -lp) port=${2:-} ; shift ;;
		--port=*) port=${1#--port=} ;;
		-R | --rdma_cm) [[ $prog == ib_* ]] && cm=1 ;;
		esac
		shift
	done
	[ -n "$cm" ] && port=cm
	echo "$port"
}

# dp_cm_listening PROG: whether a process named PROG has an RDMA CM ID in
# the LISTEN state (as the RDMA core's resource tracking shows it).
dp_cm_listening() {
	local line
	while IFS= read -r line; do
		[[ $line == *" state LISTEN "* && $line == *" comm $1 "* ]] && return 0
	done < <(rdma resource show cm_id 2>/dev/null)
	return 1
}

# dp_listening PID PORT: whether a TCP socket listens on PORT in the
# network namespace of PID (bash builtins only: every fork is slow under
# TCG).
dp_listening() {
	local hex f loc st
	printf -v hex ':%04X' "$2"
	for f in "/proc/$1/net/tcp" "/proc/$1/net/tcp6"; do
		[ -r "$f" ] || continue
		while read -r _ loc _ st _; do
			[ "$st" = 0A ] && [[ $loc == *"$hex" ]] && return 0
		done <"$f"
	done
	return 1
}

# dp_wait_server PID [PORT [PROG]]: wait until the server PID listens on
# TCP PORT, or, for PORT "cm", until PROG listens through the RDMA CM (or
# the server exits, or its pair's time runs out); without a port, give it
# a second (times SROCE_SLOW) to start.
#
# rdma_listen() shows its CM ID as listening before it has registered the
# service ID with the IB CM, so a connect request sent at once can still
# be rejected (invalid service ID), and perftest's server then waits for
# a client that has gone. A CM server gets half a second more.
dp_wait_server() {
	local pid=$1 port=${2:-} prog=${3:-} start=$SECONDS
	if [ -z "$port" ]; then
		sleep "$((1 * SROCE_SLOW))"
		return 0
	fi
	until if [ "$port" = cm ]; then dp_cm_listening "$prog"; else dp_listening "$pid" "$port"; fi; do
		kill -0 "$pid" 2>/dev/null || return 0
		[ $((SECONDS - start)) -lt $((30 * SROCE_SLOW)) ] || return 0
		nap 0.1
	done
	[ "$port" != cm ] || nap "$((SROCE_SLOW / 2)).$((SROCE_SLOW % 2 * 5))"
}

# perftest calibrates its cycle counter against gettimeofday() with busy
# loops and, when a loaded host preempts the guest during them, refuses to
# print a report ("Correlation coefficient r^2: ... < 0.9") and exits 1,
# whatever the transfer did. Such a pair runs again, at most four times
# more, each after a pause that grows: three tries in a row, a few
# seconds apart, all failed so while the host was busy with other work.
DP_RERUN_IF='Correlation coefficient r^2'
DP_TRIES=5

dp_pair() {
	local try
	for try in $(seq "$DP_TRIES"); do
		_dp_last=$((try == DP_TRIES))
		_dp_pair_once "$@" && return 0
		log "perftest could not calibrate its clock; rerunning: $1"
		nap "$((2 * try))"
	done
}

# _dp_rerun OUT...: whether this failed attempt may run again: the
# calibration message is in OUT (or the peer saw it) and tries are left.
_dp_rerun() {
	[ "$_dp_last" = 1 ] && return 1
	case ${srv[0]##*/} in ib_*) ;; *) return 1 ;; esac
	[ "$_dp_hint" = 1 ] && return 0
	grep -qsF -- "$DP_RERUN_IF" "$@"
}

# _dp_pair_once: one attempt of dp_pair; returns 1 when it should rerun
# (after reporting nothing), 0 once it has reported.
_dp_pair_once() {
	local desc=$1 limit=$(($2 * SROCE_SLOW)) srv=() cli=() out_s out_c rc_s rc_c pid
	local verdict
	_dp_hint=0
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	mapfile -t srv <<<"$(dp_subst srv "${srv[@]}")"
	mapfile -t cli <<<"$(dp_subst cli "${cli[@]}")"
	_dp_n=$((_dp_n + 1))
	out_s=$(mktemp) out_c=$(mktemp)

	if [ "$TOPO" = netns ]; then
		log "+ server: ${srv[*]}"
		# ip execs the command: $! is the server's pid, in its namespace.
		ip netns exec "$DP_SRV_NS" timeout "$limit" "${srv[@]}" >"$out_s" 2>&1 &
		pid=$!
		dp_wait_server "$pid" "$(dp_server_port "${srv[@]}")" "${srv[0]##*/}"
		log "+ client: ${cli[*]}"
		in_ns "$DP_CLI_NS" timeout "$limit" "${cli[@]}" >"$out_c" 2>&1
		rc_c=$?
		wait "$pid"
		rc_s=$?
	elif [ "$ROLE" = b ]; then
		log "+ server: ${srv[*]}"
		timeout "$limit" "${srv[@]}" >"$out_s" 2>&1 &
		pid=$!
		dp_wait_server "$pid" "$(dp_server_port "${srv[@]}")" "${srv[0]##*/}"
		barrier "dp$_dp_n" || true
		wait "$pid"
		rc_s=$?
		grep -qsF -- "$DP_RERUN_IF" "$out_s" && _dp_hint=1
		put "dp$_dp_n.hint" "$_dp_hint"
		put "dp$_dp_n.rc" "$rc_s"
		cat "$out_s" >&2
		rm -f "$out_s" "$out_c"
		# VM b's side is reported by VM a, which also decides on a rerun.
		verdict=$(get "dp$_dp_n.verdict" "$((limit + 30))") || verdict=done
		[ "$verdict" != rerun ]
		return
	else
		barrier "dp$_dp_n" || true
		# Without a TCP port to watch, VM b only slept before the barrier.
		[ -n "$(dp_server_port "${srv[@]}")" ] || sleep "$((1 * SROCE_SLOW))"
		log "+ client: ${cli[*]}"
		timeout "$limit" "${cli[@]}" >"$out_c" 2>&1
		rc_c=$?
		rc_s=$(get "dp$_dp_n.rc" "$((limit + 30))") || rc_s=255
		_dp_hint=$(get "dp$_dp_n.hint" 10) || _dp_hint=0
	fi
	cat "$out_s" "$out_c" >&2
	if [ "$rc_s" = 0 ] && [ "$rc_c" = 0 ]; then
		[ "$TOPO" = twovm ] && put "dp$_dp_n.verdict" done
		ok "$desc"
	elif _dp_rerun "$out_s" "$out_c"; then
		[ "$TOPO" = twovm ] && put "dp$_dp_n.verdict" rerun
		rm -f "$out_s" "$out_c"
		return 1
	else
		[ "$TOPO" = twovm ] && put "dp$_dp_n.verdict" done
		not_ok "$desc" "server exit status $rc_s, client exit status $rc_c"
		diag_file "$out_c"
		[ -s "$out_s" ] && diag_file "$out_s"
	fi
	DP_LAST_OUT=$(cat "$out_c")
	rm -f "$out_s" "$out_c"
}

# dp_tap_tool LABEL LIMIT TOOL ARGS...: run a python tool printing TAP in the
# client's namespace (netns) for at most LIMIT seconds (scaled by
# SROCE_SLOW), and report each of its test points prefixed with LABEL. A
# tool that dies before its plan line is a failure.
dp_tap_tool() {
	local label=$1 limit=$(($2 * SROCE_SLOW)) tool=$3 out line
	shift 3
	out=$(mktemp)
	in_ns "$DP_CLI_NS" timeout "$limit" /usr/bin/python3 "$tool" "$@" \
		>"$out" 2>&1
	echo "# ${tool##*/} ($label) exit status $?" >&2
	while IFS= read -r line; do
		case $line in
		"ok "*) ok "$label: ${line#ok * - }" ;;
		"not ok "*) not_ok "$label: ${line#not ok * - }" ;;
		1..*) ;;
		*) diag "$line" ;;
		esac
	done <"$out"
	grep -q '^1\.\.' "$out" ||
		not_ok "$label: ${tool##*/} finished" "$(tail -n 20 "$out")"
	rm -f "$out"
}

# dp_tap_tool_gids LIMIT TOOL ARGS...: dp_tap_tool over the client's device
# through its IPv4 GID, then its IPv6 GID ("-d DEV -g GIDX" follow ARGS).
dp_tap_tool_gids() {
	local limit=$1 tool=$2
	shift 2
	dp_tap_tool "IPv4 GID" "$limit" "$tool" "$@" -d "$DP_CLI_DEV" \
		-g "$DP_CLI_GID4"
	dp_tap_tool "IPv6 GID" "$limit" "$tool" "$@" -d "$DP_CLI_DEV" \
		-g "$DP_CLI_GID6"
}

# dp_stats DEV: the device's non-zero counters, one "name value" a line.
dp_stats() {
	rdma statistic show link "$1/1" | tr ' ' '\n' | paste - - | awk 'NR > 1 && $2 != 0'
}

# dp_stat DEV NAME: one of the device's counters.
dp_stat() {
	dp_stats "$1" | awk -v n="$2" '$1 == n { v = $2 } END { print v + 0 }'
}

# Every counter of a packet the receiver drops (or answers from saved
# state) without placing it.
DP_DROPS="rx_bad_header rx_bad_opcode rx_bad_icrc rx_no_qp rx_bad_qp_state
rx_bad_qkey rx_duplicate_request rx_out_of_sequence rx_uc_message_dropped
rx_stale_response rx_backlog_full rx_bad_source rx_bad_pkey
rx_psn_out_of_window rx_dup_no_match rx_dup_refused rx_uc_malformed
rx_backlog_discarded rx_nomem"

# dp_perftest PREFIX PROGRAM ARGS...: a perftest pair over the IPv4 GID,
# reported as "PREFIXPROGRAM ARGS", each pair on a TCP port of its own;
# perftest fails on any completion error. Iteration counts, never
# durations: nothing here measures.
DP_PERFTEST_PORT=18600
dp_perftest() {
	local prefix=$1 prog=$2
	shift 2
	DP_PERFTEST_PORT=$((DP_PERFTEST_PORT + 1))
	dp_pair "$prefix$prog $*" 300 \
		"$prog" -d @DEV@ -x @GID4@ -p "$DP_PERFTEST_PORT" "$@" -- \
		"$prog" -d @DEV@ -x @GID4@ -p "$DP_PERFTEST_PORT" "$@" @SRV4@
}

# dp_attach MODULE TYPE DEV (twovm): load MODULE and put DEV on eth0;
# sets the dp_* variables for this VM's side. $P prefixes the test names.
dp_attach() {
	local module=$1 type=$2 dev=$3
	check "$P: modprobe $module" modprobe "$module" || bail "cannot load $module"
	check "$P: rdma link add $dev type $type netdev eth0" \
		rdma link add "$dev" type "$type" netdev eth0 || bail "cannot add $dev"
	check_wait "$P: $dev port active" 30 port_is "$dev" PORT_ACTIVE
	wait_until 30 gid_index "$dev" "$(gid_v4 "$MY_IP4")"
	wait_until 30 gid_index "$dev" "$(gid_v6 "$MY_IP6")"
	DP_SRV_DEV=$dev DP_CLI_DEV=$dev
	DP_SRV_GID4=$(gid_index "$dev" "$(gid_v4 "$MY_IP4")")
	DP_SRV_GID6=$(gid_index "$dev" "$(gid_v6 "$MY_IP6")")
	[ -n "$DP_SRV_GID4" ] && [ -n "$DP_SRV_GID6" ] ||
		bail "no RoCE v2 GIDs on $dev: $(gid_table "$dev")"
	DP_CLI_GID4=$DP_SRV_GID4 DP_CLI_GID6=$DP_SRV_GID6
	DP_SRV_IP4=$NET4_B DP_SRV_IP6=$NET6_B
	log "$dev: GID indices IPv4 $DP_SRV_GID4, IPv6 $DP_SRV_GID6"
}

# dp_detach MODULE DEV: remove DEV and unload MODULE, so that the other
# driver may load in this kernel.
dp_detach() {
	local module=$1 dev=$2
	check "$P: rdma link delete $dev" rdma link delete "$dev"
	check_wait "$P: $dev is gone" 10 ibdev_gone "$dev"
	check "$P: rmmod $module" rmmod "$module"
}

# dp_attach_role A_MODULE A_TYPE A_DEV B_MODULE B_TYPE B_DEV (twovm): attach
# this VM's side, VM a taking the first three; DP_MODULE and DP_DEV name
# it for dp_detach.
dp_attach_role() {
	if [ "$ROLE" = a ]; then
		DP_MODULE=$1 DP_DEV=$3
		dp_attach "$1" "$2" "$3"
	else
		DP_MODULE=$4 DP_DEV=$6
		dp_attach "$4" "$5" "$6"
	fi
}
