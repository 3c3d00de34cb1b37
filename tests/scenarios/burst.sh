#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Transmit bursts between two VMs, over virtio-net, which splits them
# (see Documentation/admin-guide.rst, "Transmit bursts"). VM b serves the
# integrity tool, VM a runs its RC cases (SEND, WRITE, READ: the
# requester's bursts and the READ responder's), and every run's data is
# checked:
#   default: tx_burst is 64, and bursts go out on both sides;
#   drops:   both VMs queue their frames behind netem (1 ms, at most 3
#            packets): the local queue refuses whole bursts, which
#            tx_queue_full counts, and the requester and READ responder
#            send them again; the data still arrives whole;
#   single:  tx_burst=1 and ack_coalesce=N, set at run time: no burst
#            forms, and every request that asks for an ACK gets its own.
# ACK coalescing is checked alongside: by default the responders answer
# the requests of a receive batch with one ACK (acks_coalesced), and the
# READ responder sends the responses to the READs of a batch together at
# its end (resp_batched); with ack_coalesce=N neither happens.
#
# topology: twovm
# kernels: none
# timeout: 1200
# requires: sroce

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/datapath_lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/integrity_lib.sh"

PARAM=/sys/module/sroce/parameters/tx_burst
ACKPARAM=/sys/module/sroce/parameters/ack_coalesce
CASES=rc_send,rc_write,rc_read

stat_of() {
	dp_stats "$1" | awk -v n="$2" '$1 == n { v = $2 } END { print v + 0 }'
}

# session NAME [ARGS...]: the integrity cases between the VMs; each side
# then shares how many bursts, queue refusals and coalesced ACKs it
# counted meanwhile.
session() {
	local name=$1 b0 q0 c0 r0
	shift
	b0=$(stat_of sroce0 tx_bursts) q0=$(stat_of sroce0 tx_queue_full)
	c0=$(stat_of sroce0 acks_coalesced)
	r0=$(stat_of sroce0 resp_batched)
	integrity_session "$name" "$G4" "$NET4_B" --tests "$CASES" "$@"
	put "$name.bursts.$ROLE" $(($(stat_of sroce0 tx_bursts) - b0))
	put "$name.refused.$ROLE" $(($(stat_of sroce0 tx_queue_full) - q0))
	put "$name.coalesced.$ROLE" $(($(stat_of sroce0 acks_coalesced) - c0))
	put "$name.batched.$ROLE" $(($(stat_of sroce0 resp_batched) - r0))
	BURSTS_A=$(get "$name.bursts.a" 120) BURSTS_B=$(get "$name.bursts.b" 120)
	REFUSED_A=$(get "$name.refused.a" 120)
	REFUSED_B=$(get "$name.refused.b" 120)
	COALESCED_A=$(get "$name.coalesced.a" 120)
	COALESCED_B=$(get "$name.coalesced.b" 120)
	BATCHED_B=$(get "$name.batched.b" 120)
	diag "$name: bursts a $BURSTS_A, b $BURSTS_B; refused by the queue a $REFUSED_A, b $REFUSED_B; ACKs coalesced a $COALESCED_A, b $COALESCED_B; READ responses batched b $BATCHED_B"
}

check "modprobe sroce" modprobe sroce || bail "sroce does not load"
check "rdma link add sroce0 type sroce netdev eth0" \
	rdma link add sroce0 type sroce netdev eth0 || bail "no sroce0"
check_wait "sroce0 active" 30 port_is sroce0 PORT_ACTIVE
G4=$(_integrity_gid sroce0 "$(gid_v4 "$MY_IP4")") || bail "no IPv4 GID"
INTEGRITY_DEV=sroce0
expect_eq "tx_burst is 64 by default" 64 "$(cat "$PARAM")"
expect_eq "ack_coalesce is on by default" Y "$(cat "$ACKPARAM")"

session default --budget $((2 << 20))
if [ "$ROLE" = a ]; then
	check "default: the requester sent bursts ($BURSTS_A)" [ "$BURSTS_A" -gt 0 ]
	check "default: the READ responder sent bursts ($BURSTS_B)" [ "$BURSTS_B" -gt 0 ]
	check "default: the responder coalesced ACKs ($COALESCED_B)" [ "$COALESCED_B" -gt 0 ]
	check "default: READ responses waited for the end of their batch ($BATCHED_B)" \
		[ "$BATCHED_B" -gt 0 ]
fi

check "netem on eth0, 1 ms, at most 3 packets queued" \
	tc qdisc replace dev eth0 root netem delay 1ms limit 3
session drops --budget $((1 << 20)) --window 64
check "netem off" tc qdisc del dev eth0 root
if [ "$ROLE" = a ]; then
	check "drops: the queue refused packets (a $REFUSED_A, b $REFUSED_B)" \
		[ $((REFUSED_A + REFUSED_B)) -gt 0 ]
fi
expect_eq "drops: no QP ran out of retries" 0 "$(stat_of sroce0 retry_exceeded)"

check "tx_burst=1 at run time" sh -c "echo 1 > $PARAM"
check "ack_coalesce=N at run time" sh -c "echo N > $ACKPARAM"
session single --budget $((1 << 20))
if [ "$ROLE" = a ]; then
	expect_eq "single: no burst on a" 0 "$BURSTS_A"
	expect_eq "single: no burst on b" 0 "$BURSTS_B"
	expect_eq "single: no ACK coalesced on a" 0 "$COALESCED_A"
	expect_eq "single: no ACK coalesced on b" 0 "$COALESCED_B"
	expect_eq "single: no READ response waited for its batch" 0 "$BATCHED_B"
fi
check "tx_burst back to 64" sh -c "echo 64 > $PARAM"
check "ack_coalesce back on" sh -c "echo Y > $ACKPARAM"

barrier finished 120
done_testing
