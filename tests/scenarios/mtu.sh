#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: netns
# kernels: 6.1
# full-kernels: 6.12
# requires: sroce
# timeout: 180
#
# The port's active MTU follows the netdev's: the largest IB MTU that fits
# in the netdev MTU less the RoCEv2 headers over IPv6 (92 bytes).
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
plan 17

dev=sroce0
check "modprobe sroce" modprobe sroce || need_module sroce
check "rdma link add $dev on v1 (h1)" h1 rdma link add $dev type sroce netdev v1 ||
	bail "cannot create $dev"
check_wait "port ACTIVE" 20 port_is $dev PORT_ACTIVE
expect_eq "max_mtu 4096" 4096 "$(ibv_attr $dev max_mtu)"

for step in 1500:1024 4200:4096 1280:1024 9000:4096; do
	mtu=${step%:*}
	want=${step#*:}
	expect_eq "helper agrees: netdev MTU $mtu -> $want" "$want" "$(ib_mtu_for "$mtu")"
	check "netdev MTU $mtu on v1 and v2" sh -c "ip -n h1 link set v1 mtu $mtu && ip -n h2 link set v2 mtu $mtu"
	check_wait "active_mtu $want at netdev MTU $mtu" 10 test "$(ibv_attr $dev active_mtu)" = "$want"
done
expect_eq "port still ACTIVE" PORT_ACTIVE "$(ibv_attr $dev state)"
