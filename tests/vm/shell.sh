#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot an sroce test topology, run commands in it and print their output.
#
#   tests/vm/shell.sh --kernel 6.1|6.12|debug [--topo netns|twovm]
#                     [--vcpus N] [--timeout SECONDS] [--out DIR] [--dmesg]
#                     --cmd 'COMMANDS' [--cmd-b 'COMMANDS FOR VM b']
#
# The commands run as root in the guest (in each VM on twovm, with ROLE=a
# or b) after the topology is set up, with tests/scenarios/lib.sh sourced:
# h1/h2, barrier, put/get, ibv_attr, gid_table... are available; the
# modules of build/KVER/ are staged, so `modprobe sroce` works. --cmd-b
# gives VM b different commands. --vcpus boots each VM with N vCPUs
# (default 1). --dmesg also prints the kernel log.
# Exit status: that of the commands (of VM a on twovm).
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=vm.sh
. "$here/vm.sh"

usage() {
	sed -n '4,17s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" >&2
	exit 2
}

kernel=
topo=netns
timeout=300
out=
cmd=
cmd_b=
show_dmesg=0
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) kernel=${2:-}; shift 2 || usage ;;
	--topo) topo=${2:-}; shift 2 || usage ;;
	--timeout) timeout=${2:-}; shift 2 || usage ;;
	--vcpus) VM_SMP=${2:-}; shift 2 || usage ;;
	--out) out=${2:-}; shift 2 || usage ;;
	--cmd) cmd=${2:-}; shift 2 || usage ;;
	--cmd-b) cmd_b=${2:-}; shift 2 || usage ;;
	--dmesg) show_dmesg=1; shift ;;
	-h | --help) usage ;;
	*) echo "unknown argument: $1" >&2; usage ;;
	esac
done
if [ -z "$kernel" ] || [ -z "$cmd" ]; then
	usage
fi
case $topo in netns | twovm) ;; *) usage ;; esac
[[ ${VM_SMP:=1} =~ ^[1-9][0-9]*$ ]] || usage

vm_kernel "$kernel" || exit 1
vm_initramfs || exit 1
out=${out:-$SROCE_REPO/out/shell/$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out" && out=$(cd "$out" && pwd) || exit 1

{
	echo "# commands from tests/vm/shell.sh"
	if [ -n "$cmd_b" ]; then
		# shellcheck disable=SC2016 # expanded in the guest
		printf 'if [ "$ROLE" = b ]; then\n%s\nelse\n%s\nfi\n' "$cmd_b" "$cmd"
	else
		printf '%s\n' "$cmd"
	fi
} >"$out/cmd.sh"
echo "CMD_TIMEOUT=$((timeout * VM_SLOW))" >"$out/cmd.env"

trap 'vm_kill; vm_unlock' EXIT
trap 'exit 130' INT TERM

roles=(a)
[ "$topo" = twovm ] && roles=(a b)
vm_lock "$(vm_topo_slots "$topo")"
vm_stage_modules || exit 1
start=$EPOCHREALTIME
vm_start_topo "$out" "$topo" || exit 1
limit=$((SECONDS + timeout * VM_SLOW + 120 * VM_SLOW))
while vm_alive; do
	if [ $SECONDS -gt $limit ]; then
		echo "shell: timeout, killing the VMs" >&2
		break
	fi
	[ -d "$out" ] || { echo "shell: $out vanished, killing the VMs" >&2; break; }
	sleep 0.3
done
vm_kill
vm_unlock
elapsed=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')

rc=1
for r in "${roles[@]}"; do
	[ ${#roles[@]} -gt 1 ] && echo "=== VM $r ==="
	if [ -f "$out/$r/cmd.out" ]; then
		cat "$out/$r/cmd.out"
	else
		echo "shell: no output from VM $r; console tail:"
		tail -n 30 "$out/console-$r.log"
	fi
	if [ $show_dmesg = 1 ] && [ -f "$out/$r/cmd.dmesg" ]; then
		echo "--- kernel log of VM $r ---"
		cat "$out/$r/cmd.dmesg"
	fi
	splats=$(vm_splat_grep "$out/$r/cmd.dmesg" 2>/dev/null)
	[ -n "$splats" ] && printf -- '--- kernel splats in VM %s ---\n%s\n' "$r" "$splats"
	[ -s "$out/$r/cmd.kmemleak" ] && { echo "--- kmemleak in VM $r ---"; cat "$out/$r/cmd.kmemleak"; }
	if [ "$r" = a ]; then
		rc=$(cat "$out/a/cmd.rc" 2>/dev/null || echo 1)
	fi
done
echo "shell: exit status $rc, $elapsed s, logs in $out" >&2
exit "$rc"
