#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: netns
# timeout: 60
# Harness self-test: the guest's file systems, module staging and the
# two-namespace topology.
# shellcheck source=../../scenarios/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../scenarios/lib.sh"
plan 10

expect_eq "root is an overlay" overlay "$(findmnt -no FSTYPE /)"
expect_eq "/tmp is a tmpfs" tmpfs "$(findmnt -no FSTYPE /tmp)"
expect_eq "/run is a tmpfs" tmpfs "$(findmnt -no FSTYPE /run)"
expect_eq "debugfs mounted" debugfs "$(findmnt -no FSTYPE /sys/kernel/debug)"
check "root is writable (overlay upper)" touch /etc/srocevm-write-test
check "h1 pings h2 over IPv4" ping_ok h1 "$NET4_B"
check "h1 pings h2 over IPv6" ping_ok h2 "$NET6_A"
expect_eq "v1 MTU" 1500 "$(h1 cat /sys/class/net/v1/mtu)"
check "rdma tool runs" rdma dev show
expect_eq "one CPU online (no vcpus: header)" 1 "$(nproc)"
