#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: netns
# kernels: 6.1
# full-kernels: 6.12
# requires: sroce
# timeout: 240
#
# sroce and the in-tree rdma_rxe drive the same user ABI and UDP port, so
# they must never be loaded together: whichever comes second is refused
# with a message naming the other, and the first keeps working.
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
plan 21

loaded() { grep -q "^$1 " /proc/modules; }

# (i) sroce first.
check "modprobe sroce" modprobe sroce || need_module sroce
check "sroce0 on v1 (h1)" h1 rdma link add sroce0 type sroce netdev v1 || bail "cannot create sroce0"
check_wait "sroce0 ACTIVE" 20 port_is sroce0 PORT_ACTIVE
dmesg_mark
check_fail "modprobe rdma_rxe is refused while sroce is loaded" modprobe rdma_rxe
check_fail "rdma_rxe is not loaded" loaded rdma_rxe
log="$(dmesg_since)"
expect_match "the kernel log names sroce" "sroce" "$log"
expect_match "sroce0 still ACTIVE" PORT_ACTIVE "$(ibv_attr sroce0 state)"
check "ibv_devinfo -d sroce0 still works" ibv_devinfo -d sroce0
check_wait "sroce0 still has its IPv4 GID" 10 gid_index sroce0 "$(gid_v4 $NET4_A)"
check "rdma link delete sroce0" rdma link delete sroce0
check "rmmod sroce" rmmod sroce

# (ii) rdma_rxe first.
check "modprobe rdma_rxe once sroce is gone" modprobe rdma_rxe || bail "rdma_rxe does not load"
dmesg_mark
check_fail "modprobe sroce is refused while rdma_rxe is loaded" modprobe sroce
check_fail "sroce is not loaded" loaded sroce
log="$(dmesg_since)"
expect_match "the kernel log names rdma_rxe" "rdma_rxe" "$log"
check "rxe0 on v1 (h1)" h1 rdma link add rxe0 type rxe netdev v1
check_wait "rxe0 has the GID of $NET4_A" 20 gid_index rxe0 "$(gid_v4 $NET4_A)"
check "rdma link delete rxe0" rdma link delete rxe0
check "rmmod rdma_rxe" rmmod rdma_rxe

# And sroce loads again.
check "modprobe sroce after rdma_rxe is gone" modprobe sroce
check "sroce0 on v1 again" h1 rdma link add sroce0 type sroce netdev v1
