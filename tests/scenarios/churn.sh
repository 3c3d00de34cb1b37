#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tools/bin/sroce-ringfuzz churn as an unprivileged user on sroce0: in one
# process, threads post sends and receives, move QPs between RESET, INIT,
# RTR, RTS, SQD and ERR, destroy and recreate RC and UD QPs, attach and
# detach them to multicast groups and send datagrams to the groups, for a
# fixed number of iterations. Afterwards fresh QPs move checked data,
# unicast and multicast: two UD QPs of one group both get each datagram
# while their receive buffers' on-demand pages are being faulted in, and a
# UD send waiting in SQD goes out to its AH's address after the AH is
# destroyed. Then no QP of the device may be left and
# "rdma link delete" must complete. A call that never returns (a destroy
# waiting on a leaked reference) fails through the tool's watchdog or the
# timeout, never hangs the suite.
#
# topology: netns
# kernels: 6.1
# full-kernels: 6.12
# requires: sroce
# timeout: 600
# vcpus: 2

# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=datapath_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/datapath_lib.sh"
# shellcheck source=ringfuzz_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/ringfuzz_lib.sh"

# QPs of DEV the RDMA core still tracks, the GSI QP left out.
user_qps() {
	timeout 30 rdma resource show qp 2>/dev/null | awk -v d="$1/" 'index($0, "link " d) && !/lqpn 1 /'
}

# Fewer iterations where everything is slow (debug kernel).
iters=$((400 / SROCE_SLOW))
[ "$iters" -ge 50 ] || iters=50

rf_setup
rf_run "churn" 300 churn -d "$DP_CLI_DEV" -g "$DP_CLI_GID4" -G "$DP_CLI_GID6" \
	-n "$iters" -s "$RANDOM"
left=$(user_qps "$DP_CLI_DEV")
expect_eq "no QP of $DP_CLI_DEV left after the process ended" "" "$left"
# In the background: a delete stuck in the kernel ignores even SIGKILL.
out=$(mktemp)
timeout 60 rdma link delete "$DP_CLI_DEV" >"$out" 2>&1 &
pid=$!
if ! wait_until 60 bash -c "! kill -0 $pid"; then
	not_ok "rdma link delete $DP_CLI_DEV completes" \
		"still waiting after $((60 * SROCE_SLOW)) s: something holds the device (a leaked QP reference?)"
else
	wait "$pid"
	rc=$?
	if [ $rc -eq 0 ] && ibdev_gone "$DP_CLI_DEV"; then
		ok "rdma link delete $DP_CLI_DEV completes"
	else
		not_ok "rdma link delete $DP_CLI_DEV completes" "exit status $rc" "$(cat "$out")"
	fi
fi
rm -f "$out"
done_testing
