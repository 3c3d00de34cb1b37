#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: netns
# kernels: 6.1
# full-kernels: 6.12
# requires: sroce
# timeout: 600
#
# Shared receive queues (srq_verbs.py, over rdma-core's test resources):
# RC, UC and UD QPs receiving through one SRQ, WQEs taken in posting
# order, the one-shot limit event, resizing with WQEs posted, refused
# changes, a QP's error leaving the SRQ's WQEs alone, XRC refused; over the
# IPv4 and the IPv6 GID; UD receives with the GRH image and the SL that
# says its L3 header. ibv_srq_pingpong runs in the pingpong scenarios.
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=datapath_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/datapath_lib.sh"

tool=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/srq_verbs.py

dp_setup
dp_tap_tool_gids 120 "$tool"
done_testing
