# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The scaling part of tests/bench.sh (SROCE_BENCH_SCALING): sourced by
# tests/bench/twovm.sh, which runs scale_main instead of the main bench
# when BENCH_SCALING is N > 0, in a boot with N vCPUs per guest. At each
# MTU of BENCH_MTUS and each size of BENCH_SCALE_SIZES, every stack of
# BENCH_STACKS moves the same bytes three ways:
#
#   FLOWS 1    one flow: ib_write_bw -q 1, iperf3 -P 1
#   FLOWS N    N flows in one process: ib_write_bw -q N, iperf3 -P N
#              (perftest and iperf3 3.12 drive them from one thread)
#   FLOWS Np   N processes of one flow each, at once, on their own ports
#              (the scheduler places them)
#
# and with "udp" in BENCH_FLOORS, UDP (iperf3 -u -b 0, datagrams of a
# full RoCE packet's payload) the same three ways. Each figure is one line
# on VM a's output:
#
#   SCALE <tab> MTU <tab> STACK <tab> TEST <tab> BYTES <tab> FLOWS <tab> METRIC <tab> VALUE
#
# STACK is sroce, sroce1, rxe, tcp or udp; TEST ib_write_bw, iperf3 or
# iperf3_udp; BYTES the message (write, datagram) size. METRIC is one of
#   MiBps      the flows' bandwidths added up (perftest "BW average",
#              iperf3's receiver rate), MiB/s
#   bytes, cpu_kern, cpu_user
#              as in twovm.sh: the payload, and both guests' CPU seconds
#   kern_aI, kern_bI
#              kernel CPU seconds of CPU I of VM a (the sender) or b (the
#              receiver) during the run
#   netrx_aI, netrx_bI
#              the NET_RX softirqs CPU I of that VM ran during the run
#   wall       seconds the client side took, setup included
# and TEST vcpus, BYTES 0, FLOWS 0, METRIC count: the guest's CPUs.
# Before the three runs of each stack and size, a warm-up run (N
# processes, an eighth of the bytes) is left out: under TCG the first run
# of new code also pays for translating it, and would make the one-flow
# run, which comes first, look slower than it is.
# A run that fails prints MiBps "failed".

# Message sizes, and the payload of each run, shared by its flows.
: "${BENCH_SCALE_SIZES=65536 1048576}"
BENCH_SCALE_BYTES=$((128 << 20))
BENCH_SCALE_UDP_BYTES=$((64 << 20))

scale_emit() {
	[ -n "${SCALE_WARM:-}" ] && return 0
	printf 'SCALE\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$BENCH_MTU" "$@"
}

# The command of N processes at once: bash -c "$SCALE_PAR" par BASE N
# CMD... runs N copies of CMD, copy I (from 0) with @PORT@ replaced by
# BASE + I, then prints their outputs one after the other. It fails when
# one copy failed.
# shellcheck disable=SC2016 # expanded by that bash
SCALE_PAR='base=$1 n=$2 rc=0
pids=()
shift 2
tmp=$(mktemp -d)
for ((i = 0; i < n; i++)); do
	"${@//@PORT@/$((base + i))}" >"$tmp/$i" 2>&1 &
	pids+=($!)
done
for p in "${pids[@]}"; do
	wait "$p" || rc=1
done
cat "$tmp"/*
rm -rf "$tmp"
exit $rc'

# scale_cmd PROCS BASE CMD...: into SCALE_CMD, CMD with @PORT@ as BASE
# when PROCS is 1, else PROCS copies of it at once on ports from BASE.
scale_cmd() {
	local procs=$1 base=$2
	shift 2
	if [ "$procs" = 1 ]; then
		SCALE_CMD=("${@//@PORT@/$base}")
	else
		SCALE_CMD=(bash -c "$SCALE_PAR" par "$base" "$procs" "$@")
	fi
}

# scale_ports PROCS: the PROCS ports after $port, on one line.
scale_ports() {
	seq "$((port + 1))" "$((port + $1))" | tr '\n' ' '
}

# scale_figures STACK TEST BYTES FLOWS MOVED SECONDS: the CPU figures of
# the last pair, per VM and per CPU.
scale_figures() {
	local hz cpu i vm
	local -a pc
	hz=$(getconf CLK_TCK)
	read -ra cpu <<<"$PAIR_CPU"
	scale_emit "$1" "$2" "$3" "$4" bytes "$5"
	scale_emit "$1" "$2" "$3" "$4" wall "$6"
	scale_emit "$1" "$2" "$3" "$4" cpu_kern \
		"$(awk -v j="${cpu[0]}" -v hz="$hz" 'BEGIN { printf "%.2f", j / hz }')"
	scale_emit "$1" "$2" "$3" "$4" cpu_user \
		"$(awk -v j="${cpu[1]}" -v hz="$hz" 'BEGIN { printf "%.2f", j / hz }')"
	for vm in a b; do
		if [ $vm = a ]; then
			read -ra pc <<<"$PAIR_PERCPU_A"
		else
			read -ra pc <<<"$PAIR_PERCPU_B"
		fi
		for ((i = 0; i * 3 + 2 < ${#pc[@]}; i++)); do
			scale_emit "$1" "$2" "$3" "$4" "kern_$vm$i" \
				"$(awk -v j="${pc[i * 3]}" -v hz="$hz" 'BEGIN { printf "%.2f", j / hz }')"
			scale_emit "$1" "$2" "$3" "$4" "netrx_$vm$i" "${pc[i * 3 + 2]}"
		done
	done
}

# scale_perftest STACK DEV SIZE FLOWS: one ib_write_bw run the FLOWS way.
scale_perftest() {
	local stack=$1 dev=$2 size=$3 flows=$4 procs=1 qps=$4 n ports t0 val
	local cmd srv
	case $flows in *p) procs=${flows%p} qps=1 ;; esac
	n=$(clamp $((BENCH_SCALE_BYTES / size / procs / qps)) 10 100000)
	[ -n "${SCALE_WARM:-}" ] && n=$(clamp $((n / 8)) 10 100000)
	# Whole rounds of perftest's completion moderation, as perftest_bw.
	[ "$n" -gt 100 ] && n=$((n - n % 100))
	ports=$(scale_ports "$procs")
	cmd=(ib_write_bw -d "$dev" -x "$BENCH_GID" -p @PORT@ -s "$size" -n "$n" -q "$qps")
	scale_cmd "$procs" $((port + 1)) "${cmd[@]}"
	srv=("${SCALE_CMD[@]}")
	scale_cmd "$procs" $((port + 1)) "${cmd[@]}" "$NET4_B"
	port=$((port + procs))
	t0=$EPOCHREALTIME
	if pair "$ports" "${srv[@]}" -- "${SCALE_CMD[@]}"; then
		[ "$ROLE" = a ] || return 0
		# #bytes #iterations BW_peak BW_average MsgRate, per process
		val=$(awk -v s="$size" -v p="$procs" '$1 == s && NF >= 5 { v += $4; k++ }
			END { if (k == p) printf "%.2f\n", v }' <<<"$PAIR_OUT")
		scale_emit "$stack" ib_write_bw "$size" "$flows" MiBps "${val:-failed}"
		[ -n "$val" ] && scale_figures "$stack" ib_write_bw "$size" "$flows" \
			$((size * n * qps * procs)) \
			"$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')"
	elif [ "$ROLE" = a ]; then
		scale_emit "$stack" ib_write_bw "$size" "$flows" MiBps failed
	fi
	return 0
}

# scale_rdma STACK MODULE TYPE DEV [PARAM=VALUE...]
scale_rdma() {
	local stack=$1 dev=$4 size f
	barrier "attach-$stack-$BENCH_MTU-$BENCH_STEP" 300
	if ! attach "$2" "$3" "$dev" "${@:5}"; then
		echo "# $stack: cannot attach $dev" >&2
		[ "$ROLE" = a ] && echo "# $stack: cannot attach $dev on VM a"
	fi
	[ "$ROLE" = a ] &&
		scale_emit "$stack" port 0 0 active_mtu "$(ibv_attr "$dev" active_mtu)"
	for size in $BENCH_SCALE_SIZES; do
		SCALE_WARM=1 scale_perftest "$stack" "$dev" "$size" "${BENCH_SCALING}p"
		for f in 1 "$BENCH_SCALING" "${BENCH_SCALING}p"; do
			scale_perftest "$stack" "$dev" "$size" "$f"
		done
	done
	barrier "detach-$stack-$BENCH_MTU-$BENCH_STEP" 300
	detach "$2" "$dev"
}

# iperf3_sum: the iperf3 -J documents of the input (one per process),
# "MIBPS BYTES": their receivers' rates and bytes added up.
iperf3_sum() {
	/usr/bin/python3 -c 'import json, sys
text, dec, pos, mibps, moved, n = sys.stdin.read(), json.JSONDecoder(), 0, 0, 0, 0
while True:
    start = text.find("{", pos)
    if start < 0:
        break
    doc, pos = dec.raw_decode(text, start)
    r = doc["end"]["sum_received"]
    mibps += r["bits_per_second"] / 8 / 1048576
    moved += r["bytes"]
    n += 1
if n == int(sys.argv[1]):
    print("%.2f %d" % (mibps, moved))' "$1"
}

# scale_iperf3_run KIND TEST SIZE FLOWS OPTS...: one iperf3 run the FLOWS
# way.
scale_iperf3_run() {
	local kind=$1 test=$2 size=$3 f=$4 procs=1 streams=$4 bytes ports cmd srv t0 val
	shift 4
	case $f in *p) procs=${f%p} streams=1 ;; esac
	bytes=$BENCH_SCALE_BYTES
	[ "$kind" = udp ] && bytes=$BENCH_SCALE_UDP_BYTES
	[ -n "${SCALE_WARM:-}" ] && bytes=$((bytes / 8))
	ports=$(scale_ports "$procs")
	scale_cmd "$procs" $((port + 1)) iperf3 -s -1 -p @PORT@
	srv=("${SCALE_CMD[@]}")
	cmd=(iperf3 -c "$NET4_B" -p @PORT@ "$@" -l "$size" -P "$streams"
		-n $((bytes / procs)) -J)
	scale_cmd "$procs" $((port + 1)) "${cmd[@]}"
	port=$((port + procs))
	t0=$EPOCHREALTIME
	if pair "$ports" "${srv[@]}" -- "${SCALE_CMD[@]}"; then
		[ "$ROLE" = a ] || return 0
		read -ra val < <(iperf3_sum "$procs" <<<"$PAIR_OUT")
		if [ ${#val[@]} = 2 ]; then
			scale_emit "$kind" "$test" "$size" "$f" MiBps "${val[0]}"
			scale_figures "$kind" "$test" "$size" "$f" "${val[1]}" \
				"$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')"
		else
			scale_emit "$kind" "$test" "$size" "$f" MiBps failed
		fi
	elif [ "$ROLE" = a ]; then
		scale_emit "$kind" "$test" "$size" "$f" MiBps failed
	fi
	return 0
}

# scale_iperf3 tcp|udp: iperf3 the three ways, TCP at each size of
# BENCH_SCALE_SIZES, UDP with datagrams of a full RoCE packet's payload.
scale_iperf3() {
	local kind=$1 test=iperf3 sizes=$BENCH_SCALE_SIZES size f opts=()
	if [ "$kind" = udp ]; then
		test=iperf3_udp
		sizes=$(roce_payload "$BENCH_MTU")
		opts=(-u -b 0)
	fi
	for size in $sizes; do
		SCALE_WARM=1 scale_iperf3_run "$kind" "$test" "$size" "${BENCH_SCALING}p" "${opts[@]}"
		for f in 1 "$BENCH_SCALING" "${BENCH_SCALING}p"; do
			scale_iperf3_run "$kind" "$test" "$size" "$f" "${opts[@]}"
		done
	done
}

scale_main() {
	local round floor stack
	# shellcheck disable=SC2034 # read by pair() in twovm.sh
	BENCH_PERCPU=1
	# A first port clear of the main bench's.
	port=19700
	BENCH_MTU=0
	[ "$ROLE" = a ] && scale_emit host vcpus 0 0 count "$(nproc)"
	# shellcheck disable=SC2153 # set in twovm.sh
	for BENCH_MTU in $BENCH_MTUS; do
		set_mtu || continue
		for round in $(seq "$BENCH_ROUNDS"); do
			[ "$ROLE" = a ] && [ "$BENCH_ROUNDS" -gt 1 ] &&
				echo "# scaling, MTU $BENCH_MTU, round $round of $BENCH_ROUNDS" >&2
			for floor in $BENCH_FLOORS; do
				BENCH_STEP=$((BENCH_STEP + 1))
				[ "$floor" = udp ] && scale_iperf3 udp
			done
			for stack in $BENCH_STACKS; do
				BENCH_STEP=$((BENCH_STEP + 1))
				case $stack in
				sroce) scale_rdma sroce sroce sroce sroce0 ;;
				sroce1) scale_rdma sroce1 sroce sroce sroce0 tx_burst=1 ack_coalesce=0 ack_hold_us=0 ;;
				rxe) scale_rdma rxe rdma_rxe rxe rxe0 ;;
				tcp) scale_iperf3 tcp ;;
				esac
			done
		done
	done
}
