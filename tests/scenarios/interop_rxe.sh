#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Interoperability with the kernel's rdma_rxe on the wire: VM b serves, VM a
# is the client, first with sroce on VM a and rdma_rxe on VM b, then the
# other way round (each VM unloads its module and loads the other one), so
# that sroce is requester and responder of every operation against rxe:
#
#   ibv_rc_pingpong -c at 1 B, 4 KiB and 1 MiB (IPv4 GID), 64 KiB (IPv6 GID)
#   rping -V and udaddy through the RDMA CM (MADs on the GSI QPs)
#   the integrity tool, every case over the IPv4 GID, at most 1 MiB of
#   payload per case (at least two messages: every size and variant still
#   crosses the wire both ways; INTEGRITY_ARGS replaces the options, e.g.
#   with "" for the tool's 8 MiB)
#   ib_send_bw, ib_write_bw, ib_read_bw and ib_atomic_bw with fixed
#   iteration counts
#
# topology: twovm
# kernels: 6.1
# timeout: 900
# requires: sroce

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=datapath_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/datapath_lib.sh"
# shellcheck source=integrity_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/integrity_lib.sh"

pt() { dp_perftest "$P: " "$@"; }
INTEGRITY_ARGS=${INTEGRITY_ARGS---budget 1048576}

# part SUFFIX A_MODULE A_TYPE A_DEV B_MODULE B_TYPE B_DEV (see dp_attach_role)
part() {
	local sfx=$1 size n
	shift
	P="$2 client, $5 server"
	barrier "part-$sfx" 300 || bail "VM $PEER did not reach part $sfx"
	dp_attach_role "$@"
	INTEGRITY_DEV=$DP_DEV

	# 50 round trips, but 10 of a MiB: rdma_rxe moves 100 MiB in half a
	# minute here, and ten prove what fifty do.
	for size in 1 4096 1048576; do
		n=50
		[ "$size" -lt 1048576 ] || n=10
		dp_pair "$P: ibv_rc_pingpong -s $size -c (IPv4 GID)" 300 \
			ibv_rc_pingpong -d @DEV@ -g @GID4@ -s "$size" -n "$n" -c -- \
			ibv_rc_pingpong -d @DEV@ -g @GID4@ -s "$size" -n "$n" -c @SRV4@
	done
	dp_pair "$P: ibv_rc_pingpong -s 65536 -c (IPv6 GID, IPv4 control connection)" 300 \
		ibv_rc_pingpong -d @DEV@ -g @GID6@ -s 65536 -n 50 -c -- \
		ibv_rc_pingpong -d @DEV@ -g @GID6@ -s 65536 -n 50 -c @SRV4@

	# Connection management: CM and SIDR MADs between the GSI QPs.
	dp_pair "$P: rping -V -C 20 (RDMA CM)" 120 \
		rping -s -a @SRV4@ -p 18710 -V -C 20 -S 1000 -- \
		rping -c -a @SRV4@ -p 18710 -V -C 20 -S 1000
	dp_pair "$P: udaddy (RDMA CM, SIDR)" 120 \
		udaddy -b @SRV4@ -c 2 -C 20 -- \
		udaddy -s @SRV4@ -c 2 -C 20

	# rdma_rxe answers a READ in one burst, which overflows the transmit
	# queue, and answers a re-request only after the whole burst: with
	# the default 67 ms ACK timeout a requester runs out of retries on a
	# 4 MiB READ before the re-sent responses come. 537 ms is enough.
	# shellcheck disable=SC2086
	integrity_session "$P integrity" "$DP_SRV_GID4" "$PEER_IP4" \
		--ack-timeout 17 ${INTEGRITY_ARGS:-}

	pt ib_send_bw -s 65536 -n 200
	pt ib_write_bw -s 4096 -n 1000
	pt ib_write_bw -s 1048576 -n 20
	pt ib_read_bw -s 65536 -n 200 -o 4
	pt ib_atomic_bw -n 500 -A FETCH_AND_ADD

	barrier "part-$sfx-end" 300
	[ "$ROLE" = a ] && dp_stats "$DP_DEV" >&2
	dp_detach "$DP_MODULE" "$DP_DEV"
}

[ -x "$INTEGRITY_TOOL" ] ||
	bail "$INTEGRITY_TOOL is missing: build it on the host with 'make -C tools'"
# A private copy: the host's tools/bin may be rebuilt while this runs.
cp "$INTEGRITY_TOOL" /tmp/sroce-integrity || bail "cannot copy $INTEGRITY_TOOL"
INTEGRITY_TOOL=/tmp/sroce-integrity

part 1 sroce sroce sroce0 rdma_rxe rxe rxe0
part 2 rdma_rxe rxe rxe0 sroce sroce sroce0
barrier interop-done 300
done_testing
