#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Scale: 1000 RC QPs with traffic on each at once (ib_write_bw -q 1000),
# 10000 memory regions registered, used and deregistered (scale_mr.py, over
# rdma-core's RC test resources),
# and 1000 RDMA CM connections opened and closed (ucmatose, 250 at a time).
# Afterwards no QP, MR or CM ID may be left (rdma resource). On the debug
# kernel the harness adds its kmemleak scan.
#
# topology: netns
# kernels: 6.12
# full-kernels: 6.1
# timeout: 1800
# requires: sroce

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=datapath_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/datapath_lib.sh"

tool=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/scale_mr.py

# res_count DEV KIND: objects of KIND (qp, mr, cm_id) the RDMA core tracks
# on DEV, the GSI QP left out.
res_count() {
	rdma resource show "$2" 2>/dev/null | grep -w "$1" | grep -vc "lqpn 1 "
}

# stat_of DEV NAME: a counter of DEV's port.
stat_of() {
	dp_stats "$1" | awk -v n="$2" '$1 == n { v = $2 } END { print v + 0 }'
}

dp_setup
qp0=$(res_count sroce0 qp) mr0=$(res_count sroce0 mr)

dp_pair "ib_write_bw -q 1000: 1000 RC QPs, traffic on each" 900 \
	ib_write_bw -d @DEV@ -x @GID4@ -p 18800 -q 1000 -s 1024 -n 20 -- \
	ib_write_bw -d @DEV@ -x @GID4@ -p 18800 -q 1000 -s 1024 -n 20 @SRV4@
# The QPs together stay within what the path between the two devices
# queues: nothing is refused, so no QP waits out a timeout for a packet
# lost before it left the host.
for dev in sroce0 sroce1; do
	diag "$dev: $(dp_stats "$dev" | paste -sd' ')"
	expect_eq "$dev: no packet refused by the local queues" 0 \
		"$(stat_of "$dev" tx_queue_full)"
done
expect_eq "no QP ran out of retries" 0 "$(stat_of sroce0 retry_exceeded)"

mr_out=$(in_ns h1 timeout $((900 * SROCE_SLOW)) /usr/bin/python3 "$tool" \
	-d sroce0 -g "$DP_CLI_GID4" -n 10000 2>&1)
rc=$?
diag "$mr_out"
if [ $rc -eq 0 ]; then
	ok "10000 MRs registered, used and deregistered"
else
	not_ok "10000 MRs registered, used and deregistered" "$mr_out"
fi

for round in 1 2 3 4; do
	dp_pair "ucmatose -c 250 (connections $(((round - 1) * 250 + 1))-$((round * 250)))" 600 \
		ucmatose -b @SRV4@ -p 18801 -c 250 -C 2 -- \
		ucmatose -s @SRV4@ -p 18801 -c 250 -C 2
done

expect_eq "no QP left on sroce0" "$qp0" "$(res_count sroce0 qp)"
expect_eq "no MR left on sroce0" "$mr0" "$(res_count sroce0 mr)"
expect_eq "no CM ID left" 0 "$(rdma resource show cm_id 2>/dev/null | grep -c .)"
done_testing
