#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: netns
# kernels: 6.1
# full-kernels: 6.12
# requires: sroce
# timeout: 600
#
# IBTA 1.5 FLUSH (flush_verbs.py, over rdma-core's RC test resources):
# FLUSHes of a range and of a whole region after WRITEs, their completions
# and the data; FLUSHes refused for a range out of bounds, persistent
# placement, a region without the right, or a malformed WQE; the capability
# bits. Over the IPv4 and the IPv6 GID.
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=datapath_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/datapath_lib.sh"

tool=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/flush_verbs.py

dp_setup
dp_tap_tool_gids 300 "$tool"
done_testing
