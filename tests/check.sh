#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Everything "make check" runs, in order, each step reporting TAP:
#
#   1. static checks: W=1 and sparse builds for both stock kernels,
#      checkpatch --strict, kernel-doc (scripts/lint.sh);
#   2. the debug kernel (built once, then cached) and sroce's modules for
#      the stock kernels and for it (scripts/build-kernels.sh);
#   3. the user-space test tools (tools/);
#   4. the VM scenarios (tests/scenarios/) on Debian's stock 6.1 and 6.12
#      kernels and on the debug kernel, KUnit included.
#
# Ends with one line "N passed, N failed" over all steps, and exits non-zero
# on any failure. SROCE_CHECK_KERNELS overrides the kernel list (e.g. "6.1").
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out=${SROCE_CHECK_OUT:-$root/out/check-$(date +%Y%m%d-%H%M%S)}
kernels=${SROCE_CHECK_KERNELS:-6.1,6.12,debug}
mkdir -p "$out"
passed=0
failed=0

# run NAME CMD...: run a step, keep its output, add up its TAP summary.
run() {
	local name=$1 log=$out/$1.log summary p f
	shift
	echo "# === $name: $*"
	"$@" 2>"$out/$name.stderr" | tee "$log"
	local rc=${PIPESTATUS[0]}
	summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -n1)
	if [ -n "$summary" ]; then
		p=${summary%% passed*}
		f=${summary#*, }
		f=${f%% failed}
	else
		# A step without a summary counts as one test.
		p=$((rc == 0))
		f=$((rc != 0))
		echo "$([ "$rc" -eq 0 ] && echo ok || echo 'not ok') - $name"
	fi
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "not ok - $name exited with status $rc"
		f=1
	fi
	if [ "$f" -ne 0 ]; then
		echo "# $name: see $log and $out/$name.stderr"
		tail -n 20 "$out/$name.stderr" | sed 's/^/# /'
	fi
	passed=$((passed + p))
	failed=$((failed + f))
}

build_modules() {
	local targets=() kver kdir dbg
	while read -r _ kver kdir _; do
		targets+=("$kver=$kdir")
	done < <("$root/scripts/kernels.sh")
	if [[ ,$kernels, == *,debug,* ]]; then
		dbg=$("$root/tests/kernel/debug-kernel.sh") || return 1
		targets+=("$(cat "$dbg/kver")=$dbg/build")
	fi
	"$root/scripts/build-kernels.sh" "${targets[@]}"
}

run lint "$root/scripts/lint.sh"
run modules build_modules
run tools make -s -C "$root/tools"
run scenarios "$root/tests/run-scenarios.sh" --kernel "$kernels" \
	--out "$out/scenarios"

echo "# logs: $out"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
