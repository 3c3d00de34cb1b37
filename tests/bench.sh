#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# "make bench": sroce against the kernel's rdma_rxe and against TCP on the
# same link, in one boot of the two-VM topology (tests/bench/twovm.sh runs
# in the guests): perftest bandwidth (ib_write_bw, ib_send_bw, ib_read_bw
# at 64 B, 4 KiB, 64 KiB and 1 MiB) and latency (ib_write_lat, ib_send_lat
# at 8 B and 4 KiB) over sroce, then over rdma_rxe, then iperf3 and qperf
# over TCP. A benchmark, not a test: nothing is judged. The table, with the
# ratios sroce/rxe and sroce/TCP, goes to out/bench/DATE/results.md and to
# stdout.
#
#   SROCE_BENCH_KERNEL   kernel to boot (default 6.1; see scripts/kernels.sh)
#   SROCE_BENCH_OUT      output directory (default out/bench/DATE-TIME)
#   SROCE_BENCH_NOBUILD  set to 1 to use build/KVER/sroce.ko as it is
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

echo "bench: two VMs on kernel $kernel, output in $out" >&2
rc=0
"$root/tests/vm/shell.sh" --kernel "$kernel" --topo twovm --timeout 1800 \
	--out "$out/vm" --cmd ". $root/tests/bench/twovm.sh" >"$out/vm.log" 2>&1 || rc=$?
raw=$out/vm/a/cmd.out
if [ ! -s "$raw" ]; then
	echo "bench: no output from the guests (exit status $rc); see $out/vm.log" >&2
	tail -n 30 "$out/vm.log" >&2
	exit 1
fi
grep -P '^BENCH\t' "$raw" | cut -f2- >"$out/results.tsv" || true

commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ -n "$(git -C "$root" status --porcelain -- drivers include 2>/dev/null)" ]; then
	commit="$commit (driver sources modified)"
fi
kver=$(sed -n 's/^kver: //p' "$out/vm/a/boot.info" 2>/dev/null | head -n1)

{
	echo "# sroce benchmark, $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo
	echo "Two QEMU guests (TCG, one vCPU each) on kernel ${kver:-$kernel}, joined by a"
	echo "virtio-net link over a QEMU stream socket, netdev MTU 1500 (RoCE path MTU"
	echo "1024). Tree $commit. One run each: the machine is shared and noisy;"
	echo "read the ratios, measured in the same boot, rather than the absolute figures."
	echo
	awk -F'\t' '
	function num(x) { return x ~ /^[0-9.]+$/ && x + 0 > 0 }
	function ratio(a, b) { return num(a) && num(b) ? sprintf("%.2f", a / b) : "-" }
	function show(x) { return x == "" ? "-" : x }
	{ v[$1 "|" $2 "|" $3 "|" $4] = $5 }
	$4 == "MiBps" && $1 != "tcp" && !(($2 "|" $3) in seen_bw) { seen_bw[$2 "|" $3] = 1; bw[++nbw] = $2 "|" $3 }
	$4 == "t_typical" && !(($2 "|" $3) in seen_lat) { seen_lat[$2 "|" $3] = 1; lat[++nlat] = $2 "|" $3 }
	END {
		print "## Bandwidth (MiB/s, higher is better)"
		print ""
		print "perftest \"BW average\"; TCP: one iperf3 stream writing the same message size."
		print ""
		print "| test | bytes | sroce | rxe | TCP | sroce/rxe | sroce/TCP |"
		print "|---|---:|---:|---:|---:|---:|---:|"
		for (i = 1; i <= nbw; i++) {
			split(bw[i], k, "|")
			s = v["sroce|" k[1] "|" k[2] "|MiBps"]
			r = v["rxe|" k[1] "|" k[2] "|MiBps"]
			t = v["tcp|iperf3|" k[2] "|MiBps"]
			printf "| %s | %s | %s | %s | %s | %s | %s |\n", k[1], k[2], show(s), show(r), show(t), ratio(s, r), ratio(s, t)
		}
		print ""
		print "## Latency (usec, lower is better)"
		print ""
		print "perftest t_typical and t_avg (half a round trip); TCP: qperf tcp_lat (half a"
		print "round trip) with the same message size. Ratios of t_typical; below 1 sroce is faster."
		print ""
		print "| test | bytes | sroce t_typical | sroce t_avg | rxe t_typical | rxe t_avg | TCP | sroce/rxe | sroce/TCP |"
		print "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
		for (i = 1; i <= nlat; i++) {
			split(lat[i], k, "|")
			st = v["sroce|" k[1] "|" k[2] "|t_typical"]
			sa = v["sroce|" k[1] "|" k[2] "|t_avg"]
			rt = v["rxe|" k[1] "|" k[2] "|t_typical"]
			ra = v["rxe|" k[1] "|" k[2] "|t_avg"]
			t = v["tcp|qperf_tcp_lat|" k[2] "|lat"]
			printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", k[1], k[2], show(st), show(sa), show(rt), show(ra), show(t), ratio(st, rt), ratio(st, t)
		}
	}' "$out/results.tsv"
	failures=$(grep -E '^# failed|cannot attach' "$raw" || true)
	if [ -n "$failures" ]; then
		echo
		echo "## Runs that failed"
		echo
		echo '```'
		echo "$failures"
		echo '```'
	fi
	echo
	echo "Raw figures: results.tsv; guest output: vm/a/cmd.out, vm/b/cmd.out."
} >"$out/results.md"

cat "$out/results.md"
[ "$rc" = 0 ] || echo "bench: the guests' job ended with status $rc; see $out/vm.log" >&2
exit "$rc"
