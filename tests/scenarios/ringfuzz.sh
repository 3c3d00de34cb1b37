#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tools/bin/sroce-ringfuzz as an unprivileged user on sroce0, sending to
# the device's own GID:
#   opcodes     (last) every send opcode 0..31 on RC, UC and UD: what the
#               transport carries succeeds with its effect checked, the
#               rest completes with an error and reaches nobody;
#   ring        garbage in the SQ, RQ, SRQ and CQ rings and their indices
#               while other threads post, resize CQs and recreate QPs, and
#               a second process's QP pair keeps moving checked data;
#   asyncflood  a CQ overflowing 100000 times with nobody reading the async
#               events: the kernel's slab memory must stay bounded.
# The harness fails the scenario on any kernel report.
#
# topology: netns
# kernels: 6.1
# full-kernels: 6.12
# requires: sroce
# timeout: 900
# vcpus: 2

# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=datapath_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/datapath_lib.sh"
# shellcheck source=ringfuzz_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/ringfuzz_lib.sh"

# Growth of the kernel's slab a dropped completion may cause, in all.
FLOOD_SLAB_MAX_KB=4096

meminfo_kb() { awk -v k="$1:" '$1 == k { print $2 }' /proc/meminfo; }

# slab_sample: Slab and SUnreclaim (kB) once the reclaimable caches that
# other activity fills (dentries, inodes) are dropped.
slab_sample() {
	sync
	echo 2 >/proc/sys/vm/drop_caches
	echo "$(meminfo_kb Slab) $(meminfo_kb SUnreclaim)"
}

# slabinfo_top: the caches with the most active objects (root only).
slabinfo_top() {
	[ -r /proc/slabinfo ] || return 0
	awk 'NR > 2 { print $1, $2, $4 }' /proc/slabinfo | sort -k2,2nr | head -n 8
}

# asyncflood [COMPLETIONS]: FLOOD_SLAB_MAX_KB is for 100000 of them.
asyncflood() {
	local dir n=${1:-100000} max_kb before s0 u0 s1 u1 pid rc out line
	max_kb=$((FLOOD_SLAB_MAX_KB * n / 100000))
	dir=$(mktemp -d)
	chmod 777 "$dir"
	out=$dir/out
	read -r s0 u0 <<<"$(slab_sample)"
	log "+ (as nobody) $RF_TOOL asyncflood -n $n --hold $dir/flood"
	rf_user timeout -k 10 $((600 * SROCE_SLOW)) "$RF_TOOL" asyncflood \
		-d "$DP_CLI_DEV" -g "$DP_CLI_GID4" -n "$n" --hold "$dir/flood" \
		>"$out" 2>&1 &
	pid=$!
	if ! wait_until 600 test -e "$dir/flood.ready"; then
		not_ok "asyncflood: the flood ran" "$(tail -n 15 "$out")"
		kill "$pid" 2>/dev/null
		wait "$pid"
		return
	fi
	read -r s1 u1 <<<"$(slab_sample)"
	before=$(slabinfo_top)
	touch "$dir/flood.go"
	wait "$pid"
	rc=$?
	cat "$out" >&2
	diag "Slab ${s0} kB -> ${s1} kB, SUnreclaim ${u0} kB -> ${u1} kB while the flooding process lived"
	[ -n "$before" ] && diag "largest slab caches then (name, active objects, size):" "$before"
	if [ $((s1 - s0)) -lt "$max_kb" ]; then
		ok "asyncflood: kernel slab grew $((s1 - s0)) kB over $n completions dropped on a full CQ (limit $max_kb kB)"
	else
		not_ok "asyncflood: kernel slab grew $((s1 - s0)) kB over $n completions dropped on a full CQ (limit $max_kb kB)" \
			"the driver keeps something per dropped completion (an async event each?)"
	fi
	while IFS= read -r line; do
		case $line in
		"ok "*) ok "${line#ok * - }" ;;
		"not ok "*) not_ok "${line#not ok * - }" ;;
		"# "*) diag "${line#\# }" ;;
		esac
	done <"$out"
	grep -qE '^[0-9]+ passed, [0-9]+ failed$' "$out" ||
		not_ok "asyncflood: ran to its end" "exit status $rc" "$(tail -n 15 "$out")"
	rm -rf "$dir"
}

# Where everything is about twenty times slower (the debug kernel, whose
# SROCE_SLOW is above 1), fewer chaos iterations and only the opcodes up
# to 15 (every named one), to stay within minutes.
chaos=2000 last_op=31
if [ "$SROCE_SLOW" -gt 1 ]; then
	chaos=$((2000 / SROCE_SLOW / SROCE_SLOW)) last_op=15
fi

rf_setup
if [ "$SROCE_SLOW" -gt 1 ]; then
	# The ring chaos takes most of an hour there; the stock kernels run it.
	skip "ring" "slow kernel: the stock kernels run the ring chaos"
	# 20000 dropped completions still queue 2.5 MB of events if each raised one.
	asyncflood 20000
else
	rf_run "ring" 600 ring -d "$DP_CLI_DEV" -g "$DP_CLI_GID4" -n "$chaos" -s "$RANDOM"
	asyncflood
fi
# Last: a driver that crashes on an opcode takes the VM with it.
rf_run "opcodes" 600 opcodes -d "$DP_CLI_DEV" -g "$DP_CLI_GID4" -n "$last_op"
done_testing
