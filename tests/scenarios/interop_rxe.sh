#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Interoperability with the kernel's rdma_rxe on the wire: VM b serves, VM a
# is the client, first with sroce on VM a and rdma_rxe on VM b, then the
# other way round (each VM unloads its module and loads the other one), so
# that sroce is requester and responder of every operation against rxe:
#
#   ibv_rc_pingpong -c at 1 B, 4 KiB and 1 MiB (IPv4 GID), 64 KiB (IPv6 GID)
#   the integrity tool, every case over the IPv4 GID (INTEGRITY_ARGS adds
#   client options, e.g. --quick)
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

# attach MODULE TYPE DEV: load MODULE and put DEV on eth0; sets the
# datapath_lib and integrity_lib variables for this VM's side.
attach() {
	local module=$1 type=$2 dev=$3
	check "$P: modprobe $module" modprobe "$module" || bail "cannot load $module"
	check "$P: rdma link add $dev type $type netdev eth0" \
		rdma link add "$dev" type "$type" netdev eth0 || bail "cannot add $dev"
	check_wait "$P: $dev port active" 30 port_is "$dev" PORT_ACTIVE
	wait_until 30 gid_index "$dev" "$(gid_v4 "$MY_IP4")"
	wait_until 30 gid_index "$dev" "$(gid_v6 "$MY_IP6")"
	DP_SRV_DEV=$dev DP_CLI_DEV=$dev
	DP_SRV_GID4=$(gid_index "$dev" "$(gid_v4 "$MY_IP4")")
	DP_SRV_GID6=$(gid_index "$dev" "$(gid_v6 "$MY_IP6")")
	[ -n "$DP_SRV_GID4" ] && [ -n "$DP_SRV_GID6" ] ||
		bail "no RoCE v2 GIDs on $dev: $(gid_table "$dev")"
	DP_CLI_GID4=$DP_SRV_GID4 DP_CLI_GID6=$DP_SRV_GID6
	DP_SRV_IP4=$NET4_B DP_SRV_IP6=$NET6_B
	INTEGRITY_DEV=$dev
	log "$dev: GID indices IPv4 $DP_SRV_GID4, IPv6 $DP_SRV_GID6"
}

# detach MODULE DEV: remove DEV and unload MODULE, so that the other
# driver may load in this kernel.
detach() {
	local module=$1 dev=$2
	check "$P: rdma link delete $dev" rdma link delete "$dev"
	check_wait "$P: $dev is gone" 10 ibdev_gone "$dev"
	check "$P: rmmod $module" rmmod "$module"
}

pt() { dp_perftest "$P: " "$@"; }

# part SUFFIX A_MODULE A_TYPE A_DEV B_MODULE B_TYPE B_DEV
part() {
	local sfx=$1 mod type dev
	if [ "$ROLE" = a ]; then
		mod=$2 type=$3 dev=$4
	else
		mod=$5 type=$6 dev=$7
	fi
	P="$3 client, $6 server"
	barrier "part-$sfx" 300 || bail "VM $PEER did not reach part $sfx"
	attach "$mod" "$type" "$dev"

	for size in 1 4096 1048576; do
		dp_pair "$P: ibv_rc_pingpong -s $size -c (IPv4 GID)" 300 \
			ibv_rc_pingpong -d @DEV@ -g @GID4@ -s "$size" -n 50 -c -- \
			ibv_rc_pingpong -d @DEV@ -g @GID4@ -s "$size" -n 50 -c @SRV4@
	done
	dp_pair "$P: ibv_rc_pingpong -s 65536 -c (IPv6 GID, IPv4 control connection)" 300 \
		ibv_rc_pingpong -d @DEV@ -g @GID6@ -s 65536 -n 50 -c -- \
		ibv_rc_pingpong -d @DEV@ -g @GID6@ -s 65536 -n 50 -c @SRV4@

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
	[ "$ROLE" = a ] && dp_stats "$dev" >&2
	detach "$mod" "$dev"
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
