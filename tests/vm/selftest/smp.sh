#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: netns
# vcpus: 2
# timeout: 60
# Harness self-test: "vcpus: 2" boots a VM of its own with two vCPUs.
# shellcheck source=../../scenarios/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../scenarios/lib.sh"
plan 2

expect_eq "two CPUs online" 2 "$(nproc)"
check "h1 pings h2 over IPv4" ping_ok h1 "$NET4_B"
