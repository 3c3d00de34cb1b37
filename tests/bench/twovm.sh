# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Guest side of tests/bench.sh: runs in both VMs of the twovm topology
# through tests/vm/shell.sh (lib.sh already sourced). VM b serves, VM a
# measures; every figure becomes one line on VM a's output:
#
#   BENCH <tab> STACK <tab> TEST <tab> BYTES <tab> METRIC <tab> VALUE
#
# STACK is sroce, rxe or tcp; METRIC is MiBps (perftest "BW average", in
# MiB/s; iperf3's receiver rate converted to MiB/s), t_typical and t_avg
# (perftest latency, usec) or lat (qperf tcp_lat, usec). A run that fails
# prints VALUE "failed". Runs are sized by iteration counts (bytes for
# iperf3), qperf's latency test excepted: it only knows durations.

BENCH_BW_TESTS="ib_write_bw ib_send_bw ib_read_bw"
BENCH_BW_SIZES="64 4096 65536 1048576"
BENCH_LAT_TESTS="ib_write_lat ib_send_lat"
BENCH_LAT_SIZES="8 4096"
BENCH_LAT_ITERS=2000
BENCH_TCP_BYTES=256M
BENCH_TCP_LAT_SECS=3

# bench_iters BYTES: iterations of a bandwidth run of that message size,
# for a few seconds on the TCG link.
bench_iters() {
	case $1 in
	64) echo 20000 ;;
	4096) echo 10000 ;;
	65536) echo 1500 ;;
	*) echo 100 ;;
	esac
}

emit() {
	printf 'BENCH\t%s\t%s\t%s\t%s\t%s\n' "$@"
}

listening() { ss -ltn | grep -q ":$1 "; }

_pair_n=0
# pair PORT SERVER_CMD... -- CLIENT_CMD...: VM b starts the server and
# waits until it listens on TCP PORT, then VM a runs the client. On VM a,
# PAIR_OUT holds the client's output; returns non-zero when either side
# failed.
pair() {
	local port=$1 srv=() cli=() pid rc srv_rc out
	shift
	while [ "$1" != -- ]; do
		srv+=("$1")
		shift
	done
	shift
	cli=("$@")
	_pair_n=$((_pair_n + 1))
	PAIR_OUT=
	if [ "$ROLE" = b ]; then
		out=$(mktemp)
		timeout 600 "${srv[@]}" >"$out" 2>&1 &
		pid=$!
		wait_until 60 listening "$port"
		barrier "pair$_pair_n" 300
		wait "$pid"
		rc=$?
		put "pair$_pair_n.rc" "$rc"
		[ $rc = 0 ] || { echo "server failed ($rc): ${srv[*]}"; cat "$out"; } >&2
		rm -f "$out"
		return 0
	fi
	barrier "pair$_pair_n" 300 || return 1
	PAIR_OUT=$(timeout 600 "${cli[@]}" 2>&1)
	rc=$?
	srv_rc=$(get "pair$_pair_n.rc" 700) || srv_rc=none
	echo "${cli[*]}" >&2
	echo "$PAIR_OUT" >&2
	if [ $rc != 0 ] || [ "$srv_rc" != 0 ]; then
		echo "# failed: ${cli[*]} (client $rc, server $srv_rc)"
		echo "$PAIR_OUT" | tail -n 5 | sed 's/^/#   /'
		return 1
	fi
}

# attach MODULE TYPE DEV: sets BENCH_GID to the IPv4 RoCE v2 GID index.
attach() {
	modprobe "$1" || return 1
	rdma link add "$3" type "$2" netdev eth0 || return 1
	wait_until 30 port_is "$3" PORT_ACTIVE || return 1
	wait_until 30 gid_index "$3" "$(gid_v4 "$MY_IP4")" || return 1
	BENCH_GID=$(gid_index "$3" "$(gid_v4 "$MY_IP4")")
}

detach() {
	rdma link delete "$2"
	wait_until 10 ibdev_gone "$2"
	rmmod "$1"
}

port=18700

# rdma_stack STACK MODULE TYPE DEV
rdma_stack() {
	local stack=$1 dev=$4 t size n val line
	barrier "attach-$stack" 300
	if ! attach "$2" "$3" "$dev"; then
		echo "# $stack: cannot attach $dev" >&2
		[ "$ROLE" = a ] && echo "# $stack: cannot attach $dev on VM a"
	fi
	for t in $BENCH_BW_TESTS; do
		for size in $BENCH_BW_SIZES; do
			n=$(bench_iters "$size")
			port=$((port + 1))
			if pair $port "$t" -d "$dev" -x "$BENCH_GID" -p $port -s "$size" -n "$n" -- \
				"$t" -d "$dev" -x "$BENCH_GID" -p $port -s "$size" -n "$n" "$NET4_B"; then
				[ "$ROLE" = a ] || continue
				# #bytes #iterations BW_peak BW_average MsgRate
				val=$(awk -v s="$size" '$1 == s && NF >= 5 { v = $4 } END { print v }' <<<"$PAIR_OUT")
				emit "$stack" "$t" "$size" MiBps "${val:-failed}"
			elif [ "$ROLE" = a ]; then
				emit "$stack" "$t" "$size" MiBps failed
			fi
		done
	done
	for t in $BENCH_LAT_TESTS; do
		for size in $BENCH_LAT_SIZES; do
			port=$((port + 1))
			if pair $port "$t" -d "$dev" -x "$BENCH_GID" -p $port -s "$size" -n $BENCH_LAT_ITERS -- \
				"$t" -d "$dev" -x "$BENCH_GID" -p $port -s "$size" -n $BENCH_LAT_ITERS "$NET4_B"; then
				[ "$ROLE" = a ] || continue
				# #bytes #iterations t_min t_max t_typical t_avg ...
				line=$(awk -v s="$size" '$1 == s && NF >= 6 { l = $5 " " $6 } END { print l }' <<<"$PAIR_OUT")
				emit "$stack" "$t" "$size" t_typical "${line%% *}"
				emit "$stack" "$t" "$size" t_avg "${line##* }"
			elif [ "$ROLE" = a ]; then
				emit "$stack" "$t" "$size" t_typical failed
				emit "$stack" "$t" "$size" t_avg failed
			fi
		done
	done
	barrier "detach-$stack" 300
	[ "$ROLE" = a ] && rdma statistic show link "$dev/1" >&2
	detach "$2" "$dev"
}

# qperf_usec TEXT: qperf's "latency = N unit" in microseconds.
qperf_usec() {
	awk '$1 == "latency" { v = $3; u = $4
		if (u == "ns") v /= 1000; else if (u == "ms") v *= 1000; else if (u == "sec") v *= 1000000
		printf "%.2f\n", v }' <<<"$1"
}

tcp_stack() {
	local size val
	for size in $BENCH_BW_SIZES; do
		if pair 5201 iperf3 -s -1 -p 5201 -- \
			iperf3 -c "$NET4_B" -p 5201 -n $BENCH_TCP_BYTES -l "$size" -J; then
			[ "$ROLE" = a ] || continue
			val=$(/usr/bin/python3 -c 'import json, sys
print("%.2f" % (json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"] / 8 / 1048576))' <<<"$PAIR_OUT")
			emit tcp iperf3 "$size" MiBps "${val:-failed}"
		elif [ "$ROLE" = a ]; then
			emit tcp iperf3 "$size" MiBps failed
		fi
	done
	# qperf's server serves any number of clients: VM b stops it at the end.
	if [ "$ROLE" = b ]; then
		qperf >/dev/null 2>&1 &
		local qpid=$!
		wait_until 60 listening 19765
		barrier qperf-up 300
		barrier qperf-done 600
		kill "$qpid"
		return 0
	fi
	barrier qperf-up 300
	for size in $BENCH_LAT_SIZES; do
		PAIR_OUT=$(timeout 120 qperf "$NET4_B" -t $BENCH_TCP_LAT_SECS -m "$size" tcp_lat 2>&1)
		echo "$PAIR_OUT" >&2
		val=$(qperf_usec "$PAIR_OUT")
		emit tcp qperf_tcp_lat "$size" lat "${val:-failed}"
	done
	barrier qperf-done 600
}

rdma_stack sroce sroce sroce sroce0
rdma_stack rxe rdma_rxe rxe rxe0
tcp_stack
barrier bench-done 300
true
