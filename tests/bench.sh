#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# "make bench": sroce against the kernel's rdma_rxe and against TCP on the
# same link, in one boot of the two-VM topology (tests/bench/twovm.sh runs
# in the guests), at each netdev MTU: perftest bandwidth (ib_write_bw,
# ib_send_bw, ib_send_bw -e, ib_read_bw, ib_read_bw -e) and latency
# (ib_write_lat, ib_send_lat, with their 99th and 99.9th percentiles) from
# 64 B to 1 MiB, ib_write_bw with 1 to 1000 QPs, over sroce, then over
# rdma_rxe, then iperf3 and qperf over TCP, with the guests' kernel CPU time
# per GiB moved, and the host's: its CPUs' busy share and both QEMUs' CPU
# time per GiB. Before the stacks, at each MTU, the link's floors:
# back-to-back ICMP echoes (latency) and one UDP stream of datagrams the
# size of a full RoCE packet's payload (packet rate). A benchmark, not a
# test: nothing is judged. The tables, with the ratios sroce/rxe, sroce/TCP
# and sroce to the floors (and sroce/sroce1 when sroce1 ran), go to
# out/bench/DATE/results.md and to stdout; bench.png beside them plots
# bandwidth and latency against the message size.
# Documentation/performance.rst explains how to read them.
#
#   SROCE_BENCH_KERNEL   kernel to boot (default 6.1; see scripts/kernels.sh)
#   SROCE_BENCH_OUT      output directory (default out/bench/DATE-TIME)
#   SROCE_BENCH_NOBUILD  set to 1 to use build/KVER/sroce.ko as it is
#   SROCE_BENCH_MTUS     netdev MTUs (default "1500 4200": RoCE MTU 1024, 4096)
#   SROCE_BENCH_SIZES    message sizes in bytes
#                        (default "64 1024 4096 65536 1048576"; 1024 and
#                        4096 fill one packet at either RoCE MTU)
#   SROCE_BENCH_QPS      QP counts of the scaling run (default "1 10 100 1000";
#                        "none" skips it)
#   SROCE_BENCH_STACKS   any of "sroce sroce1 rxe tcp" (default "sroce rxe
#                        tcp"); sroce1 is sroce loaded with tx_burst=1, every
#                        packet handed to the IP layer alone
#   SROCE_BENCH_FLOORS   any of "icmp udp link" (default "icmp udp"; link,
#                        the frame rate from pktgen, is opt-in: see
#                        Documentation/performance.rst)
#   SROCE_BENCH_BW_TESTS, SROCE_BENCH_LAT_TESTS   perftest programs ("none"
#                        skips them, as for the others); ib_send_bw_event
#                        and ib_read_bw_event are ib_send_bw -e and
#                        ib_read_bw -e, sleeping on completion events
#   SROCE_BENCH_CPU_SIZES  message sizes whose bandwidth runs get a short
#                        run of 5 messages beside them, for the CPU time of
#                        the transfer alone (default "65536 1048576";
#                        "none" skips them)
#   SROCE_BENCH_RUN_TIMEOUT  seconds before a hung run is killed (default 60)
#   SROCE_BENCH_GIVE_UP  after this many runs of one stack in a row whose
#                        server failed, skip its other runs at that MTU
#                        (default 3)
#   SROCE_BENCH_CUT_LINK  a run's number: VM a drops all it sends from
#                        that run on, to test the repair of a lost link
#                        (after a failed run that leaves VM b unreachable,
#                        both guests reset their NIC and the runs go on;
#                        results.md says so under the failed runs)
#   SROCE_BENCH_ROUNDS   run the floors and the stacks this many times in
#                        turn at each MTU (default 1); the report gives the
#                        median of the rounds: with "sroce sroce1", an A/B
#                        less at the mercy of the machine's load drifting
#   SROCE_BENCH_SCALING  "1": after that boot, a second one with
#                        SROCE_BENCH_VCPUS vCPUs per guest measures one flow
#                        against N (N QPs or streams in one process, and N
#                        processes) for the stacks, and UDP with "udp" in
#                        the floors (tests/bench/scaling.sh); "only": that
#                        boot alone; "0" (default): none
#   SROCE_BENCH_VCPUS    vCPUs per guest, and flows, of the scaling boot
#                        (default 2)
#   SROCE_BENCH_SCALE_SIZES  its message sizes (default "65536 1048576")
#
# A quick run: SROCE_BENCH_MTUS=1500 SROCE_BENCH_SIZES="64 65536" make bench
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
kernel=${SROCE_BENCH_KERNEL:-6.1}
stamp=$(date +%Y%m%d-%H%M%S)
out=${SROCE_BENCH_OUT:-$root/out/bench/$stamp}
mkdir -p "$out"
out=$(cd "$out" && pwd)

if [ "${SROCE_BENCH_NOBUILD:-0}" != 1 ]; then
	"$root/scripts/build-kernels.sh" >&2
fi

# The selection, passed to the guests as shell assignments: words of
# letters, digits and underscores only.
env=
for v in MTUS SIZES QPS STACKS FLOORS BW_TESTS LAT_TESTS CPU_SIZES RUN_TIMEOUT GIVE_UP ROUNDS SCALE_SIZES \
	CUT_LINK; do
	var=SROCE_BENCH_$v
	[ -n "${!var+set}" ] || continue
	val=${!var}
	[ "$val" = none ] && val=
	if [[ ! $val =~ ^[A-Za-z0-9_\ ]*$ ]]; then
		echo "bench: $var: only letters, digits, _ and spaces" >&2
		exit 2
	fi
	env="${env}BENCH_$v='$val'; "
done

rounds=${SROCE_BENCH_ROUNDS:-1}
if [[ ! $rounds =~ ^[1-9][0-9]?$ ]]; then
	echo "bench: SROCE_BENCH_ROUNDS: a number from 1 to 99" >&2
	exit 2
fi

scaling=${SROCE_BENCH_SCALING:-0}
vcpus=${SROCE_BENCH_VCPUS:-2}
case $scaling in
0 | 1 | only) ;;
*) echo "bench: SROCE_BENCH_SCALING: 0, 1 or only" >&2; exit 2 ;;
esac
if [[ ! $vcpus =~ ^[2-8]$ ]]; then
	echo "bench: SROCE_BENCH_VCPUS: a number from 2 to 8" >&2
	exit 2
fi

# nic_watch DIR: while the guests of DIR run, answer each request a guest
# makes after a failed run (twovm.sh's link_state) with the host's side of
# the link (vm_link_state: both QEMUs' virtio-net, the two sockets) in
# DIR/nicstate.txt. Run in the background: a subshell.
nic_watch() {
	local dir=$1 req
	# shellcheck source=vm/vm.sh
	. "$root/tests/vm/vm.sh"
	declare -A done_req=()
	while sleep 1; do
		for req in "$dir"/sync/cmd/val.nicstate.*; do
			if [ ! -e "$req" ] || [ -n "${done_req[$req]:-}" ]; then
				continue
			fi
			done_req[$req]=1
			{
				echo "== ${req##*/val.} at $(date -u +%T)"
				vm_link_state "$dir"
			} >>"$dir/nicstate.txt" 2>&1
		done
	done
}

# guests DIR VCPUS CMD: one boot of the two VMs; fails when VM a printed
# nothing. Beside them, nic_watch and tests/bench/hostcpu.py, which
# answers VM a's requests for the host's CPU time around each run.
guests() {
	local dir=$1 n=$2 cmd=$3 r=0 watch host
	nic_watch "$out/$dir" &
	watch=$!
	/usr/bin/python3 "$root/tests/bench/hostcpu.py" "$out/$dir" &
	host=$!
	"$root/tests/vm/shell.sh" --kernel "$kernel" --topo twovm --vcpus "$n" \
		--timeout $((2400 * rounds)) --out "$out/$dir" --cmd "$cmd" \
		>"$out/$dir.log" 2>&1 || r=$?
	kill "$watch" "$host" 2>/dev/null
	wait "$watch" "$host" 2>/dev/null
	[ "$r" = 0 ] || rc=$r
	if [ ! -s "$out/$dir/a/cmd.out" ]; then
		echo "bench: no output from the guests (exit status $r); see $out/$dir.log" >&2
		tail -n 30 "$out/$dir.log" >&2
		return 1
	fi
}

rc=0
raw=$out/vm/a/cmd.out
: >"$out/results.tsv"
if [ "$scaling" != only ]; then
	echo "bench: two VMs on kernel $kernel, output in $out" >&2
	guests vm 1 "$env. $root/tests/bench/twovm.sh" || exit 1
	grep -P '^BENCH\t' "$raw" | cut -f2- >"$out/results.tsv" || true
fi
report_args=()
if [ "$scaling" != 0 ]; then
	echo "bench: scaling, two VMs of $vcpus vCPUs on kernel $kernel, output in $out" >&2
	guests smp "$vcpus" "${env}BENCH_SCALING=$vcpus; . $root/tests/bench/twovm.sh" || exit 1
	grep -P '^SCALE\t' "$out/smp/a/cmd.out" | cut -f2- >"$out/scaling.tsv" || true
	report_args=("$out/scaling.tsv")
fi

commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ -n "$(git -C "$root" status --porcelain -- drivers include 2>/dev/null)" ]; then
	commit="$commit (driver sources modified)"
fi
kver=$(cat "$out"/{vm,smp}/a/boot.info 2>/dev/null | sed -n 's/^kver: //p' | head -n1 || true)

{
	echo "# sroce benchmark, $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo
	if [ "$scaling" = only ]; then
		echo "Two QEMU guests (TCG, $vcpus vCPUs each) on kernel ${kver:-$kernel}, joined by a"
	else
		echo "Two QEMU guests (TCG, one vCPU each) on kernel ${kver:-$kernel}, joined by a"
	fi
	echo "virtio-net link over two unix datagram sockets connected to each other."
	if [ "$rounds" -gt 1 ]; then
		echo "Tree $commit. $rounds rounds: the"
	else
		echo "Tree $commit. One run each: the"
	fi
	echo "machine is shared and noisy; read the ratios, measured in the same boot,"
	echo "rather than the absolute figures."
} >"$out/header.md"
{
	/usr/bin/python3 "$root/tests/bench/report.py" "$out/results.tsv" "$out" "$out/header.md" \
		"${report_args[@]}"
	failures=$(cat "$out"/{vm,smp}/a/cmd.out 2>/dev/null |
		grep -E '^# (failed|skipped|cannot|link lost)|cannot attach' || true)
	if [ -n "$failures" ]; then
		echo
		echo "## Runs that failed or were skipped"
		echo
		echo '```'
		echo "$failures"
		echo '```'
	fi
	echo
	if [ "$scaling" = 0 ]; then
		echo "Raw figures: results.tsv; guest output: vm/a/cmd.out, vm/b/cmd.out."
	else
		echo "Raw figures: results.tsv, scaling.tsv; guest output: vm/a/cmd.out," \
			"vm/b/cmd.out, and for the scaling boot smp/a/cmd.out, smp/b/cmd.out."
	fi
} >"$out/results.md"

cat "$out/results.md"
[ "$rc" = 0 ] || echo "bench: the guests' job ended with status $rc; see $out/*.log" >&2
exit "$rc"
