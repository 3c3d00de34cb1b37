#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: twovm
# kernels: 6.1
# full-kernels: 6.12
# requires: sroce
# timeout: 180
#
# An sroce device on a real NIC (each VM's virtio eth0): creation with
# "rdma link add", what ibv_devices, ibv_devinfo and sysfs say about it
# (transport, link layer, port state, MTU, node GUID, RoCE v2 GIDs, parent
# device), and deletion.
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
plan 24

dev=sroce0
mac=$(cat /sys/class/net/eth0/address)
expected_mac=$MAC_A
expected_guid=5054:00ff:fe12:3401
if [ "$ROLE" = b ]; then
	expected_mac=$MAC_B
	expected_guid=5054:00ff:fe12:3402
fi

check "modprobe sroce" modprobe sroce || need_module sroce
check "rdma link add $dev type sroce netdev eth0" \
	rdma link add $dev type sroce netdev eth0 || bail "cannot create $dev"
check_wait "$dev appears in /sys/class/infiniband" 10 ibdev_exists $dev
expect_match "ibv_devices lists $dev" "^[[:space:]]*${dev}[[:space:]]" "$(ibv_devices 2>&1)"
expect_match "rdma link show: $dev/1 on eth0" "link $dev/1 .*netdev eth0" "$(rdma link show $dev/1 2>&1)"
check_wait "port 1 becomes PORT_ACTIVE" 20 port_is $dev PORT_ACTIVE

expect_eq "transport is InfiniBand" InfiniBand "$(ibv_attr $dev transport)"
expect_eq "link_layer is Ethernet" Ethernet "$(ibv_attr $dev link_layer)"
expect_eq "active_mtu 1024 at netdev MTU 1500" 1024 "$(ibv_attr $dev active_mtu)"
expect_eq "eth0 has the expected MAC" "$expected_mac" "$mac"
expect_eq "node_guid is the EUI-64 of the MAC (ibv_devinfo)" "$expected_guid" "$(ibv_attr $dev node_guid)"
expect_eq "node_guid in sysfs" "$expected_guid" "$(cat /sys/class/infiniband/$dev/node_guid 2>&1)"

gid4=$(gid_v4 "$MY_IP4")
gid6=$(gid_v6 "$MY_IP6")
check_wait "RoCE v2 GID for $MY_IP4 ($gid4)" 20 gid_index $dev "$gid4"
check_wait "RoCE v2 GID for $MY_IP6" 20 gid_index $dev "$gid6"
i4=$(gid_index $dev "$gid4")
i6=$(gid_index $dev "$gid6")
expect_eq "IPv4 GID's netdev is eth0" eth0 "$(cat /sys/class/infiniband/$dev/ports/1/gid_attrs/ndevs/"${i4:-x}" 2>&1)"
expect_eq "IPv6 GID's netdev is eth0" eth0 "$(cat /sys/class/infiniband/$dev/ports/1/gid_attrs/ndevs/"${i6:-x}" 2>&1)"
expect_nomatch "no GID of the peer's address" "$(gid_v4 "$PEER_IP4")|$(gid_v6 "$PEER_IP6")" "$(gid_table $dev)"
expect_eq "parent device: device/net lists eth0" eth0 "$(ls /sys/class/infiniband/$dev/device/net/ 2>&1)"

check "netdev MTU 4200" ip link set eth0 mtu 4200
check_wait "active_mtu 4096 at netdev MTU 4200" 10 test "$(ibv_attr $dev active_mtu)" = 4096
ip link set eth0 mtu 1500

barrier devices-checked 120
check "rdma link delete $dev" rdma link delete $dev
check_wait "$dev is gone from /sys/class/infiniband" 10 ibdev_gone $dev
expect_nomatch "ibv_devices no longer lists $dev" "^[[:space:]]*${dev}[[:space:]]" "$(ibv_devices 2>&1)"
check "rmmod sroce" rmmod sroce
