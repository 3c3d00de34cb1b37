#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: netns
# kernels: 6.1
# full-kernels: 6.12
# requires: sroce
# timeout: 300
#
# The retransmission timeout of a QP that has not timed a round trip yet.
# netem on v2 holds every frame from h2 for DELAY_MS, so every round trip
# between h1 and h2 (h1's requests wait for h2's ACKs, h2's requests are
# held on their way) is longer than ibv_rc_pingpong's Local ACK Timeout
# (timeout 14: 67 ms). A first pingpong's two QPs start with only their
# own timeouts: they must time out before their ACKs come (the premise,
# checked); the doubled wait that follows holds until they time a round
# trip. Every round trip a QP times also feeds one estimate of its
# device, and the QPs of the later pingpongs (RUNS pairs, each QP new)
# start from it: between them they may time out fewer times than there
# are new QPs, where each QP without the estimate times out at least
# once. Every message's payload is checked (-c); the counters are
# printed.
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=datapath_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/datapath_lib.sh"

DELAY_MS=300
RUNS=5
plan $((8 + RUNS))

# cnt DEV NAME: one counter of DEV.
cnt() {
	rdma statistic show link "$1/1" | tr ' ' '\n' |
		awk -v k="$2" 'p { print; exit } $0 == k { p = 1 }'
}

# pingpong DESC N: one ibv_rc_pingpong of N 4 KiB messages, payload checked.
pingpong() {
	dp_pair "$1" 120 \
		ibv_rc_pingpong -d @DEV@ -g @GID4@ -s 4096 -n "$2" -c -- \
		ibv_rc_pingpong -d @DEV@ -g @GID4@ -s 4096 -n "$2" -c @SRV4@
}

dp_setup
check "netem holds h2's frames ${DELAY_MS} ms" \
	tc -n h2 qdisc add dev v2 root netem delay "${DELAY_MS}ms" limit 10000

# timeouts: the retransmission timeouts of both devices.
timeouts() {
	echo $(($(cnt sroce0 retransmit_timeouts) + $(cnt sroce1 retransmit_timeouts)))
}

t0=$(timeouts)
pingpong "first QPs, 10 messages, no estimate yet" 10
t1=$(timeouts)
diag "first QPs: retransmit_timeouts $t0 -> $t1"
check "the first QPs timed out before their ACKs came ($((t1 - t0)) timeouts)" \
	test "$((t1 - t0))" -ge 1

for ((i = 1; i <= RUNS; i++)); do
	pingpong "new QPs $i of $RUNS, 3 messages" 3
done
t2=$(timeouts)
diag "$((2 * RUNS)) new QPs: retransmit_timeouts $t1 -> $t2" \
	"(sroce0 $(cnt sroce0 retransmit_timeouts), sroce1 $(cnt sroce1 retransmit_timeouts))"
check "$((2 * RUNS)) new QPs started from the device's estimate ($((t2 - t1)) timeouts)" \
	test "$((t2 - t1))" -lt "$((2 * RUNS))"
check "remove the delay" tc -n h2 qdisc del dev v2 root
pingpong "a new QP on the undelayed link" 20
done_testing
