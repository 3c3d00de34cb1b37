#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: netns
# kernels: 6.1
# full-kernels: 6.12
# requires: sroce
# timeout: 240
#
# Devices in two network namespaces: each sees its own addresses as GIDs,
# and each namespace with sroce devices has exactly one UDP socket on port
# 4791, shared by its devices and closed with the last of them; a
# namespace without devices has none.
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
plan 32

# count_is NS N: namespace NS has N sockets on UDP port 4791.
count_is() { [ "$(udp_port_count "$1")" = "$2" ]; }

# expect_sockets DESC NS N: like count_is, waiting for it, with the
# namespace's UDP tables as diagnostics on failure.
expect_sockets() {
	local desc=$1 ns=$2 n=$3
	if wait_until 10 count_is "$ns" "$n"; then
		ok "$desc"
		return
	fi
	not_ok "$desc" "sockets on port 4791 in ${ns:-the initial namespace}: $(udp_port_count "$ns"), expected $n" \
		"$(in_ns "$ns" ss -uan 2>&1)"
}

check "modprobe sroce" modprobe sroce || need_module sroce
expect_sockets "no socket on 4791 in the initial namespace after modprobe" "" 0
expect_sockets "no socket on 4791 in h1 before any device" h1 0

check "sroceA on v1 in h1" h1 rdma link add sroceA type sroce netdev v1 || bail "cannot create sroceA"
check "sroceB on v2 in h2" h2 rdma link add sroceB type sroce netdev v2 || bail "cannot create sroceB"
check_wait "sroceA ACTIVE" 20 port_is sroceA PORT_ACTIVE
check_wait "sroceB ACTIVE" 20 port_is sroceB PORT_ACTIVE

check_wait "sroceA has the RoCE v2 GID of $NET4_A" 20 gid_index sroceA "$(gid_v4 $NET4_A)"
check_wait "sroceA has the RoCE v2 GID of $NET6_A" 20 gid_index sroceA "$(gid_v6 $NET6_A)"
check_wait "sroceB has the RoCE v2 GID of $NET4_B" 20 gid_index sroceB "$(gid_v4 $NET4_B)"
check_wait "sroceB has the RoCE v2 GID of $NET6_B" 20 gid_index sroceB "$(gid_v6 $NET6_B)"
expect_nomatch "sroceA has none of h2's addresses" "$(gid_v4 $NET4_B)|$(gid_v6 $NET6_B)" "$(gid_table sroceA)"
expect_nomatch "sroceB has none of h1's addresses" "$(gid_v4 $NET4_A)|$(gid_v6 $NET6_A)" "$(gid_table sroceB)"
expect_match "sroceA's GIDs belong to v1" "^[0-9]+ [0-9a-f:]+ RoCE_v2 v1$" "$(gid_table sroceA)"
expect_nomatch "sroceA has no GID of another netdev" " (v2|lo|)$" "$(gid_table sroceA)"

expect_sockets "exactly one socket on 4791 in h1" h1 1
expect_sockets "exactly one socket on 4791 in h2" h2 1
expect_sockets "no socket on 4791 in the initial namespace (no device there)" "" 0
expect_match "ss -uan in h1 shows port 4791" ":4791[[:space:]]" "$(h1 ss -uan 2>&1)"
check "namespace h3 without devices" ip netns add h3
expect_sockets "no socket on 4791 in h3" h3 0

# A second device in h1 shares its namespace's socket.
check "second veth pair inside h1" h1 ip link add v3 type veth peer name v4
h1 ip link set v3 up && h1 ip link set v4 up
check "sroceC on v3 in h1" h1 rdma link add sroceC type sroce netdev v3
check_wait "sroceC ACTIVE" 20 port_is sroceC PORT_ACTIVE
expect_sockets "still exactly one socket on 4791 in h1 with two devices" h1 1

check "delete sroceB" rdma link delete sroceB
expect_sockets "h2 closes its socket with its last device" h2 0
expect_sockets "h1 keeps its socket" h1 1
check "delete sroceA" rdma link delete sroceA
expect_sockets "h1 keeps its socket while sroceC remains" h1 1
check "delete sroceC" rdma link delete sroceC
expect_sockets "h1 closes its socket with its last device" h1 0
