#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the sroce VM scenarios (tests/scenarios/*.sh) in QEMU guests and
# report TAP on stdout, ending with one line "N passed, N failed".
#
#   tests/run-scenarios.sh --kernel 6.1|6.12|debug|debug-6.12[,...] [--filter REGEX]
#                          [--out DIR] [--dir DIR] [--list]
#
#   --kernel  kernels to run on (comma-separated names; see scripts/kernels.sh)
#   --filter  only scenarios whose name matches the extended regex
#   --out     directory for consoles, logs and dmesg
#             (default: out/scenarios/DATE-TIME in the repository)
#   --dir     scenario directory (default tests/scenarios)
#   --list    print the selected scenarios and their headers, boot nothing
#   --kmemleak boot|each
#             on a kernel with kmemleak (debug): scan after the last
#             scenario of each boot (default; one test point per boot), or
#             after each scenario (slow: two scans per scenario)
#
#   SROCE_SCENARIO_ENV="NAME=VALUE ..." sets variables for the scenarios
#   (words, no quoting), e.g. SOAK_MINUTES=5.
#
#   SROCE_ALL_KERNELS=1 runs every scenario on every kernel given, whatever
#   its "kernels:" header says (the headers keep "make check" within CI's
#   time; the debug kernel runs the data path about 20 times slower).
#
# Scenarios of one topology share a boot; the guest stops a shared boot as
# soon as the kernel is no longer clean (a splat, a leak, a failed
# cleanup) and the rest run in a fresh one, so every failure is reported
# against the scenario that caused it. Each scenario gets, per VM, its own
# test points plus two from the harness: "completed" (exit status, plan,
# timeout, cleanup) and "kernel log clean" (no WARNING, BUG, Oops, KASAN,
# lockdep, refcount_t, kmemleak... reports while it ran).
#
# Groups run as jobs side by side, each boot holding one of the machine's
# CPU slots per vCPU (SROCE_VM_SLOTS, default nproc + 1; see tests/vm/README.md);
# a long group is split over several boots (SROCE_VM_SPLIT=0: never). Each
# job's output is kept apart and printed in a fixed order.
#
# Exit status: 0 when everything passed, 1 otherwise, 2 on usage errors.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=vm/vm.sh
. "$here/vm/vm.sh"

usage() {
	sed -n '4,26s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2
	exit 2
}

kernels=
filter=
out=
scen_dir=$SROCE_REPO/tests/scenarios
list_only=0
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) kernels=${2:-}; shift 2 || usage ;;
	--kernel=*) kernels=${1#*=}; shift ;;
	--filter) filter=${2:-}; shift 2 || usage ;;
	--filter=*) filter=${1#*=}; shift ;;
	--out) out=${2:-}; shift 2 || usage ;;
	--out=*) out=${1#*=}; shift ;;
	--dir) scen_dir=${2:-}; shift 2 || usage ;;
	--dir=*) scen_dir=${1#*=}; shift ;;
	--list) list_only=1; shift ;;
	--kmemleak) SROCE_KMEMLEAK=${2:-}; shift 2 || usage ;;
	--kmemleak=*) SROCE_KMEMLEAK=${1#*=}; shift ;;
	-h | --help) usage ;;
	*) echo "unknown argument: $1" >&2; usage ;;
	esac
done
[ -n "$kernels" ] || usage
case ${SROCE_KMEMLEAK:=boot} in boot | each) ;; *) usage ;; esac
export SROCE_KMEMLEAK
scen_dir=$(cd "$scen_dir" && pwd) || exit 2
out=${out:-$SROCE_REPO/out/scenarios/$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out" && out=$(cd "$out" && pwd) || exit 2

# ---------------------------------------------------------------------------
# TAP output

n_tests=0
n_pass=0
n_fail=0

tap_emit() { # STATUS(ok|not ok) DESC
	n_tests=$((n_tests + 1))
	echo "$1 $n_tests - $2"
}

tap_ok() {
	tap_emit ok "$1"
	n_pass=$((n_pass + 1))
}

# tap_not_ok DESC [DIAGNOSTIC LINES...]
tap_not_ok() {
	local d=$1 line
	shift
	tap_emit "not ok" "$d"
	n_fail=$((n_fail + 1))
	for line in "$@"; do
		while IFS= read -r l; do echo "#   $l"; done <<<"$line"
	done
	return 0
}

note() { echo "# $*"; }

# ---------------------------------------------------------------------------
# Scenarios

# header FILE KEY: value of "# KEY: value" in the first lines of FILE.
header() {
	head -n 40 "$1" | sed -n "s/^#[[:space:]]*$2:[[:space:]]*//p" | head -n1 | sed 's/[[:space:]]*$//'
}

# kernels_for KERNELS TOPO: the words of a "kernels:" header that apply to
# TOPO: "K" to every topology, "K:TOPO" to that one only; "none" when the
# header names kernels but none for TOPO, nothing for an empty header (all).
kernels_for() {
	local w out=
	for w in $1; do
		case $w in
		*:"$2") out+=" ${w%:*}" ;;
		*:*) ;;
		*) out+=" $w" ;;
		esac
	done
	out=${out# }
	[ -n "$out" ] || [ -z "$1" ] || out=none
	echo "$out"
}

# Scenarios by name. A scenario file whose "topology:" header names
# several topologies runs once in each, as FILE_TOPO (pingpong.sh:
# pingpong_netns and pingpong_twovm).
declare -A s_file s_topo s_kernels s_full s_timeout s_requires s_isolate s_vcpus
names=()
for f in "$scen_dir"/*.sh; do
	[ -f "$f" ] || continue
	topos=$(header "$f" topology)
	[ -n "$topos" ] || continue
	for topo in $topos; do
		name=$(basename "$f" .sh)
		[ "$topos" = "$topo" ] || name+=_$topo
		if [ -n "$filter" ] && ! grep -qE -- "$filter" <<<"$name"; then
			continue
		fi
		names+=("$name")
		s_file[$name]=$f
		s_topo[$name]=$topo
		s_kernels[$name]=$(kernels_for "$(header "$f" kernels)" "$topo")
		s_full[$name]=$(kernels_for "$(header "$f" full-kernels)" "$topo")
		[ "${s_full[$name]}" != none ] || s_full[$name]=
		s_timeout[$name]=$(header "$f" timeout)
		s_requires[$name]=$(header "$f" requires)
		s_isolate[$name]=$(header "$f" isolate)
		s_vcpus[$name]=$(header "$f" vcpus)
	done
done

if [ $list_only = 1 ]; then
	for name in "${names[@]}"; do
		full=${s_full[$name]:--}
		printf '%-20s topology=%s kernels=%s timeout=%s requires=%s isolate=%s vcpus=%s full=%s\n' "$name" \
			"${s_topo[$name]}" "${s_kernels[$name]:-all}" "${s_timeout[$name]:-180}" \
			"${s_requires[$name]:--}" "${s_isolate[$name]:-no}" "${s_vcpus[$name]:-1}" "${full// /,}"
	done
	exit 0
fi

cleanup_exit() {
	vm_kill
	vm_unlock
}
trap cleanup_exit EXIT
trap 'echo "# interrupted" ; exit 130' INT TERM

# ---------------------------------------------------------------------------
# One boot

# Results of the last boot, by "ROLE/NAME": host time the begin/end files
# appeared, and why the VMs were stopped.
declare -A seen_begin seen_end
# Scenarios already run again after a lost link (link_retry), by KNAME/NAME.
declare -A link_retried
n_link_retries=0
kill_reason=
boot_crashed=
boot_hung=
# Seconds the last boot waited for CPU slots before it started.
boot_waited=0
# Host CPU time (clock ticks) of each VM of the last boot, by role, and of
# each VM when each scenario began and ended, by "ROLE/NAME": what a boot
# and a scenario cost the machine, beside their wall time.
declare -A cpu_now cpu_begin cpu_end
# Clock ticks per second of /proc/PID/stat.
cpu_hz=$(getconf CLK_TCK)

# vm_cpu_sample ROLES...: the QEMU processes' user and system time so far.
vm_cpu_sample() {
	local i=0 r f
	for r in "$@"; do
		if read -r -a f 2>/dev/null <"/proc/${VM_PIDS[$i]}/stat"; then
			cpu_now[$r]=$((f[13] + f[14]))
		fi
		i=$((i + 1))
	done
}
# What marks a kernel report on a console.
BOOT_REPORT_RE='(BUG:|Kernel panic|general protection fault)'

# limit NAME: the scenario's timeout in seconds on this kernel.
limit() { echo $((${s_timeout[$1]:-180} * VM_SLOW)); }

# link_host_state BOOTDIR: for each NAME.link a guest wrote (guest.sh: its
# peer did not answer on the link), the host's side of the link, read
# while both QEMUs still run, into NAME.link.host; the guest waits for it.
link_host_state() {
	local f
	for f in "$1"/[ab]/*.link; do
		{ [ -e "$f" ] && [ ! -e "$f.host" ]; } || continue
		vm_link_state "$1" >"$f.host.tmp" 2>&1
		mv "$f.host.tmp" "$f.host"
	done
}

# run_boot BOOTDIR TOPO NAME...: boot the topology's VMs and run the
# scenarios; returns when every VM has exited or was killed.
run_boot() {
	local bootdir=$1 topo=$2
	shift 2
	local -a list=("$@") roles=(a)
	local r name cur deadline now t0 ready_note="" last_end dead i
	local grace=$((${SROCE_VM_GRACE:-90} * VM_SLOW)) between=$((120 * VM_SLOW)) boot_limit=$((200 * VM_SLOW))
	# A booting kernel writes to its console every few seconds (at most
	# 20 s apart on the debug kernel, beside busy guests). One that went
	# silent before "ready" had hung in the emulator or in early boot,
	# before sroce was loaded; run_group boots it once more.
	local silent_limit=$((30 * VM_SLOW)) size
	[ "$silent_limit" -ge 60 ] || silent_limit=60
	declare -A ready=() done_r=() con_size=() con_at=()

	[ "$topo" = twovm ] && roles=(a b)
	# A group shares one vCPU count (run_kernel groups by it); vm_start
	# reads it.
	# shellcheck disable=SC2034
	VM_SMP=${s_vcpus[${list[0]}]:-1}
	# A boot directory left by an earlier run into the same --out would
	# hand this one its rendezvous files (a barrier passed before the
	# peer came) and its results.
	rm -rf "$bootdir"
	mkdir -p "$bootdir/sync"
	# Settings for the scenarios, "NAME=VALUE" words (e.g. the soak's
	# length); the guest exports them.
	# shellcheck disable=SC2086 # words
	printf '%s\n' ${SROCE_SCENARIO_ENV:-} >"$bootdir/env"
	# The sroce-dkms package, installed into an overlay of the host's
	# root, for the scenarios that need it: made once per package, then
	# reused. It is made beside the boot (check.sh started it before the
	# first guests), and those scenarios run last, each waiting for it.
	local pkg_pid='' deb_last=()
	rm -f "$bootdir/package.rc"
	for name in "${list[@]}"; do
		[[ " ${s_requires[$name]} " == *" deb "* ]] || continue
		if [ -z "$pkg_pid" ]; then
			(
				timeout 1800 "$SROCE_REPO/tests/package/dkms-root.sh" "$SROCE_REPO/out/package" \
					>"$bootdir/package.log" 2>&1
				echo $? >"$bootdir/package.rc"
			) &
			pkg_pid=$!
		fi
		deb_last+=("$name")
	done
	if [ ${#deb_last[@]} -gt 0 ]; then
		local -a rest=()
		for name in "${list[@]}"; do
			[[ " ${deb_last[*]} " == *" $name "* ]] || rest+=("$name")
		done
		list=("${rest[@]}" "${deb_last[@]}")
	fi
	for name in "${list[@]}"; do
		if [[ " ${deb_last[*]} " == *" $name "* ]]; then
			echo "$name $(limit "$name") ${s_file[$name]} package.rc"
		else
			echo "$name $(limit "$name") ${s_file[$name]}"
		fi
	done >"$bootdir/scenarios"
	seen_begin=() seen_end=() kill_reason='' boot_crashed='' boot_hung=''
	cpu_now=() cpu_begin=() cpu_end=()

	# The boot's cost leaves out the wait for CPU slots (boot_waited).
	t0=$SECONDS
	# The slots the planner counted for this boot (vm_topo_slots), also
	# against other runners: a lock that took more than the plan left
	# the plan's free slot idle until this boot ended.
	vm_lock "$(vm_topo_slots "$topo")"
	boot_waited=$((SECONDS - t0))
	t0=$SECONDS
	local t0r=$EPOCHREALTIME
	# Staged now, from what build/ holds at this moment.
	if ! vm_stage_modules 2>"$bootdir/stage.err"; then
		kill_reason="staging the modules of $SROCE_REPO/build/$VM_KVER failed: $(cat "$bootdir/stage.err")"
		vm_unlock
		return
	fi
	for name in "${list[@]}"; do
		[[ " ${s_requires[$name]} " == *" sroce "* ]] || continue
		[ -f "${VM_MODSTAGE:-/nonexistent}/lib/modules/$VM_KVER/extra/sroce.ko" ] ||
			note "$VM_KNAME: no sroce.ko in $SROCE_REPO/build/$VM_KVER/ at boot time (being rebuilt?)"
		break
	done
	if ! vm_start_topo "$bootdir" "$topo"; then
		kill_reason="QEMU did not start"
		vm_kill
		vm_unlock
		return
	fi
	while vm_alive; do
		sleep 0.5
		now=$SECONDS
		vm_cpu_sample "${roles[@]}"
		[ "$topo" = twovm ] && link_host_state "$bootdir"
		for r in "${roles[@]}"; do
			if [ -z "${ready[$r]:-}" ] && [ -e "$bootdir/$r/ready" ]; then
				ready[$r]=1
				ready_note+=" $r: $(awk -v a="$t0r" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') s"
			fi
			[ -e "$bootdir/$r/alldone" ] && done_r[$r]=1
			# Before "ready" no scenario has loaded sroce: a kernel
			# report then is the kernel's or the emulator's.
			if [ -z "${ready[$r]:-}" ] && [ -z "$kill_reason" ] &&
			   grep -qsE -m1 "$BOOT_REPORT_RE" "$bootdir/console-$r.log"; then
				kill_reason="VM $r: kernel report while booting, before sroce was loaded"
				boot_crashed=1
			fi
			if [ -z "${ready[$r]:-}" ] && [ -z "$kill_reason" ]; then
				size=$(stat -c %s "$bootdir/console-$r.log" 2>/dev/null || echo 0)
				if [ "$size" != "${con_size[$r]:-}" ]; then
					con_size[$r]=$size con_at[$r]=$now
				elif [ $((now - con_at[$r])) -gt "$silent_limit" ]; then
					kill_reason="VM $r: console silent for ${silent_limit} s before ready"
					boot_hung=1
				fi
			fi
			cur=
			last_end=
			for name in "${list[@]}"; do
				if [ -z "${seen_begin[$r/$name]:-}" ] && [ -e "$bootdir/$r/$name.begin" ]; then
					seen_begin[$r/$name]=$now
					cpu_begin[$r/$name]=${cpu_now[$r]:-0}
				fi
				if [ -z "${seen_end[$r/$name]:-}" ] && [ -e "$bootdir/$r/$name.end" ]; then
					seen_end[$r/$name]=$now
					cpu_end[$r/$name]=${cpu_now[$r]:-0}
				fi
				if [ -n "${seen_begin[$r/$name]:-}" ] && [ -z "${seen_end[$r/$name]:-}" ]; then
					cur=$name
				fi
				[ -n "${seen_end[$r/$name]:-}" ] && last_end=${seen_end[$r/$name]}
			done
			[ -n "${done_r[$r]:-}" ] && continue
			# A ready guest may wait for the package (no deadline
			# of ours: dkms-root.sh ends, and writes package.rc).
			if [ -n "${ready[$r]:-}" ] && [ -n "$pkg_pid" ] && [ ! -e "$bootdir/package.rc" ]; then
				[ -n "$last_end" ] && last_end=$now
				[ -n "$cur" ] || continue
			fi
			if [ -n "$cur" ]; then
				deadline=$((seen_begin[$r/$cur] + $(limit "$cur") + grace))
				if [ "$now" -gt "$deadline" ]; then
					kill_reason="VM $r: $cur timed out (limit $(limit "$cur") s + ${grace} s for cleanup)"
				fi
			elif [ -n "$last_end" ]; then
				[ "$now" -gt $((last_end + between)) ] &&
					kill_reason="VM $r: no progress for ${between} s after a scenario ended"
			elif [ "$now" -gt $((t0 + boot_limit)) ]; then
				kill_reason="VM $r: not ready ${boot_limit} s after boot"
				boot_hung=1
			fi
		done
		# A VM that exited without finishing its job crashed; its peer
		# would only wait for it.
		if [ -z "$kill_reason" ] && [ "$(vm_alive_count)" -lt ${#roles[@]} ]; then
			# VM_PIDS is in role order. A VM that finished its job
			# may power off while its peer still cleans up.
			dead=
			i=0
			for r in "${roles[@]}"; do
				kill -0 "${VM_PIDS[$i]}" 2>/dev/null ||
					[ -e "$bootdir/$r/alldone" ] || dead+=" $r"
				i=$((i + 1))
			done
			if [ -n "$dead" ] && [ "$(vm_alive_count)" -gt 0 ]; then
				sleep 2
				for r in $dead; do
					[ -e "$bootdir/$r/alldone" ] || kill_reason="VM $r exited before finishing (panic or crash?)"
				done
			fi
		fi
		[ -d "$bootdir" ] || kill_reason="$bootdir vanished"
		if [ -n "$kill_reason" ]; then
			vm_kill
			break
		fi
	done
	vm_kill
	vm_unlock
	if [ -n "$pkg_pid" ]; then
		wait "$pkg_pid"
		[ "$(cat "$bootdir/package.rc" 2>/dev/null)" = 0 ] ||
			note "$VM_KNAME: installing the sroce-dkms package into an overlay root failed: $(tail -n 3 "$bootdir/package.log")"
	fi
	[ -n "$ready_note" ] && note "$VM_KNAME: $topo boot ready in${ready_note}, whole boot $((SECONDS - t0)) s"
}

# ---------------------------------------------------------------------------
# Reporting

# report_tap FILE PREFIX: re-emit a scenario's TAP; sets tap_planned,
# tap_ran and tap_bail.
report_tap() {
	local file=$1 prefix=$2 line desc
	tap_planned="" tap_ran=0 tap_bail=""
	[ -f "$file" ] || return 0
	while IFS= read -r line || [ -n "$line" ]; do
		if [[ $line =~ ^(not\ )?ok([[:space:]]+[0-9]+)?([[:space:]]+-)?[[:space:]]*(.*)$ ]]; then
			desc=${BASH_REMATCH[4]}
			tap_ran=$((tap_ran + 1))
			if [ -z "${BASH_REMATCH[1]}" ]; then
				tap_ok "$prefix$desc"
			elif [[ $desc =~ \#[[:space:]]*TODO ]]; then
				tap_emit "not ok" "$prefix$desc"
				n_pass=$((n_pass + 1))
			else
				tap_emit "not ok" "$prefix$desc"
				n_fail=$((n_fail + 1))
			fi
		elif [[ $line =~ ^1\.\.([0-9]+) ]]; then
			tap_planned=${BASH_REMATCH[1]}
		elif [[ $line =~ ^Bail\ out!(.*)$ ]]; then
			tap_bail=${BASH_REMATCH[1]# }
			echo "# Bail out! $tap_bail"
		elif [[ $line =~ ^# ]]; then
			echo "$line"
		elif [ -n "$line" ]; then
			echo "# | $line"
		fi
	done <"$file"
}

# console_since CONSOLE NAME: the console lines from the scenario's begin.
console_since() {
	awk -v m="srocevm: begin $2" 'index($0, m) { buf = "" } { buf = buf $0 "\n" } END { printf "%s", buf }' "$1"
}

# cpu_note ROLE/NAME: ", N CPU-s" the VM spent on the scenario, if known.
cpu_note() {
	[ -n "${cpu_end[$1]:-}" ] || return 0
	echo ", $(((cpu_end[$1] - cpu_begin[$1]) / cpu_hz)) CPU-s"
}

# report_scenario KNAME NAME BOOTDIR TOPO
report_scenario() {
	local k=$1 name=$2 bootdir=$3 topo=$4 r prefix base end rc cleanup why splats leaks took
	local -a roles=(a) problems
	local failed=0 longest=0
	[ "$topo" = twovm ] && roles=(a b)

	for r in "${roles[@]}"; do
		prefix="$k/$name/"
		[ "$topo" = twovm ] && prefix="$k/$name/$r: "
		base=$bootdir/$r/$name
		problems=()
		report_tap "$base.tap" "$prefix"

		if [ ! -e "$base.begin" ]; then
			problems+=("did not start in VM $r (its setup failed or the peer stopped)")
		elif [ ! -e "$base.end" ]; then
			problems+=("did not finish: ${kill_reason:-VM $r exited during it (panic or crash?)}")
			problems+=("last console lines of VM $r:" "$(console_since "$bootdir/console-$r.log" "$name" | tail -n 15)")
		else
			end=$(cat "$base.end")
			rc=${end#rc=}
			rc=${rc%% *}
			cleanup=${end#* cleanup=}
			case $rc in
			0) ;;
			124 | 137) problems+=("timed out after $(limit "$name") s") ;;
			setup) problems+=("topology setup failed (see $base.log)") ;;
			*) problems+=("exit status $rc") ;;
			esac
			[ "$cleanup" = ok ] || problems+=("cleanup after the scenario: $cleanup")
			[ -s "$base.link" ] &&
				problems+=("after it the link carried nothing:" "$(cat "$base.link")"
					"the host's side of the link then:" "$(cat "$base.link.host" 2>/dev/null)")
			took=$(($(stat -c %Y "$base.end") - $(stat -c %Y "$base.begin")))
			note "$prefix took $took s$(cpu_note "$r/$name")"
			[ "$took" -gt "$longest" ] && longest=$took
		fi
		[ -n "$tap_bail" ] && problems+=("bailed out: $tap_bail")
		if [ -e "$base.begin" ] && [ -z "$tap_planned" ]; then
			problems+=("no TAP plan (ran $tap_ran tests)")
		elif [ -n "$tap_planned" ] && [ "$tap_planned" != "$tap_ran" ]; then
			problems+=("planned $tap_planned tests, ran $tap_ran")
		fi
		if [ ${#problems[@]} -eq 0 ]; then
			tap_ok "${prefix}completed"
		else
			tap_not_ok "${prefix}completed" "${problems[@]}"
			failed=1
		fi

		# The kernel log while it ran: the guest's slice, or the console
		# when the guest died before writing one.
		splats=
		leaks=
		if [ -f "$base.dmesg" ]; then
			splats=$(vm_splat_grep "$base.dmesg" | head -n 40)
		elif [ -e "$base.begin" ]; then
			splats=$(console_since "$bootdir/console-$r.log" "$name" | vm_splat_grep - | head -n 40)
		fi
		[ -s "$base.kmemleak" ] && leaks=$(head -n 40 "$base.kmemleak")
		if [ -z "$splats$leaks" ]; then
			tap_ok "${prefix}kernel log clean"
		else
			why=()
			[ -n "$splats" ] && why+=("kernel log while it ran:" "$splats")
			[ -n "$leaks" ] && why+=("kmemleak:" "$leaks")
			tap_not_ok "${prefix}kernel log clean" "${why[@]}"
			failed=1
		fi
		if [ $failed = 1 ]; then
			note "logs: $base.{tap,log,dmesg} console: $bootdir/console-$r.log"
		fi
	done
	# The planner's estimate for the next run (a scenario that ran out
	# of time says nothing about how long it takes).
	scen_secs=$((scen_secs + longest))
	[ $failed = 0 ] && [ "$longest" -gt 0 ] && echo "$k $name $longest" >>"$rundir/times"
	return 0
}

# report_boot_kmemleak KNAME BOOTDIR TOPO: the leaks found at the end of a
# boot (kmemleak=boot), one test point per VM, naming the scenarios run.
report_boot_kmemleak() {
	local k=$1 bootdir=$2 topo=$3 r ran name vm
	for r in a b; do
		[ -f "$bootdir/$r/boot.kmemleak" ] || continue
		vm=
		[ "$topo" = twovm ] && vm=" (VM $r)"
		ran=
		while read -r name _; do
			[ -e "$bootdir/$r/$name.begin" ] && ran+=" $name"
		done <"$bootdir/scenarios"
		if [ -s "$bootdir/$r/boot.kmemleak" ]; then
			tap_not_ok "$k/kmemleak after${ran}$vm" \
				"kmemleak reports after these scenarios ran in one boot (isolate with --filter NAME --kmemleak each):" \
				"$(head -n 60 "$bootdir/$r/boot.kmemleak")"
			note "logs: $bootdir/$r/boot.kmemleak"
		else
			tap_ok "$k/kmemleak after${ran}$vm"
		fi
	done
}

# fail_scenario KNAME NAME TOPO MESSAGE...: report a scenario that could
# not run at all.
fail_scenario() {
	local k=$1 name=$2 topo=$3 r
	shift 3
	if [ "$topo" = twovm ]; then
		for r in a b; do tap_not_ok "$k/$name/$r: completed" "$@"; done
	else
		tap_not_ok "$k/$name/completed" "$@"
	fi
}

# run_group KNAME TOPO NAME...: run scenarios in as few boots as a clean
# kernel allows. They share one vCPU count. Boots are numbered
# $group_id, then $group_id.2, ...
run_group() {
	local k=$1 topo=$2 name bootdir started r reboots=0 smp what boot_n=0 boot_id
	shift 2
	local -a pending=("$@") rest retry

	smp=${s_vcpus[$1]:-1}
	what=$topo
	[ "$smp" = 1 ] || what+=", $smp vCPUs"
	while [ ${#pending[@]} -gt 0 ]; do
		boot_n=$((boot_n + 1))
		boot_id=$group_id
		[ $boot_n = 1 ] || boot_id+=.$boot_n
		bootdir=$out/$k/$(printf '%02d' "$group_id")
		[ $boot_n = 1 ] || bootdir+=.$boot_n
		bootdir+=-$topo
		[ "$smp" = 1 ] || bootdir+=-smp$smp
		note "$k: boot $boot_id ($what): ${pending[*]}"
		local t0=$SECONDS at=$((EPOCHSECONDS - run_t0))
		scen_secs=0 boot_waited=0
		run_boot "$bootdir" "$topo" "${pending[@]}"
		t0=$((t0 + boot_waited)) at=$((at + boot_waited))
		local cpu=0 r
		for r in "${!cpu_now[@]}"; do cpu=$((cpu + cpu_now[$r])); done
		note "$k: boot $boot_id took $((SECONDS - t0)) s, started at +$at s"
		note "$k: boot $boot_id used $((cpu / cpu_hz)) CPU-s of $(((SECONDS - t0) * smp * ${#cpu_now[@]})) slot-s"
		[ -n "$kill_reason" ] && note "$k: boot $boot_id stopped: $kill_reason"
		grep -h FAILED "$bootdir"/[ab]/boot.info 2>/dev/null | while read -r line; do
			note "$k: boot $boot_id: $line"
		done
		rest=() retry=()
		started=0
		for name in "${pending[@]}"; do
			local any=0
			for r in a b; do
				[ -e "$bootdir/$r/$name.begin" ] && any=1
			done
			if [ $any = 1 ]; then
				started=1
				if link_retry "$k" "$name" "$bootdir" "$topo"; then
					retry+=("$name")
					continue
				fi
				report_scenario "$k" "$name" "$bootdir" "$topo"
			else
				rest+=("$name")
			fi
		done
		report_boot_kmemleak "$k" "$bootdir" "$topo"
		# What the boot cost beyond its scenarios, for the planner.
		[ -z "$kill_reason" ] && [ $started = 1 ] &&
			echo "$k @boot-$topo $((SECONDS - t0 - scen_secs))" >>"$rundir/times"
		if [ $started = 0 ] && [ -n "$boot_crashed$boot_hung" ] && [ $reboots = 0 ]; then
			reboots=1
			note "$k: boot $boot_id: the kernel failed before any scenario ran; booting once more"
			if [ -n "$boot_crashed" ]; then
				grep -h -m1 -E -A12 "$BOOT_REPORT_RE" "$bootdir"/console-*.log
			else
				tail -n 5 "$bootdir"/console-*.log
			fi | sed 's/^/#   /'
			continue
		fi
		if [ $started = 0 ]; then
			for name in "${pending[@]}"; do
				fail_scenario "$k" "$name" "$topo" \
					"no scenario started: ${kill_reason:-the VM did not get ready}" \
					"console: $bootdir/console-*.log" \
					"$(tail -n 20 "$bootdir"/console-a.log 2>/dev/null)"
			done
			return
		fi
		pending=("${retry[@]}" "${rest[@]}")
	done
}

# link_retry KNAME NAME BOOTDIR TOPO: true when the scenario is to run once
# more in a fresh boot, its result here set aside: it failed with the link
# between the VMs gone (a VM wrote NAME.link, tests/vm/guest.sh), both
# VMs finished it with a clean kernel log, and it has not been retried
# before. The link's
# stalls are QEMU's (tests/vm/vm.sh); a second loss is reported as a
# failure, and every retry is counted and named in the output.
link_retry() {
	local k=$1 name=$2 bootdir=$3 topo=$4 r lost=
	[ "$topo" = twovm ] || return 1
	[ -z "${link_retried[$k/$name]:-}" ] || return 1
	for r in a b; do
		[ -s "$bootdir/$r/$name.link" ] && lost+=" $r"
		# Both VMs finished it (a VM that died is no lost link) with a
		# clean kernel log.
		[ -e "$bootdir/$r/$name.end" ] || return 1
		[ -n "$(vm_splat_grep "$bootdir/$r/$name.dmesg")" ] && return 1
	done
	[ -n "$lost" ] || return 1
	link_retried[$k/$name]=1
	n_link_retries=$((n_link_retries + 1))
	note "$k/$name: the link between the VMs stopped carrying frames (seen by VM${lost});" \
		"its result is set aside and it runs once more in a fresh boot"
	for r in a b; do
		[ -f "$bootdir/$r/$name.tap" ] &&
			grep -E '^not ok' "$bootdir/$r/$name.tap" | head -n 5 | sed "s/^/#   first run, VM $r: /"
		[ -s "$bootdir/$r/$name.link" ] && sed "s/^/#   VM $r: /" "$bootdir/$r/$name.link"
		[ -s "$bootdir/$r/$name.link.host" ] &&
			sed "s/^/#   host, after VM $r's report: /" "$bootdir/$r/$name.link.host"
	done
	return 0
}

# ---------------------------------------------------------------------------
# Planning: jobs, their CPU slots and their expected times

# Kernel facts from vm_kernel/vm_initramfs, by kernel name.
declare -A k_kver k_image k_modroot k_mem k_slow k_initrd k_nice
# Groups of scenarios that may share boots: kernel, topology, scenarios.
grp_n=0
declare -a grp_k grp_topo grp_names
# Jobs: a group or a part of one, run in boots of its own: kernel,
# topology, scenarios, CPU slots, expected seconds, output segment.
job_n=0
declare -a job_k job_topo job_names job_slots job_est job_seg
# Output segments, printed in this order; a finished one has FILE.counts
# ("PASSED FAILED").
declare -a seg_file
# Expected seconds, by "KNAME NAME" (NAME @boot-TOPO: a boot's own cost).
declare -A est_tab

# est_load: what earlier runs measured: the committed table for this
# machine kind, then this machine's latest runs.
est_load() {
	local f k n t
	for f in "$SROCE_VM_DIR/times" "${SROCE_VM_TIMES:-$SROCE_CACHE/scenario-times}"; do
		[ -r "$f" ] || continue
		while read -r k n t; do
			[[ $k == \#* ]] && continue
			[[ ${t:-} =~ ^[0-9]+$ ]] && est_tab[$k $n]=$t
		done <"$f"
	done
}

# est KNAME NAME: expected seconds; without a measurement, a quarter of
# the scenario's timeout.
est() {
	local t=${est_tab[$1 $2]:-}
	if [ -z "$t" ]; then
		case $2 in
		@boot-*) t=$((30 * ${k_slow[$1]:-1})) ;;
		*) t=$((${s_timeout[$2]:-180} * ${k_slow[$1]:-1} / 4)) ;;
		esac
	fi
	echo "$t"
}

# est_save: merge this run's times into the cache.
est_save() {
	local f=${SROCE_VM_TIMES:-$SROCE_CACHE/scenario-times} k n t
	local -A tab=()
	[ -s "$rundir/times" ] || return 0
	if [ -r "$f" ]; then
		while read -r k n t; do tab[$k $n]=$t; done <"$f"
	fi
	while read -r k n t; do tab[$k $n]=$t; done <"$rundir/times"
	mkdir -p "$(dirname "$f")" 2>/dev/null || return 0
	for k in "${!tab[@]}"; do echo "$k ${tab[$k]}"; done | LC_ALL=C sort >"$f.$$" &&
		mv "$f.$$" "$f"
}

# plan_kernel KNAME: report (into the kernel's own segment) what cannot
# run, and collect one group per topology and vCPU count, and one per
# isolated scenario.
plan_kernel() {
	local k=$1 name topo ko req why key
	local -a isolated=() keys=()
	local -A group=()

	seg_file+=("$rundir/pre-$k")
	n_tests=0 n_pass=0 n_fail=0
	exec {seg_fd}>&1 >"$rundir/pre-$k"
	if ! vm_kernel "$k" 2>"$out/$k.err" || ! vm_initramfs 2>>"$out/$k.err"; then
		for name in "${names[@]}"; do
			fail_scenario "$k" "$name" "${s_topo[$name]}" "cannot boot kernel $k:" "$(cat "$out/$k.err")"
		done
	else
		cat "$out/$k.err" >&2
		mkdir -p "$out/$k"
		k_kver[$k]=$VM_KVER k_image[$k]=$VM_IMAGE k_modroot[$k]=$VM_MODROOT
		k_mem[$k]=$VM_MEM k_slow[$k]=$VM_SLOW k_initrd[$k]=$VM_INITRD
		k_nice[$k]=$VM_NICE
		note "$k: kernel $VM_KVER ($VM_IMAGE), modules from $SROCE_REPO/build/$VM_KVER/"
		for name in "${names[@]}"; do
			if [ -n "${s_kernels[$name]}" ] && [ "${SROCE_ALL_KERNELS:-0}" != 1 ] &&
				[[ " ${s_kernels[$name]} " != *" $k "* ]]; then
				tap_ok "$k/$name # SKIP not for this kernel (kernels: ${s_kernels[$name]})"
				continue
			fi
			why=
			for req in ${s_requires[$name]}; do
				# The package layer is made at boot (run_boot).
				[ "$req" = deb ] && continue
				ko=$SROCE_REPO/build/$VM_KVER/$req.ko
				[ -f "$ko" ] || why+="$req.ko not built: $ko does not exist (run 'make kmods'). "
			done
			if [ -n "$why" ]; then
				fail_scenario "$k" "$name" "${s_topo[$name]}" "$why"
				continue
			fi
			topo=${s_topo[$name]}
			case $topo in
			netns | twovm) ;;
			*)
				fail_scenario "$k" "$name" netns "unknown topology '$topo' in ${s_file[$name]}"
				continue
				;;
			esac
			if ! [[ ${s_vcpus[$name]:-1} =~ ^[1-9][0-9]*$ ]]; then
				fail_scenario "$k" "$name" "$topo" "bad 'vcpus: ${s_vcpus[$name]}' in ${s_file[$name]}"
				continue
			fi
			if [ "${s_isolate[$name]}" = yes ]; then
				isolated+=("$name")
				continue
			fi
			key="$topo ${s_vcpus[$name]:-1}"
			[ -n "${group[$key]:-}" ] || keys+=("$key")
			group[$key]+=" $name"
		done
	fi
	exec >&"$seg_fd" {seg_fd}>&-
	echo "$n_pass $n_fail" >"$rundir/pre-$k.counts"

	[ ${#keys[@]} -gt 0 ] && mapfile -t keys < <(printf '%s\n' "${keys[@]}" | sort -k1,1 -k2,2n)
	for key in "${keys[@]}"; do
		grp_k[grp_n]=$k grp_topo[grp_n]=${key%% *} grp_names[grp_n]=${group[$key]# }
		grp_n=$((grp_n + 1))
	done
	for name in "${isolated[@]}"; do
		grp_k[grp_n]=$k grp_topo[grp_n]=${s_topo[$name]} grp_names[grp_n]=$name
		grp_n=$((grp_n + 1))
	done
	# The kernel's groups follow its own segment.
	seg_file+=("@$k")
}

# plan_jobs: turn the groups into jobs. A group that would run longer
# than the whole run ideally takes (all groups' slot-seconds spread over
# the slots) and that leaves slots free beside it is split into parts of
# about that length, never more parts than slots, balanced by expected
# time (largest first onto the lightest part); each part boots on its
# own and runs beside the others. Jobs and their segments keep the
# groups' order, so the output does not depend on the split.
plan_jobs() {
	local g c n name work=0 ideal longest boot parts target t best slots
	local -a list load segs=()
	local -A part_of

	for ((g = 0; g < grp_n; g++)); do
		slots=$(VM_SMP=${s_vcpus[${grp_names[g]%% *}]:-1} vm_topo_slots "${grp_topo[g]}")
		t=$(est "${grp_k[g]}" "@boot-${grp_topo[g]}")
		for name in ${grp_names[g]}; do t=$((t + $(est "${grp_k[g]}" "$name"))); done
		work=$((work + slots * t))
	done
	ideal=$((work / SROCE_VM_SLOTS))

	for ((g = 0; g < grp_n; g++)); do
		# shellcheck disable=SC2206 # names are words
		list=(${grp_names[g]})
		slots=$(VM_SMP=${s_vcpus[${list[0]}]:-1} vm_topo_slots "${grp_topo[g]}")
		boot=$(est "${grp_k[g]}" "@boot-${grp_topo[g]}")
		t=0
		longest=0
		for name in "${list[@]}"; do
			c=$(est "${grp_k[g]}" "$name")
			t=$((t + c))
			[ "$c" -gt "$longest" ] && longest=$c
		done
		parts=1
		if [ "$slots" -lt "$SROCE_VM_SLOTS" ] && [ ${#list[@]} -gt 1 ] &&
			[ "${SROCE_VM_SPLIT:-1}" != 0 ]; then
			target=$ideal
			[ "$target" -gt $((longest + boot)) ] || target=$((longest + boot))
			parts=$(((t + boot + target - 1) / target))
			[ "$parts" -le ${#list[@]} ] || parts=${#list[@]}
			[ "$parts" -le $((SROCE_VM_SLOTS / slots)) ] || parts=$((SROCE_VM_SLOTS / slots))
		fi
		load=()
		part_of=()
		for ((c = 0; c < parts; c++)); do load[c]=0; done
		while read -r t name; do
			best=0
			for ((c = 1; c < parts; c++)); do
				[ "${load[c]}" -lt "${load[best]}" ] && best=$c
			done
			part_of[$name]=$best
			load[best]=$((load[best] + t))
		done < <(for name in "${list[@]}"; do echo "$(est "${grp_k[g]}" "$name") $name"; done |
			sort -k1,1nr -k2,2)
		for ((c = 0; c < parts; c++)); do
			n=$job_n
			job_k[n]=${grp_k[g]} job_topo[n]=${grp_topo[g]} job_slots[n]=$slots
			job_est[n]=$((load[c] + boot))
			job_names[n]=
			for name in "${list[@]}"; do
				[ "${part_of[$name]}" = "$c" ] && job_names[n]+=" $name"
			done
			job_names[n]=${job_names[n]# }
			job_n=$((job_n + 1))
		done
	done

	# Segments: each kernel's own, then its jobs'.
	for c in "${seg_file[@]}"; do
		if [[ $c == @* ]]; then
			for ((n = 0; n < job_n; n++)); do
				[ "${job_k[n]}" = "${c#@}" ] || continue
				job_seg[n]=${#segs[@]}
				segs+=("$rundir/job-$(printf '%02d' $((n + 1)))")
			done
		else
			segs+=("$c")
		fi
	done
	seg_file=("${segs[@]}")
}

# ---------------------------------------------------------------------------
# Running the jobs side by side

# start_job N: run job N in the background, its TAP into its segment.
# Its boots are numbered N+1 (then N+1.2 ...).
start_job() {
	local n=$1
	(
		trap cleanup_exit EXIT
		trap 'exit 130' INT TERM
		VM_KNAME=${job_k[n]} VM_KVER=${k_kver[${job_k[n]}]} VM_IMAGE=${k_image[${job_k[n]}]}
		VM_MODROOT=${k_modroot[${job_k[n]}]} VM_MEM=${k_mem[${job_k[n]}]}
		VM_SLOW=${k_slow[${job_k[n]}]} VM_INITRD=${k_initrd[${job_k[n]}]}
		VM_NICE=${k_nice[${job_k[n]}]}
		# A pair's guests wait for each other: every exchange needs both
		# on a CPU at once. Beside busy guests a pair ran 2.4 times slower
		# than alone while it used under one CPU, so its QEMUs run before
		# the single guests, which are only slowed by what the pair uses.
		[ "${job_topo[n]}" != twovm ] || [ "$VM_NICE" -le -5 ] || VM_NICE=-5
		group_id=$((n + 1))
		n_tests=0 n_pass=0 n_fail=0 n_link_retries=0
		# shellcheck disable=SC2086 # names are words
		run_group "${job_k[n]}" "${job_topo[n]}" ${job_names[n]}
		echo "$n_pass $n_fail $n_link_retries" >"${seg_file[job_seg[n]]}.counts"
	) >"${seg_file[job_seg[n]]}" &
	job_pid[n]=$!
	job_start[n]=$SECONDS
}

# print_ready: print, in order, the segments not printed yet up to the
# first unfinished one, numbering their test points.
printed=0
total_tests=0
total_pass=0
total_fail=0
total_link_retries=0
print_ready() {
	local f line p q r
	while [ "$printed" -lt ${#seg_file[@]} ]; do
		f=${seg_file[printed]}
		[ -e "$f.counts" ] || return 0
		while IFS= read -r line || [ -n "$line" ]; do
			if [[ $line =~ ^(not\ )?ok\ [0-9]+\ -\ (.*)$ ]]; then
				total_tests=$((total_tests + 1))
				echo "${BASH_REMATCH[1]}ok $total_tests - ${BASH_REMATCH[2]}"
			else
				echo "$line"
			fi
		done <"$f"
		read -r p q r <"$f.counts"
		total_pass=$((total_pass + p))
		total_fail=$((total_fail + q))
		total_link_retries=$((total_link_retries + ${r:-0}))
		printed=$((printed + 1))
	done
}

# run_jobs: start the jobs, the most expected slot-seconds first (then the
# longest: a single guest's job that went first only for being a minute
# longer than a pair's left a slot idle), whenever enough slots are free:
# of this run's (SROCE_VM_SLOTS) and of the machine's, which other runners
# and builds may hold (vm_lock then takes them). A job that does not fit
# may be overtaken only by one expected to end before the slots it waits
# for come free.
declare -a job_pid job_start
# head_shadow JOB: when JOB, which cannot start now, is expected to, as
# running jobs end by their estimates, and how many of the slots free then
# it leaves over: "TIME EXTRA". Never known while slots it needs are held
# by other runners (a far TIME, no extra).
head_shadow() {
	local head=$1 have=$free t s
	if [ "$have" -lt "${job_slots[head]}" ]; then
		while read -r t s; do
			have=$((have + s))
			if [ "$have" -ge "${job_slots[head]}" ]; then
				[ "$t" -ge "$SECONDS" ] || t=$SECONDS
				echo "$t $((have - job_slots[head]))"
				return
			fi
		done < <(for n in "${running[@]}"; do
			echo "$((job_start[n] + job_est[n])) ${job_slots[n]}"
		done | sort -n)
	fi
	echo "$((SECONDS + 1000000)) 0"
}

run_jobs() {
	local free n m head t_free extra avail
	local -a order running=() pending still rest
	mapfile -t order < <(for ((n = 0; n < job_n; n++)); do
		echo "$((job_est[n] * job_slots[n])) ${job_est[n]} $n"
	done | sort -k1,1nr -k2,2nr -k3,3n | cut -d' ' -f3)
	pending=("${order[@]}")
	free=$SROCE_VM_SLOTS
	while [ ${#pending[@]} -gt 0 ] || [ ${#running[@]} -gt 0 ]; do
		avail=$free
		if [ ${#pending[@]} -gt 0 ]; then
			n=$(vm_slots_free)
			[ "$n" -lt "$avail" ] && avail=$n
			# Nothing running and nothing free: wait in vm_lock.
			[ ${#running[@]} -eq 0 ] && [ "$avail" -eq 0 ] && avail=$free
		fi
		while [ ${#pending[@]} -gt 0 ]; do
			head=${pending[0]}
			if [ "${job_slots[head]}" -le "$avail" ]; then
				m=$head
			else
				# Backfill: another job may start now if it ends
				# before the head can start, or fits in the slots
				# the head will leave over then (head_shadow).
				read -r t_free extra < <(head_shadow "$head")
				m=
				for n in "${pending[@]:1}"; do
					if [ "${job_slots[n]}" -le "$avail" ] &&
						{ [ $((SECONDS + job_est[n])) -le "$t_free" ] ||
							[ "${job_slots[n]}" -le "$extra" ]; }; then
						m=$n
						break
					fi
				done
				# Nothing of ours runs: queue in vm_lock.
				[ -z "$m" ] && [ ${#running[@]} -eq 0 ] && m=$head
			fi
			[ -n "$m" ] || break
			start_job "$m"
			free=$((free - job_slots[m]))
			avail=$((avail - job_slots[m]))
			running+=("$m")
			rest=()
			for n in "${pending[@]}"; do [ "$n" = "$m" ] || rest+=("$n"); done
			pending=("${rest[@]}")
		done
		sleep 2
		still=()
		for n in "${running[@]}"; do
			if kill -0 "${job_pid[n]}" 2>/dev/null; then
				still+=("$n")
				continue
			fi
			wait "${job_pid[n]}"
			local rc=$?
			free=$((free + job_slots[n]))
			job_pid[n]=
			if [ ! -e "${seg_file[job_seg[n]]}.counts" ]; then
				echo "not ok 1 - ${job_k[n]}: the runner of ${job_names[n]} died (status $rc)" \
					>>"${seg_file[job_seg[n]]}"
				echo "0 1" >"${seg_file[job_seg[n]]}.counts"
			fi
		done
		running=("${still[@]}")
		print_ready
	done
	print_ready
}

cleanup_jobs() {
	local p
	for p in "${job_pid[@]}"; do
		[ -n "$p" ] && kill -TERM "$p" 2>/dev/null
	done
	for p in "${job_pid[@]}"; do
		[ -n "$p" ] && wait "$p" 2>/dev/null
	done
}

if [ ${#names[@]} -eq 0 ]; then
	note "no scenario in $scen_dir matches '${filter}'"
fi
run_t0=$EPOCHSECONDS
rundir=$out/.run
rm -rf "$rundir"
mkdir -p "$rundir"
: >"$rundir/times"
est_load
IFS=, read -r -a klist <<<"$kernels"
for k in "${klist[@]}"; do
	plan_kernel "$k"
done
plan_jobs
trap 'cleanup_jobs' EXIT
for ((n = 0; n < job_n; n++)); do
	note "job $((n + 1)): ${job_k[n]} ${job_topo[n]}, ${job_slots[n]} slot(s), expect $(( (job_est[n] + 30) / 60 )) min: ${job_names[n]}" >&2
done
run_jobs
est_save

echo "1..$total_tests"
[ $total_fail -gt 0 ] && note "failures: logs under $out"
[ $total_link_retries -gt 0 ] &&
	note "scenarios run again after the link between the VMs stopped: $total_link_retries (see \"set aside\" above)"
echo "$total_pass passed, $total_fail failed"
[ $total_fail -eq 0 ]
