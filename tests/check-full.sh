#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What "make check" leaves out to stay within its time: every scenario
# whose "kernels:" header keeps it off the debug kernel (scale,
# rdmacm_netns, the two-VM scenarios...) runs on the debug kernel, with
# KASAN, lockdep and kmemleak watching. make check runs all of them on the
# stock kernels already; it runs kunit and delete on the debug kernel,
# which this does not repeat. Scenarios whose header says
# "kernels: none" run here only. A scenario whose "full-kernels:" header
# names a stock kernel that its "kernels:" header leaves out (make check
# runs it on the other one) runs here on that kernel too. On the debug
# kernel built from 6.12's source (debug-6.12), with the same checkers:
# the scenarios make check runs on the 6.1 debug kernel, the RC, UC, UD
# and SRQ pingpongs, pktfuzz, odp and the two-VM data path beside
# rdma_rxe (names612 below). Then, on 6.1, pktfuzz_1m
# (tests/extra/pktfuzz_1m.sh: the pktfuzz scenario with PKTFUZZ_COUNT
# packets, 1000000 unless set, the integrity tool and the pingpongs
# running throughout; about eight minutes) and the soak (tests/extra/soak.sh,
# SOAK_MINUTES=30 unless set).
#
#   tests/check-full.sh [--filter REGEX] [--out DIR] [--list]
#
#   --filter  only those of these scenarios whose name matches REGEX
#   --out     log directory (default out/check-full-DATE-TIME)
#   --list    print the scenarios it would run and stop
#
# Builds the debug kernels (once each, cached; not when the filter leaves
# no scenario for one), sroce's modules and the tools first.
# Ends with one line "N passed, N failed"; exits non-zero on any failure.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
filter=
out=
list=0
while [ $# -gt 0 ]; do
	case $1 in
	--filter) filter=${2:-}; shift 2 || exit 2 ;;
	--out) out=${2:-}; shift 2 || exit 2 ;;
	--list) list=1; shift ;;
	*) sed -n '3,27s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
	esac
done
out=${out:-$root/out/check-full-$(date +%Y%m%d-%H%M%S)}

# Scenarios whose header names kernels, debug not among them.
names=$("$root/tests/run-scenarios.sh" --kernel debug --list |
	awk '{ k = $0; sub(/.*kernels=/, "", k); sub(/ timeout=.*/, "", k)
	       if (k != "all" && (" " k " ") !~ / debug /) print $1 }')
[ -z "$filter" ] || names=$(grep -E -- "$filter" <<<"$names")
# Scenarios that make check runs on fewer stock kernels than they
# support, one "KERNEL NAME" line per kernel their "full-kernels:"
# header names.
extra=$("$root/tests/run-scenarios.sh" --kernel debug --list |
	awk '{ f = $NF; sub(/^full=/, "", f); if (f == "-") next
	       n = split(f, w, ","); for (i = 1; i <= n; i++) print w[i], $1 }')
[ -z "$filter" ] || extra=$(awk -v re="$filter" '$2 ~ re' <<<"$extra")
extra_kernels=$(awk '{ print $1 }' <<<"$extra" | sort -u)
# On debug-6.12: what make check runs on the 6.1 debug kernel (the
# scenarios the filter above leaves out), then sroce and rdma_rxe between
# two guests, one after the other in a boot.
names612=$("$root/tests/run-scenarios.sh" --kernel debug --list |
	awk '{ k = $0; sub(/.*kernels=/, "", k); sub(/ timeout=.*/, "", k)
	       if (k == "all" || (" " k " ") ~ / debug /) print $1 }')
names612+=$'\npingpong_netns\npktfuzz\nodp\nintegrity\ngro\npingpong_twovm\ninterop_rxe\nrxe_pingpong'
[ -z "$filter" ] || names612=$(grep -E -- "$filter" <<<"$names612")
soak=0
[ -z "$filter" ] || grep -qE -- "$filter" <<<soak && soak=1
fuzz=0
[ -z "$filter" ] || grep -qE -- "$filter" <<<pktfuzz_1m && fuzz=1
fuzz_count=${PKTFUZZ_COUNT:-1000000}
if [ -z "$names" ] && [ -z "$names612" ] && [ -z "$extra" ] && [ $soak = 0 ] && [ $fuzz = 0 ]; then
	echo "# no scenario of check-full matches '$filter'"
	echo "0 passed, 0 failed"
	exit 0
fi
echo "# on the debug kernel: ${names//$'\n'/ }"
echo "# on debug-6.12: ${names612//$'\n'/ }"
for k in $extra_kernels; do
	echo "# on $k: $(awk -v k="$k" '$1 == k { s = s (s ? " " : "") $2 } END { print s }' <<<"$extra")"
done
[ $fuzz = 0 ] || echo "# on 6.1: pktfuzz_1m ($fuzz_count packets)"
[ $soak = 0 ] || echo "# on 6.1: soak (${SOAK_MINUTES:-30} minutes)"
[ $list = 0 ] || exit 0

# debug_modules SERIES: build (or reuse) that debug kernel and sroce's
# modules for it; on failure, report it and stop.
debug_modules() {
	local dbg
	dbg=$("$root/tests/kernel/debug-kernel.sh" "$1") || { echo "not ok 1 - debug kernel $1"; echo "0 passed, 1 failed"; exit 1; }
	if ! "$root/scripts/build-kernels.sh" "$(cat "$dbg/kver")=$dbg/build" >&2; then
		echo "not ok 1 - sroce's modules for the debug kernel $1"
		echo "0 passed, 1 failed"
		exit 1
	fi
}
[ -z "$names" ] || debug_modules 6.1
[ -z "$names612" ] || debug_modules 6.12
# run_part NAME ARGS...: one run of the harness, its TAP printed as it
# comes; adds its counts to passed and failed.
passed=0
failed=0
run_part() {
	local name=$1 line p=0 f=1
	shift
	echo "# === $name: run-scenarios.sh $*"
	while IFS= read -r line; do
		echo "$line"
		[[ $line =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]] &&
			p=${BASH_REMATCH[1]} f=${BASH_REMATCH[2]}
	done < <("$root/tests/run-scenarios.sh" "$@")
	passed=$((passed + p)) failed=$((failed + f))
}

[ -z "$names" ] || SROCE_ALL_KERNELS=1 run_part "debug kernel" --kernel debug \
	--filter "^(${names//$'\n'/|})\$" --out "$out/debug"
[ -z "$names612" ] || SROCE_ALL_KERNELS=1 run_part "debug-6.12 kernel" --kernel debug-6.12 \
	--filter "^(${names612//$'\n'/|})\$" --out "$out/debug-6.12"
if [ $soak = 1 ] || [ $fuzz = 1 ] || [ -n "$extra" ]; then
	if ! make -s -C "$root/tools" >&2 || ! "$root/scripts/build-kernels.sh" >&2; then
		echo "not ok 1 - the tools and modules for the stock kernels build"
		failed=$((failed + 1))
	fi
fi
for k in $extra_kernels; do
	ks=$(awk -v k="$k" '$1 == k { printf "%s|", $2 }' <<<"$extra")
	SROCE_ALL_KERNELS=1 run_part "$k" --kernel "$k" --filter "^(${ks%|})\$" --out "$out/$k"
done
[ $fuzz = 0 ] || SROCE_SCENARIO_ENV="PKTFUZZ_COUNT=$fuzz_count ${SROCE_SCENARIO_ENV:-}" \
	run_part "pktfuzz_1m" --kernel 6.1 --dir "$root/tests/extra" --filter '^pktfuzz_1m$' --out "$out/pktfuzz_1m"
if [ $soak = 1 ]; then
	SROCE_SCENARIO_ENV="SOAK_MINUTES=${SOAK_MINUTES:-30} ${SROCE_SCENARIO_ENV:-}" \
		run_part soak --kernel 6.1 --dir "$root/tests/extra" --filter '^soak$' --out "$out/soak"
fi
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
