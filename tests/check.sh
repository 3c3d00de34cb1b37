#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Everything "make check" runs, each step reporting TAP:
#
#   1. the debug kernel (built once, then cached) and sroce's modules for
#      the stock kernels and for it (scripts/build-kernels.sh);
#   2. the user-space test tools (tools/), the benchmark report's
#      verdicts on made-up figures (tests/bench/report_test.py) and its
#      host-side CPU reader (tests/bench/hostcpu_test.py);
#   3. the VM scenarios (tests/scenarios/) on Debian's stock 6.1 and 6.12
#      kernels and on the debug kernel, KUnit included, in jobs that run
#      side by side on the machine's CPU slots (tests/vm/README.md);
#   4. static checks: W=1 and sparse builds for both stock kernels,
#      checkpatch --strict, kernel-doc (scripts/lint.sh). They run while
#      the scenarios run, at the lowest CPU priority and with one make job,
#      on the CPU time the guests leave idle; their output is printed
#      after the scenarios'.
#
# Ends with the wall time of each step and each boot, then one line
# "N passed, N failed" over all steps, and exits non-zero on any failure.
# SROCE_CHECK_KERNELS overrides the kernel list (e.g. "6.1"), SROCE_CHECK_OUT
# the log directory.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
out=${SROCE_CHECK_OUT:-$root/out/check-$(date +%Y%m%d-%H%M%S)}
kernels=${SROCE_CHECK_KERNELS:-6.1,6.12,debug}
mkdir -p "$out"
passed=0
failed=0
t_start=$EPOCHSECONDS
declare -A took
times=()

# run NAME CMD...: run a step, keep its output, add up its TAP summary.
run() {
	local name=$1 t0=$EPOCHSECONDS
	shift
	echo "# === $name: $*"
	"$@" 2>"$out/$name.stderr" | tee "$out/$name.log"
	local rc=${PIPESTATUS[0]}
	took[$name]=$((EPOCHSECONDS - t0))
	times+=("$name")
	tally "$name" "$rc"
}

# tally NAME RC: add up a finished step's summary from its log.
tally() {
	local name=$1 rc=$2 log=$out/$1.log summary p f
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
	# W=1: scripts/lint.sh reads these builds' warnings instead of
	# compiling everything again beside the guests.
	"$root/scripts/build-kernels.sh" "${targets[@]}" -- W=1
}

# recap_failures: each failed test point again, with the first lines of
# its diagnosis, and each boot the harness stopped, just above the summary
# line, where the tail of a long log (all that CI may keep) shows them.
recap_failures() {
	[ "$failed" -gt 0 ] || return 0
	echo "# failures, again:"
	{
		grep -h -E '^# [^ ]+: boot [0-9.]+( stopped:|: .*FAILED)' "$out"/*.log
		awk '/^not ok/ { n = 6; print; next }
			n > 0 && /^#/ { print; n--; next }
			{ n = 0 }' "$out"/*.log
	} | head -n 60 | sed 's/^/#   /'
}

# mmss SECONDS
mmss() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

# boot_times LOG: one line per boot of the scenario step: kernel, boot,
# topology, when it started into the step, how long it took, scenarios.
boot_times() {
	awk '
	/^# [^ ]+: boot [0-9.]+ \(.*\): / {
		k = $2; sub(/:$/, "", k); id = $4
		what = $0; sub(/^[^(]*\(/, "", what); sub(/\).*/, "", what)
		names = $0; sub(/^[^)]*\): /, "", names)
		w[k " " id] = what; n[k " " id] = names
	}
	/^# [^ ]+: boot [0-9.]+ took [0-9]+ s, started at \+[0-9]+ s$/ {
		k = $2; sub(/:$/, "", k); id = $4; at = $10; sub(/^\+/, "", at)
		printf "%s %s %d %d %s|%s\n", k, id, at, $6, w[k " " id], n[k " " id]
	}' "$1"
}

run modules build_modules
run tools make -s -C "$root/tools"
run bench-report /usr/bin/python3 "$root/tests/bench/report_test.py"
run bench-hostcpu /usr/bin/python3 "$root/tests/bench/hostcpu_test.py"

# The sroce-dkms package, installed into an overlay of this machine's
# root for the "dkms" scenario, beside the first guests: that scenario
# runs last in its boot and waits for it if it is not done by then
# (tests/package/dkms-root.sh), while the boot's other scenarios run.
nice -n 5 "$root/tests/package/dkms-root.sh" "$root/out/package" \
	>"$out/package.log" 2>&1 &

# Lint beside the scenarios: nice 19 and one make job, so that it takes
# only what the guests leave idle and never a guest's CPU slot.
t_lint=$EPOCHSECONDS
(
	SROCE_LINT_BUILT=1 SROCE_JOBS=1 nice -n 19 "$root/scripts/lint.sh" \
		>"$out/lint.log" 2>"$out/lint.stderr"
	echo $? >"$out/lint.rc"
	echo $((EPOCHSECONDS - t_lint)) >"$out/lint.took"
) &
lint_pid=$!
trap 'kill $lint_pid 2>/dev/null' EXIT

run scenarios "$root/tests/run-scenarios.sh" --kernel "$kernels" \
	--out "$out/scenarios"

wait "$lint_pid"
echo "# === lint: $root/scripts/lint.sh (ran beside the scenarios)"
cat "$out/lint.log"
took[lint]=$(cat "$out/lint.took" 2>/dev/null || echo 0)
times=(lint "${times[@]}")
tally lint "$(cat "$out/lint.rc" 2>/dev/null || echo 1)"

echo "# logs: $out"
echo "# wall time per step:"
for s in "${times[@]}"; do
	note=
	[ "$s" = lint ] && note=" (beside the scenarios, nice 19)"
	printf '#   %-10s %8s%s\n' "$s" "$(mmss "${took[$s]}")" "$note"
done
echo "# wall time per boot (start into the scenario step, duration):"
boot_times "$out/scenarios.log" | sort -k1,1V -k3,3n |
	while read -r k id at secs rest; do
		printf '#   %-6s boot %-4s +%-7s %7s  %s\n' "$k" "$id" "$(mmss "$at")" "$(mmss "$secs")" \
			"${rest//|/: }"
	done
echo "# wall time per kernel (first boot's start to last boot's end):"
boot_times "$out/scenarios.log" |
	awk '{ s = $3; e = $3 + $4
		if (!($1 in a) || s < a[$1]) a[$1] = s
		if (e > z[$1]) z[$1] = e }
	END { for (k in a) printf "%s %d %d\n", k, a[k], z[k] }' | sort -k1,1V |
	while read -r k s e; do
		printf '#   %-6s +%s .. +%s\n' "$k" "$(mmss "$s")" "$(mmss "$e")"
	done
printf '#   %-10s %8s\n' total "$(mmss $((EPOCHSECONDS - t_start)))"
recap_failures
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
