#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: twovm
# kernels: 6.1
# full-kernels: 6.12
# timeout: 300
#
# Control: the in-tree rdma_rxe between the two VMs, RC and UD pingpong
# with buffer validation over the IPv4 and the IPv6 RoCE v2 GIDs. If this
# fails, the harness or the link is broken, not sroce.
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
plan 13

dev=rxe0
check "modprobe rdma_rxe" modprobe rdma_rxe || bail "rdma_rxe does not load"
check "rdma link add $dev type rxe netdev eth0" rdma link add $dev type rxe netdev eth0 ||
	bail "cannot create $dev"
check_wait "$dev ACTIVE" 20 port_is $dev PORT_ACTIVE
check_wait "IPv4 RoCE v2 GID" 20 gid_index $dev "$(gid_v4 "$MY_IP4")"
check_wait "IPv6 RoCE v2 GID" 20 gid_index $dev "$(gid_v6 "$MY_IP6")"
idx4=$(gid_index $dev "$(gid_v4 "$MY_IP4")")
idx6=$(gid_index $dev "$(gid_v6 "$MY_IP6")")
log "GID table:"
gid_table $dev >&2

port=18515
# pingpong NAME PROGRAM GID_INDEX ARGS...: b serves, a connects; both
# check the exit status and the transfer summary.
pingpong() {
	local name=$1 prog=$2 idx=$3 out
	shift 3
	port=$((port + 1))
	out=/tmp/pingpong.$port.out
	if [ "$ROLE" = b ]; then
		"$prog" -d $dev -g "$idx" -p $port "$@" >"$out" 2>&1 &
		local pid=$!
		wait_until 20 sh -c "ss -ltn | grep -q ':$port '"
		put "ready.$name" 1
		wait $pid
	else
		get "ready.$name" 120 >/dev/null &&
			timeout 120 "$prog" -d $dev -g "$idx" -p $port "$@" "$NET4_B" >"$out" 2>&1
	fi
	local rc=$?
	cat "$out" >&2
	if [ $rc -eq 0 ] && grep -qE '[0-9]+ bytes in [0-9.]+ seconds' "$out" &&
		grep -qE '[0-9]+ iters in [0-9.]+ seconds' "$out"; then
		ok "$name"
	else
		not_ok "$name" "exit status $rc" "$(tail -n 20 "$out")"
	fi
}

pingpong "RC pingpong, 4 KiB x 200, IPv4 GID, data checked" ibv_rc_pingpong "$idx4" -n 200 -s 4096 -c
pingpong "RC pingpong, 4 KiB x 200, IPv6 GID, data checked" ibv_rc_pingpong "$idx6" -n 200 -s 4096 -c
pingpong "RC pingpong, 64 KiB x 20 (multi-packet), IPv4 GID, data checked" ibv_rc_pingpong "$idx4" -n 20 -s 65536 -c
pingpong "UD pingpong, 1 KiB x 200, IPv4 GID" ibv_ud_pingpong "$idx4" -n 200 -s 1024 -c
pingpong "SRQ pingpong, 4 KiB x 100, IPv4 GID" ibv_srq_pingpong "$idx4" -n 100 -s 4096 -c

barrier finished 120
check "rdma link delete $dev" rdma link delete $dev
check_wait "$dev is gone" 10 ibdev_gone $dev
check "rmmod rdma_rxe" rmmod rdma_rxe
