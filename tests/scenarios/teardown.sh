#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: netns
# kernels: 6.1
# full-kernels: 6.12
# requires: sroce
# timeout: 600
# vcpus: 2
#
# First, disruptions under traffic: the link goes down and up, its MTU
# and addresses change, then every application (and two unprivileged
# processes churning QPs, CQs and multicast groups) is killed with SIGKILL
# mid-transfer; nothing may be left and a fresh pair must work.
# Then devices go away under applications that hold them open and move data:
# "rdma link delete", deleting the netdev, deleting the namespace and
# "rmmod sroce", each while teardown_verbs.py (RC and UC traffic between
# sroce0 and sroce1, verified), an ibv_rc_pingpong pair and, where its
# namespace is not the one deleted, an rping pair through the RDMA CM are
# running. Each removal must complete within seconds; the verbs
# application must get IBV_EVENT_DEVICE_FATAL, see its verbs fail and
# close every object; no process may be left in D state, each must exit
# or die at a signal, and the module must unload afterwards.
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tool=$here/teardown_verbs.py
work=$(mktemp -d)
# Removal of a device with open contexts, in seconds: RDMA CM IDs are
# torn down one by one, each with an RCU grace period.
REMOVE_LIMIT=30

need_module sroce
modprobe -r sroce 2>/dev/null

# attach: both devices, ACTIVE, with IPv4 GIDs; sets G0 and G1.
attach() {
	h1 rdma link add sroce0 type sroce netdev v1 &&
		h2 rdma link add sroce1 type sroce netdev v2 &&
		wait_until 30 port_is sroce0 PORT_ACTIVE &&
		wait_until 30 port_is sroce1 PORT_ACTIVE &&
		wait_until 30 gid_index sroce0 "$(gid_v4 "$NET4_A")" &&
		wait_until 30 gid_index sroce1 "$(gid_v4 "$NET4_B")" || return
	G0=$(gid_index sroce0 "$(gid_v4 "$NET4_A")")
	G1=$(gid_index sroce1 "$(gid_v4 "$NET4_B")")
}

# proc_state PID: the process's state letter (R, S, D...), empty when gone.
proc_state() {
	local s
	read -r s </proc/"$1"/stat 2>/dev/null || return 0
	s=${s##*) }
	echo "${s%% *}"
}

# start_apps CASE WITH_CM: the applications, in the background; their
# pids in apps[] and names in app_name[].
start_apps() {
	local c=$1 cm=$2
	apps=() app_name=()
	rm -f "$work/ready"
	/usr/bin/python3 "$tool" --a "sroce0:$G0" --b "sroce1:$G1" \
		--ready "$work/ready" >"$work/verbs.tap" 2>"$work/verbs.err" &
	apps+=($!) app_name+=(teardown_verbs.py)
	# With completion events (-e): traffic without two vCPUs spent polling.
	ibv_rc_pingpong -d sroce1 -g "$G1" -s 4096 -n 100000000 -e -p 18560 \
		>"$work/pp-srv.out" 2>&1 &
	apps+=($!) app_name+=("ibv_rc_pingpong server")
	wait_until 20 tcp_listening 18560
	ibv_rc_pingpong -d sroce0 -g "$G0" -s 4096 -n 100000000 -e -p 18560 127.0.0.1 \
		>"$work/pp-cli.out" 2>&1 &
	apps+=($!) app_name+=("ibv_rc_pingpong client")
	if [ "$cm" = yes ]; then
		ip netns exec h2 rping -s -a "$NET4_B" -p 18561 -C 100000000 -S 1000 \
			>"$work/rping-srv.out" 2>&1 &
		apps+=($!) app_name+=("rping server")
		wait_until 20 cm_listening rping
		ip netns exec h1 rping -c -a "$NET4_B" -p 18561 -C 100000000 -S 1000 \
			>"$work/rping-cli.out" 2>&1 &
		apps+=($!) app_name+=("rping client")
	fi
	# The first case's Python loads pyverbs cold over 9p: over a minute
	# on a slow host, where later cases take ten seconds.
	check_wait "$c: the verbs application moves verified data" 180 test -e "$work/ready"
	# The others have had the same time to connect; each must still run.
	local i
	for i in "${!apps[@]}"; do
		[ -n "$(proc_state "${apps[i]}")" ] ||
			diag "$c: ${app_name[i]} exited before the removal: $(tail -n 3 "$work"/*.out 2>/dev/null)"
	done
}

tcp_listening() { ss -Hltn "sport = :$1" | grep -q .; }

cm_listening() {
	rdma resource show cm_id 2>/dev/null | grep -q "state LISTEN .*comm $1 "
}

# stop_apps CASE: the verbs application's own verdict, then every
# application gone: by itself within seconds, else at SIGTERM, else SIGKILL;
# none in uninterruptible sleep.
stop_apps() {
	local c=$1 i st stuck='' left=''
	if wait_until 90 bash -c "! kill -0 ${apps[0]} 2>/dev/null"; then
		while IFS= read -r line; do
			case $line in
			"ok "*) ok "$c: ${line#ok * - }" ;;
			"not ok "*) not_ok "$c: ${line#not ok * - }" ;;
			"#"*) diag "$line" ;;
			esac
		done <"$work/verbs.tap"
		grep -q '^1\.\.' "$work/verbs.tap" ||
			not_ok "$c: teardown_verbs.py finished" "$(tail -n 20 "$work/verbs.err")"
	else
		not_ok "$c: teardown_verbs.py finishes after the removal" \
			"state $(proc_state "${apps[0]}")" "$(cat "/proc/${apps[0]}/stack" 2>/dev/null)"
	fi
	sleep 2
	for i in "${!apps[@]}"; do
		st=$(proc_state "${apps[i]}")
		[ "$st" = D ] && stuck+=" ${app_name[i]}($(cat "/proc/${apps[i]}/wchan" 2>/dev/null))"
		[ -z "$st" ] || [ "$st" = Z ] || left+=" ${app_name[i]}"
		kill -TERM "${apps[i]}" 2>/dev/null
	done
	[ -z "$left" ] || diag "$c: still running after the removal, stopped by SIGTERM:$left"
	expect_eq "$c: no application in uninterruptible sleep" "" "$stuck"
	for i in "${!apps[@]}"; do
		wait_until 10 bash -c "! kill -0 ${apps[i]} 2>/dev/null" || kill -KILL "${apps[i]}" 2>/dev/null
	done
	left=
	for i in "${!apps[@]}"; do
		wait_until 10 bash -c "! kill -0 ${apps[i]} 2>/dev/null" || left+=" ${app_name[i]}"
		wait "${apps[i]}" 2>/dev/null
	done
	expect_eq "$c: every application has exited" "" "$left"
}

# removal CASE WITH_CM COMMAND...: a fresh topology and devices, the
# applications, then COMMAND, which must return within REMOVE_LIMIT
# seconds and leave no sroce device.
removal() {
	local c=$1 cm=$2 t0 rc took
	shift 2
	topo_netns_up || bail "cannot build the topology"
	grep -q '^sroce ' /proc/modules || modprobe sroce || bail "sroce does not load"
	check "$c: sroce0 and sroce1 attached" attach || return
	start_apps "$c" "$cm"
	log "+ $*"
	t0=$EPOCHREALTIME
	timeout $((REMOVE_LIMIT * SROCE_SLOW * 2)) "$@" >"$work/remove.out" 2>&1
	rc=$?
	took=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
	log "$* returned $rc after $took s"
	if [ "$rc" = 0 ] && awk -v t="$took" -v l=$((REMOVE_LIMIT * SROCE_SLOW)) 'BEGIN { exit !(t <= l) }'; then
		ok "$c: '$*' completes within $((REMOVE_LIMIT * SROCE_SLOW)) s with applications open"
	else
		not_ok "$c: '$*' completes within $((REMOVE_LIMIT * SROCE_SLOW)) s with applications open" \
			"exit status $rc after $took s" "$(cat "$work/remove.out")"
	fi
	check_wait "$c: no sroce device left" 30 eval '! ibdev_exists sroce0 && ! ibdev_exists sroce1'
	stop_apps "$c"
	if grep -q '^sroce ' /proc/modules; then
		check "$c: rmmod sroce afterwards" rmmod sroce
	fi
}

# user_objects: the QPs (the GSI QPs left out), MRs, CQs and PDs the RDMA
# core still tracks on sroce0 and sroce1.
user_objects() {
	local t
	for t in qp mr cq pd; do
		timeout 30 rdma resource show "$t" 2>/dev/null |
			awk '/link sroce[01]\// || /dev sroce[01] / { print }' |
			grep -v ' lqpn 1 ' | grep -v 'comm \[ib_core\]'
	done
}

# disruptions: while the applications and two unprivileged processes
# churning QPs, CQs and multicast groups run, the link goes down and up,
# its MTU and addresses change; then every process is killed with SIGKILL
# mid-transfer. None may be left in D state, no object of theirs may be
# left, and a fresh pair must move checked data.
disruptions() {
	local c="kill -9" i stuck='' churn=()
	topo_netns_up || bail "cannot build the topology"
	grep -q '^sroce ' /proc/modules || modprobe sroce || bail "sroce does not load"
	check "$c: sroce0 and sroce1 attached" attach || return
	chmod 666 /dev/infiniband/uverbs*
	for i in 1 2; do
		ip netns exec h1 setpriv --reuid=nobody --regid=nogroup --clear-groups \
			--inh-caps=-all --bounding-set=-all -- \
			"$churn_tool" churn -d sroce0 -g "$G0" -n 100000 -s "$i" \
			>"$work/churn$i.out" 2>&1 &
		churn+=($!)
	done
	start_apps "$c" yes
	check "$c: v1 down and up under traffic" \
		eval 'ip -n h1 link set v1 down && nap 1 && ip -n h1 link set v1 up'
	check "$c: MTU 1200 and back under traffic" \
		eval 'ip -n h1 link set v1 mtu 1200 && nap 1 && ip -n h1 link set v1 mtu 1500'
	check "$c: an address added and removed under traffic" \
		eval 'ip -n h1 addr add 198.18.0.11/24 dev v1 && nap 1 && ip -n h1 addr del 198.18.0.11/24 dev v1'
	nap 2
	for i in "${apps[@]}" "${churn[@]}"; do
		[ "$(proc_state "$i")" != D ] || stuck+=" $i($(cat "/proc/$i/wchan" 2>/dev/null))"
	done
	kill -KILL "${apps[@]}" "${churn[@]}" 2>/dev/null
	for i in "${apps[@]}" "${churn[@]}"; do
		wait_until 20 bash -c "! kill -0 $i 2>/dev/null" || stuck+=" $i"
		wait "$i" 2>/dev/null
	done
	expect_eq "$c: every process dies at SIGKILL, none in D state" "" "$stuck"
	check_wait "$c: no QP, MR, CQ or PD of theirs left" 30 eval '[ -z "$(user_objects)" ]'
	wait_until 30 port_is sroce0 PORT_ACTIVE
	wait_until 30 gid_index sroce0 "$(gid_v4 "$NET4_A")"
	ibv_rc_pingpong -d sroce1 -g "$G1" -s 4096 -n 100 -c -p 18562 >"$work/pp2.srv" 2>&1 &
	i=$!
	wait_until 20 tcp_listening 18562
	check "$c: a fresh ibv_rc_pingpong --chk pair afterwards" \
		ibv_rc_pingpong -d sroce0 -g "$G0" -s 4096 -n 100 -c -p 18562 127.0.0.1
	wait "$i" || not_ok "$c: the fresh pair's server" "$(tail -n 5 "$work/pp2.srv")"
	rdma link delete sroce0
	rdma link delete sroce1
	rmmod sroce
}

churn_tool=/tmp/sroce-ringfuzz
cp "$here/../../tools/bin/sroce-ringfuzz" "$churn_tool" && chmod 755 "$churn_tool" ||
	bail "no tools/bin/sroce-ringfuzz (make -C tools)"

plan 79
disruptions
removal "link delete" yes sh -c 'rdma link delete sroce0 && rdma link delete sroce1'
removal "netdev delete" yes ip -n h1 link del v1
# The RDMA CM and processes inside h1 would keep the namespace alive.
removal "namespace delete" no ip netns del h1
removal "module unload" yes rmmod sroce
rm -rf "$work"
done_testing
