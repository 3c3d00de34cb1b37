#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: netns
# kernels: 6.1
# full-kernels: 6.12
# requires: sroce
# timeout: 600
#
# On-demand paging (odp_verbs.py, over rdma-core's ODP test resources): RC
# SEND, WRITE, READ and atomics, UD and SRQ receives through regions
# registered with IBV_ACCESS_ON_DEMAND whose pages are not mapped yet;
# transfers racing with MADV_DONTNEED taking the pages away, every payload
# checked; access to a range with no memory behind it failing with the
# right completion status; the page fault counters; implicit regions (the
# whole address space) with transfers across the boundary between two of
# their chunks, the chunks counted by "rdma resource show mr -dd", and a
# WRITE to unmapped memory that must leave no chunk behind. Over the IPv4
# and the IPv6 GID. rdma-core's own ODP cases run in the rdma_core_suite scenario.
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=datapath_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/datapath_lib.sh"

tool=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/odp_verbs.py

dp_setup
# A slow (debug) kernel races fewer rounds, and takes the pages away as
# often relative to its speed.
dp_tap_tool_gids 300 "$tool" --rounds $((200 / SROCE_SLOW + 20)) \
	--zap-us $((500 * SROCE_SLOW))
done_testing
