#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Check the VM harness itself: run tests/vm/selftest/ through
# tests/run-scenarios.sh and verify that what must pass passes and what
# must fail (a failing check, a WARNING in the kernel log, a panic, a
# scenario timeout, a guest that stops making progress) fails, with the
# scenarios after a crash still run in a fresh boot.
#
#   tests/vm/selftest.sh [--kernel 6.1|6.12|debug] [--out DIR]
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
kernel=6.1
out=
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) kernel=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	*) echo "usage: $0 [--kernel K] [--out DIR]" >&2; exit 2 ;;
	esac
done
out=${out:-$here/../../out/vm-selftest/$(date +%Y%m%d-%H%M%S)}

# Short host grace so the "hang" case does not take minutes.
tap=$(SROCE_VM_GRACE=30 "$here/../run-scenarios.sh" --kernel "$kernel" \
	--dir "$here/selftest" --out "$out")
rc=$?
echo "$tap"

bad=0
verdict() { # NAME must-pass|must-fail
	local fails passes
	fails=$(grep -cE "^not ok [0-9]+ - $kernel/$1/" <<<"$tap")
	passes=$(grep -cE "^ok [0-9]+ - $kernel/$1/" <<<"$tap")
	case $2 in
	must-pass) [ "$fails" -eq 0 ] && [ "$passes" -gt 0 ] ;;
	must-fail) [ "$fails" -gt 0 ] ;;
	esac || { echo "selftest: $1 should $2 (passes $passes, failures $fails)"; bad=1; }
}
# wanted NAME REGEX: a result line of NAME matches REGEX.
wanted() {
	grep -qE "^(not )?ok [0-9]+ - $kernel/$1/$2" <<<"$tap" ||
		{ echo "selftest: no line for $1 matching '$2'"; bad=1; }
}

verdict boot must-pass
verdict link must-pass
verdict smp must-pass
verdict crash must-fail
verdict fail must-fail
verdict hang must-fail
verdict splat must-fail
verdict timeout must-fail
wanted crash "kernel log clean"
wanted splat "completed"
grep -qE "^not ok [0-9]+ - $kernel/splat/kernel log clean" <<<"$tap" ||
	{ echo "selftest: the WARNING was not detected"; bad=1; }
grep -qE "^# $kernel: boot [0-9]+ \(netns, 2 vCPUs\): smp$" <<<"$tap" ||
	{ echo "selftest: smp did not get a 2-vCPU boot of its own"; bad=1; }
grep -qE "^ok [0-9]+ - $kernel/fail/kernel log clean" <<<"$tap" ||
	{ echo "selftest: fail's kernel log should be clean"; bad=1; }
grep -qE '^[0-9]+ passed, [0-9]+ failed$' <<<"$(tail -n1 <<<"$tap")" ||
	{ echo "selftest: no summary line"; bad=1; }
[ $rc -ne 0 ] || { echo "selftest: the runner exited 0 despite failures"; bad=1; }

if [ $bad = 0 ]; then
	echo "selftest: harness OK"
else
	echo "selftest: harness BROKEN"
fi
exit $bad
