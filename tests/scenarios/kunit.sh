#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The KUnit suites of sroce_kunit.ko (tests/kunit/), run by loading the
# module on a kernel with KUnit. Each suite becomes one TAP line; a failing
# suite carries its failing KTAP lines as diagnostics.
#
# topology: netns
# kernels: debug
# requires: sroce

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SUITES=(sroce_icrc sroce_hdr sroce_psn sroce_opcode sroce_rto sroce_psn_class
	sroce_mr_range sroce_segment sroce_rnr sroce_dcqcn sroce_burst sroce_gro)
KUNIT_DIR=/sys/kernel/debug/kunit
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# load_kunit: modprobe, or the module the host built for this kernel when
# the harness did not install it.
load_kunit() {
	local ko

	modprobe sroce_kunit && return 0
	ko=$REPO/build/$KVER/sroce_kunit.ko
	[ -f "$ko" ] || return 1
	log "sroce_kunit is not installed; loading $ko"
	modprobe sroce && insmod "$ko"
}

# suite_ktap SUITE: the suite's KTAP as the kernel log has it. The debugfs
# copy keeps only the first bytes of each case's log; the kernel log has all.
suite_ktap() {
	dmesg_since | sed 's/^\[[ 0-9.]*\] //' | awk -v s="$1" '
		$0 ~ "# Subtest: " s "$" { on = 1 }
		on { print }
		on && $0 ~ "^ *(not )?ok [0-9]+ (- )?" s "( |$)" { exit }'
}

# suite_failures SUITE: the lines that explain a failure: failing cases,
# their assertion messages and anything the kernel said meanwhile.
suite_failures() {
	suite_ktap "$1" | awk '
		/^ *# Subtest:/ { next }
		/^ *ok / { buf = ""; next }
		/^ *not ok / { printf "%s%s\n", buf, $0; buf = ""; next }
		{ buf = buf $0 "\n" }' | head -n 80
}

check_suite() {
	local suite=$1 results=$KUNIT_DIR/$1/results verdict cases failed

	if [ ! -r "$results" ]; then
		not_ok "kunit $suite" "no $results: the suite did not run"
		return
	fi
	# One pass (every process is slow on the debug kernel): the suite's
	# own result line, and how many of its cases ran and failed.
	IFS=$'\x1f' read -r verdict cases failed < <(awk -v s="$suite" '
		$0 ~ "^(not )?ok [0-9]+ (- )?" s "( |$)" { verdict = $0 }
		/^    (not )?ok [0-9]+ / { cases++ }
		/^    not ok [0-9]+ / { failed++ }
		END { printf "%s\x1f%d\x1f%d\n", verdict, cases, failed }' "$results")
	log "$suite: $verdict ($cases cases, $failed failed)"
	case $verdict in
	"ok "*"# SKIP"*)
		skip "kunit $suite" "${verdict#*# SKIP}"
		;;
	"ok "*)
		ok "kunit $suite ($cases cases)"
		;;
	*)
		not_ok "kunit $suite ($failed of $cases cases failed)" \
			"${verdict:-no result line in $results}"
		suite_failures "$suite" | sed 's/^/#   /'
		;;
	esac
}

main() {
	local suite

	mountpoint -q /sys/kernel/debug ||
		mount -t debugfs debugfs /sys/kernel/debug ||
		bail "cannot mount debugfs"
	[ -d "$KUNIT_DIR" ] || bail "$KVER has no KUnit debugfs ($KUNIT_DIR)"

	plan $((${#SUITES[@]} + 1))
	dmesg_mark
	if ! check "load sroce_kunit" load_kunit; then
		for suite in "${SUITES[@]}"; do
			not_ok "kunit $suite" "sroce_kunit did not load"
		done
		return
	fi
	for suite in "${SUITES[@]}"; do
		check_suite "$suite"
	done
	dmesg_since >&2
	rmmod sroce_kunit 2>/dev/null
}

main
