#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: netns
# kernels: 6.1 debug
# full-kernels: 6.12
# requires: sroce
# timeout: 240
#
# Devices go away cleanly with what they depend on: their netdev
# (ip link del), their namespace (ip netns del) and the module itself
# (rmmod with devices present); the module loads again afterwards.
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
plan 27

no_ibdev() { [ -z "$(ls /sys/class/infiniband 2>/dev/null)" ]; }
not_loaded() { ! grep -q "^$1 " /proc/modules; }

check "modprobe sroce" modprobe sroce || need_module sroce
check "sroce0 on v1 (h1)" h1 rdma link add sroce0 type sroce netdev v1 || bail "cannot create sroce0"
check_wait "sroce0 ACTIVE" 20 port_is sroce0 PORT_ACTIVE

# 1. The netdev goes away.
check "ip link del v1" h1 ip link del v1
check_wait "sroce0 is removed with its netdev" 10 ibdev_gone sroce0
expect_nomatch "ibv_devices no longer lists sroce0" "^[[:space:]]*sroce0[[:space:]]" "$(ibv_devices 2>&1)"
check_wait "h1 has no socket on 4791 left" 10 test "$(udp_port_count h1)" = 0

# 2. The module goes away under two devices.
check "topology rebuilt" topo_netns_up
check "sroce0 on v1 (h1)" h1 rdma link add sroce0 type sroce netdev v1
check "sroce1 on v2 (h2)" h2 rdma link add sroce1 type sroce netdev v2
check_wait "sroce0 and sroce1 ACTIVE" 20 eval 'port_is sroce0 PORT_ACTIVE && port_is sroce1 PORT_ACTIVE'
check "rmmod sroce with two devices" rmmod sroce
check "sroce is unloaded" not_loaded sroce
check "no RDMA device left" no_ibdev
expect_eq "no socket on 4791 left in h1" 0 "$(udp_port_count h1)"
expect_eq "no socket on 4791 left in h2" 0 "$(udp_port_count h2)"

# 3. It loads again and works.
check "modprobe sroce again" modprobe sroce || bail "sroce does not load again"
check "sroce0 on v1 again" h1 rdma link add sroce0 type sroce netdev v1
check_wait "sroce0 ACTIVE again" 20 port_is sroce0 PORT_ACTIVE
check_wait "sroce0 has the GID of $NET4_A again" 20 gid_index sroce0 "$(gid_v4 $NET4_A)"

# 4. The namespace goes away: v2 with it, and v1, its veth peer.
check "sroce1 on v2 (h2)" h2 rdma link add sroce1 type sroce netdev v2
check_wait "sroce1 ACTIVE" 20 port_is sroce1 PORT_ACTIVE
check "ip netns del h2" ip netns del h2
check_wait "sroce1 is removed with its namespace" 30 ibdev_gone sroce1
check_wait "sroce0 is removed with the veth peer" 30 ibdev_gone sroce0

check "rmmod sroce without devices" rmmod sroce
check "sroce is unloaded" not_loaded sroce
