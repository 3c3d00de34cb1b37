#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Second stage of an sroce test VM: PID 1 inside the overlay root that
# tests/vm/initramfs-init prepared. Mounts the pseudo file systems and the
# boot directory (9p tag "out", see tests/vm/vm.sh), stages the sroce
# modules, then runs the job the host left there and powers off.
#
# Scenario job (BOOTDIR/scenarios, lines "NAME TIMEOUT PATH [AWAIT]"): for
# each, after the file BOOTDIR/AWAIT exists if one is named (what the host
# prepares beside the boot, e.g. the sroce-dkms package), in the role's
# directory R = BOOTDIR/ROLE:
#   NAME.begin     the scenario started (the host times it from here)
#   NAME.tap       its stdout, TAP
#   NAME.log       its stderr, and the harness's own notes
#   NAME.dmesg     kernel log from before its setup to after its cleanup
#   NAME.kmemleak  kmemleak report (srocevm.kmemleak=each); empty when clean
#   NAME.link      twovm: after a failure, the peer did not answer on the
#                  link; this NIC's state (the host adds NAME.link.host)
#   NAME.end       "rc=N cleanup=ok|PROBLEMS", written last
# The job stops early, leaving the rest to a fresh boot, once the kernel
# is no longer trustworthy: a splat, a leak or a failed cleanup.
# R/ready marks the end of the boot, R/alldone a finished job, R/boot.info
# describes the guest. With srocevm.kmemleak=boot (and a kernel with
# kmemleak), R/boot.kmemleak holds the leaks found after the last scenario.
#
# Command job (BOOTDIR/cmd.sh, tests/vm/shell.sh): runs it once with the
# topology set up; output in R/cmd.out, exit status in R/cmd.rc.

export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LC_ALL=C.UTF-8 TERM=dumb
umask 022

OUT=/run/sroce/out

say() {
	local up
	read -r up _ </proc/uptime 2>/dev/null
	echo "srocevm[${ROLE:-?}] ${up:-?}: $*"
}

poweroff_now() {
	sync
	echo o >/proc/sysrq-trigger
	sleep 60
}
# PID 1 must never return.
trap poweroff_now EXIT

# arg NAME: the value of srocevm.NAME= on the kernel command line.
arg() {
	local w words
	read -r -a words </proc/cmdline
	for w in "${words[@]}"; do
		[[ $w == "srocevm.$1="* ]] && { echo "${w#*=}"; return; }
	done
}

mount_all() {
	mount -t proc proc /proc
	mount -t sysfs sysfs /sys
	mount -t devtmpfs devtmpfs /dev
	# What udev would add: process substitution needs /dev/fd.
	ln -sfn /proc/self/fd /dev/fd
	ln -sfn /proc/self/fd/0 /dev/stdin
	ln -sfn /proc/self/fd/1 /dev/stdout
	ln -sfn /proc/self/fd/2 /dev/stderr
	mkdir -p /dev/pts /dev/shm
	mount -t devpts devpts /dev/pts
	mount -t tmpfs tmpfs /dev/shm
	# A fresh /tmp, unless the repository (a clone there) would vanish
	# under it: the root overlay is writable and in memory anyway.
	case $(arg repo)/ in
	/tmp/*) ;;
	*) mount -t tmpfs tmpfs /tmp ;;
	esac
	mount -t tmpfs -o mode=0755 tmpfs /run
	mkdir -p /run/netns /run/sroce/out /run/lock
	mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
	mount -t configfs configfs /sys/kernel/config 2>/dev/null
	mount -t 9p -o trans=virtio,version=9p2000.L,cache=none,msize=512000 out "$OUT"
}

# Install the host's build/KVER/*.ko in /lib/modules/KVER/extra with the
# module index the host regenerated for them (tests/vm/vm.sh).
stage_modules() {
	local lm=/lib/modules/$KVER stage=$MODSTAGE/lib/modules/$KVER

	if [ -n "$MODROOT" ]; then
		# A kernel not installed on the host: its modules, made writable.
		mkdir -p "$lm" /run/sroce/mods/upper /run/sroce/mods/work
		mount -t overlay -o "lowerdir=$MODROOT/lib/modules/$KVER,upperdir=/run/sroce/mods/upper,workdir=/run/sroce/mods/work" \
			overlay "$lm" || say "cannot mount $MODROOT/lib/modules/$KVER"
	fi
	{
		echo "kver: $KVER"
		echo "kernel: $KNAME"
		echo "staged from: $REPO/build/$KVER via ${MODSTAGE:-nothing}"
	} >>"$RDIR/boot.info"
	if [ -z "$MODSTAGE" ]; then
		echo "staged: none" >>"$RDIR/boot.info"
		return 0
	fi
	mkdir -p "$lm/extra"
	if ! cp "$stage"/extra/*.ko "$lm/extra/" || ! cp "$stage"/modules.* "$lm/"; then
		say "staging from $stage failed"
		echo "staging FAILED: $stage is not readable" >>"$RDIR/boot.info"
		return 1
	fi
	cat "$MODSTAGE/manifest" >>"$RDIR/boot.info"
}

topo_up() {
	case $TOPO in
	netns) topo_netns_up ;;
	twovm) topo_twovm_up ;;
	esac
}

# Kill every process but this shell, its ancestors and kernel threads; wait
# until they are gone. (Run in a command substitution, this shell is not
# PID 1: it must not kill itself.)
kill_strays() {
	local d pid rest flags state i ppid
	local -a pids
	local -A keep=()
	pid=$BASHPID
	while [ "$pid" -gt 1 ]; do
		keep[$pid]=1
		ppid=
		while read -r rest; do
			[[ $rest == PPid:* ]] && ppid=${rest#PPid:}
		done <"/proc/$pid/status"
		pid=$((ppid))
	done
	for ((i = 0; i < 50; i++)); do
		pids=()
		for d in /proc/[0-9]*; do
			pid=${d#/proc/}
			[ "$pid" = 1 ] && continue
			[ -n "${keep[$pid]:-}" ] && continue
			# The process may exit between the glob and the read; the
			# redirection's error must go where the read's would.
			{ read -r rest <"$d/stat"; } 2>/dev/null || continue
			rest=${rest##*) }
			read -r state _ _ _ _ _ flags _ <<<"$rest"
			[ "$state" = Z ] && continue
			# PF_KTHREAD
			(((flags & 0x200000) != 0)) && continue
			pids+=("$pid")
		done
		[ ${#pids[@]} -eq 0 ] && return 0
		kill -9 "${pids[@]}" 2>/dev/null
		sleep 0.2
	done
	echo "processes would not die: ${pids[*]}"
	return 1
}

# Undo what a scenario left: processes, RDMA devices, namespaces, links,
# modules. Prints the problems found; nothing when clean.
cleanup() {
	local dev m pass left loaded

	kill_strays
	for dev in $(rdma link show 2>/dev/null | awk '$1 == "link" { sub(/\/.*/, "", $2); print $2 }' | sort -u); do
		rdma link delete "$dev" 2>&1
	done
	rdma system show 2>/dev/null | grep -q 'netns exclusive' &&
		rdma system set netns shared 2>&1
	ip -all netns delete 2>/dev/null
	if [ "$TOPO" = twovm ]; then
		for dev in $(ip -o link show | awk -F': ' '{ sub(/@.*/, "", $2); print $2 }'); do
			case $dev in lo | eth0) ;; *) ip link del "$dev" 2>/dev/null ;; esac
		done
	fi
	# Remove the modules loaded since boot, newest first, until none is left.
	for ((pass = 0; pass < 5; pass++)); do
		left=0
		for m in $(awk '{ print $1 }' /proc/modules | tr '\n' ' '); do
			[[ " $BOOT_MODULES " == *" $m "* ]] && continue
			rmmod "$m" 2>/dev/null || left=$((left + 1))
		done
		[ $left -eq 0 ] && break
		sleep 0.5
	done
	loaded=" $(awk '{ print $1 }' /proc/modules | tr '\n' ' ') "
	for m in sroce rdma_rxe ib_uverbs ib_core; do
		[[ $loaded == *" $m "* ]] || continue
		echo "module $m cannot be unloaded: $(rmmod "$m" 2>&1)"
	done
	left=$(ls /sys/class/infiniband 2>/dev/null)
	[ -n "$left" ] && echo "RDMA devices left: $left"
	return 0
}

# kmemleak_scan: print the leaks found since the last call, of objects
# allocated after the guest was ready (KMEMLEAK_SINCE, in jiffies): what
# boot leaves is not ours. Two scans with a pause: an object is only
# reported once it is 5 s old, and not in the first scan that sees its
# contents change.
# clock_check: a boot whose TSC calibration fell back on the PIT, which a
# busy host throws off under TCG (seen once: 273 MHz found for a TSC that
# runs at the host's 2300, the guest's time then running eight times too
# fast), keeps that rate: the later refinement gives up on a value so far
# off. Every timeout, sleep and measured interval in the guest is then
# wrong. The HPET, which QEMU runs on its own clock, needs no calibration:
# such a boot keeps time by it. boot.info says so.
clock_check() {
	local cs=/sys/devices/system/clocksource/clocksource0/current_clocksource
	dmesg | grep -q 'tsc: Using PIT calibration value' || return 0
	if grep -qw hpet "${cs%/*}/available_clocksource" && echo hpet >"$cs"; then
		echo "clock: $(dmesg | grep -m1 'PIT calibration deviates' | sed 's/^\[[^]]*\] //'); keeping time by the HPET" >>"$RDIR/boot.info"
	else
		echo "clock: TSC calibrated against the PIT, and no HPET to keep time by" >>"$RDIR/boot.info"
	fi
}

kmemleak_scan() {
	local k=/sys/kernel/debug/kmemleak
	[ -w $k ] || return 0
	echo scan >$k
	sleep 6
	echo scan >$k
	awk -v since="${KMEMLEAK_SINCE:-0}" '
		function flush() { if (keep) printf "%s", buf; buf = "" }
		/^unreferenced object / { flush(); keep = 1 }
		/^  comm .* jiffies [0-9]+/ {
			j = $0; sub(/.* jiffies /, "", j); sub(/[^0-9].*/, "", j)
			if (j + 0 < since + 0) keep = 0
		}
		{ buf = buf $0 "\n" }
		END { flush() }' $k
	echo clear >$k
}

# jiffies_now: the kernel's jiffies counter (kmemleak reports allocation
# times in jiffies).
jiffies_now() {
	awk '/^jiffies: / { print $2; exit }' /proc/timer_list 2>/dev/null
}

# start_barrier SECONDS: wait for the peer VM to be ready for the same
# scenario; fails when the peer stopped its job.
start_barrier() {
	local limit=$1 start=$SECONDS
	: >"$SROCE_SYNC/start.$ROLE"
	until [ -e "$SROCE_SYNC/start.$PEER" ]; do
		[ -e "$OUT/sync/stopped.$PEER" ] && return 1
		[ $((SECONDS - start)) -ge "$limit" ] && return 1
		nap 0.1
	done
}

# link_report: what this VM's side of a dead link shows.
link_report() {
	echo "no answer from VM $PEER ($PEER_IP4) to five pings"
	ip -s link show dev eth0
	ethtool -S eth0 2>/dev/null | grep -v ': 0$'
	tc -s qdisc show dev eth0
	ip neigh show dev eth0
}

run_scenario() {
	local name=$1 limit=$2 script=$3 rc problems t0 dmesg_all
	local base=$RDIR/$name
	export SROCE_SYNC=$OUT/sync/$name SROCE_SCENARIO=$name
	mkdir -p "$SROCE_SYNC"

	echo "srocevm: begin $name" >/dev/kmsg
	t0=$SECONDS
	if ! topo_up >>"$base.log" 2>&1; then
		say "$name: topology setup failed"
		: >"$base.begin"
		echo "rc=setup cleanup=topology setup failed" >"$base.end"
		return 1
	fi
	# Both VMs start each scenario together; a peer that stopped its job
	# makes this one stop too, leaving the rest to a fresh pair.
	if [ "$TOPO" = twovm ] && ! start_barrier $((limit + 60)) 2>>"$base.log"; then
		say "$name: peer did not start it; stopping"
		return 1
	fi
	: >"$base.begin"
	say "$name: running (timeout ${limit}s)"
	(cd /tmp && exec timeout -k 10 "$limit" bash "$script") >"$base.tap" 2>>"$base.log" </dev/null
	rc=$?
	: >"$SROCE_SYNC/exit.$ROLE"
	if [ "$TOPO" = twovm ]; then
		# Let the peer finish before tearing anything down.
		SROCE_SLOW=1 wait_until $((limit + 30)) test -e "$SROCE_SYNC/exit.$PEER"
	fi
	problems=$(cleanup 2>&1)
	[ "$KMEMLEAK" = each ] && kmemleak_scan >"$base.kmemleak" 2>&1
	echo "srocevm: end $name" >/dev/kmsg
	dmesg_all=$(dmesg)
	awk -v m="srocevm: begin $name" 'index($0, m) { buf = "" } { buf = buf $0 "\n" } END { printf "%s", buf }' \
		<<<"$dmesg_all" >"$base.dmesg"
	if [ -n "$problems" ]; then
		echo "cleanup problems:" >>"$base.log"
		echo "$problems" >>"$base.log"
	fi
	# A failed twovm scenario may have lost the link itself (QEMU's side
	# of it has stopped for good under load, see tests/vm/vm.sh): then
	# what the NIC holds goes to NAME.link, and the job stops, since
	# every later scenario would fail the same way.
	local lost=0
	if [ "$TOPO" = twovm ] && { [ "$rc" != 0 ] || grep -q '^not ok' "$base.tap"; } &&
		! peer_answers 5; then
		lost=1
		link_report >"$base.link" 2>&1
		# The host reads its side of the link while QEMU still runs.
		SROCE_SLOW=1 wait_until 30 test -e "$base.link.host"
	fi
	echo "rc=$rc cleanup=${problems:+${problems//$'\n'/; }}${problems:-ok}" >"$base.end"
	say "$name: done, rc=$rc, $((SECONDS - t0)) s"
	[ $lost = 0 ] || { say "$name: VM $PEER does not answer on the link; stopping"; return 1; }

	# Keep going only on a kernel that is still clean.
	[ -z "$problems" ] || return 1
	[ ! -s "$base.kmemleak" ] || return 1
	! grep -aE -f "$REPO/tests/vm/splat.re" "$base.dmesg" | grep -qavE 'srocevm: (begin|end) '
}

run_cmd() {
	local CMD_TIMEOUT=600
	# shellcheck source=/dev/null
	[ -f "$OUT/cmd.env" ] && . "$OUT/cmd.env"
	local limit=$CMD_TIMEOUT
	topo_up >"$RDIR/setup.log" 2>&1 || say "topology setup failed (see setup.log)"
	if [ "$TOPO" = twovm ]; then
		export SROCE_SYNC=$OUT/sync/cmd
		mkdir -p "$SROCE_SYNC"
		start_barrier 120 || say "peer did not come up"
	fi
	: >"$RDIR/cmd.begin"
	(cd /tmp && exec timeout -k 10 "$limit" bash -c ". $REPO/tests/scenarios/lib.sh; . $OUT/cmd.sh") \
		</dev/null 2>&1 | tee "$RDIR/cmd.out"
	echo "${PIPESTATUS[0]}" >"$RDIR/cmd.rc"
	kmemleak_scan >"$RDIR/cmd.kmemleak" 2>&1
	dmesg >"$RDIR/cmd.dmesg"
}

main() {
	mount_all
	say "stage 2 mounted"
	ROLE=$(arg role) TOPO=$(arg topo) REPO=$(arg repo) KNAME=$(arg kname)
	MODROOT=$(arg modroot) MODSTAGE=$(arg modstage) SROCE_SLOW=$(arg slow)
	KMEMLEAK=$(arg kmemleak)
	KVER=$(uname -r)
	SROCE_KNAME=$KNAME SROCE_REPO=$REPO
	export ROLE TOPO KVER SROCE_KNAME SROCE_REPO SROCE_SLOW
	RDIR=$OUT/$ROLE
	mkdir -p "$RDIR"
	hostname "sroce-$ROLE"
	ip link set lo up
	clock_check
	# shellcheck source=../scenarios/lib.sh
	. "$REPO/tests/scenarios/lib.sh"
	# Settings the runner passes to the scenarios (SROCE_SCENARIO_ENV).
	if [ -s "$OUT/env" ]; then
		set -a
		# shellcheck disable=SC1091
		. "$OUT/env"
		set +a
	fi

	say "staging modules"
	stage_modules
	say "staged"
	case $TOPO in
	netns) modprobe -q veth; modprobe -q virtio_net ;;
	twovm) modprobe -q virtio_net ;;
	esac
	BOOT_MODULES=$(awk '{ print $1 }' /proc/modules | tr '\n' ' ')
	# Unregistering an RDMA device is slow on the debug kernel under TCG,
	# and the netdev waits for it: warn about a netdev reference only when
	# it outlasts that (a leaked one never goes and is still reported).
	echo $((10 * SROCE_SLOW)) >/proc/sys/net/core/netdev_unregister_timeout_secs
	if [ -w /sys/kernel/debug/kmemleak ]; then
		# Only the harness scans: an automatic scan would report in the
		# middle of some scenario. What boot leaves is not ours: rather
		# than a scan now (most of a minute on the debug kernel),
		# reports leave out what was allocated before this point.
		echo scan=off >/sys/kernel/debug/kmemleak
		KMEMLEAK_SINCE=$(jiffies_now)
		[ -n "$KMEMLEAK_SINCE" ] || {
			echo scan >/sys/kernel/debug/kmemleak
			echo clear >/sys/kernel/debug/kmemleak
		}
	fi
	echo "ready after: $(cut -d' ' -f1 /proc/uptime) s of guest uptime" >>"$RDIR/boot.info"
	: >"$RDIR/ready"
	say "ready ($(cut -d' ' -f1 /proc/uptime) s)"

	if [ -f "$OUT/cmd.sh" ]; then
		run_cmd
	else
		local name limit script await
		while read -r name limit script await; do
			[ -n "$name" ] || continue
			if [ -n "$await" ] && [ ! -e "$OUT/$await" ]; then
				say "$name: waiting for the host's $await"
				until [ -e "$OUT/$await" ]; do nap 1; done
			fi
			run_scenario "$name" "$limit" "$script" || break
		done <"$OUT/scenarios"
		# Leaks of the whole boot, after the last cleanup.
		if [ "$KMEMLEAK" = boot ] && [ -w /sys/kernel/debug/kmemleak ]; then
			say "kmemleak scan"
			kmemleak_scan >"$RDIR/boot.kmemleak.tmp" 2>&1
			mv "$RDIR/boot.kmemleak.tmp" "$RDIR/boot.kmemleak"
		fi
	fi
	mkdir -p "$OUT/sync"
	: >"$OUT/sync/stopped.$ROLE"
	dmesg >"$RDIR/dmesg.txt"
	: >"$RDIR/alldone"
	say "powering off"
}

main
