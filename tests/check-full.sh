#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What "make check" leaves out to stay within its time: every scenario
# whose "kernels:" header keeps it off the debug kernel (scale,
# rdmacm_netns, the two-VM scenarios...) runs on the debug kernel, with
# KASAN, lockdep and kmemleak watching. make check runs all of them on the
# stock kernels already; it runs kunit, delete and pingpong_netns on the
# debug kernel, which this does not repeat. Scenarios whose header says
# "kernels: none" (pktfuzz_full, a million fuzzed packets) run here only.
#
#   tests/check-full.sh [--filter REGEX] [--out DIR] [--list]
#
#   --filter  only those of these scenarios whose name matches REGEX
#   --out     log directory (default out/check-full-DATE-TIME)
#   --list    print the scenarios it would run and stop
#
# Builds the debug kernel (once, cached) and sroce's modules for it first.
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
	*) sed -n '3,19s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
	esac
done
out=${out:-$root/out/check-full-$(date +%Y%m%d-%H%M%S)}

# Scenarios whose header names kernels, debug not among them.
names=$("$root/tests/run-scenarios.sh" --kernel debug --list |
	awk '{ k = $0; sub(/.*kernels=/, "", k); sub(/ timeout=.*/, "", k)
	       if (k != "all" && (" " k " ") !~ / debug /) print $1 }')
[ -z "$filter" ] || names=$(grep -E -- "$filter" <<<"$names")
if [ -z "$names" ]; then
	echo "# no scenario left out of make check's debug run matches '$filter'"
	echo "0 passed, 0 failed"
	exit 0
fi
echo "# on the debug kernel: ${names//$'\n'/ }"
[ $list = 0 ] || exit 0

dbg=$("$root/tests/kernel/debug-kernel.sh") || { echo "not ok 1 - debug kernel"; echo "0 passed, 1 failed"; exit 1; }
if ! "$root/scripts/build-kernels.sh" "$(cat "$dbg/kver")=$dbg/build" >&2; then
	echo "not ok 1 - sroce's modules for the debug kernel"
	echo "0 passed, 1 failed"
	exit 1
fi
SROCE_ALL_KERNELS=1 exec "$root/tests/run-scenarios.sh" --kernel debug \
	--filter "^(${names//$'\n'/|})\$" --out "$out"
