#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: netns
# kernels: 6.1
# full-kernels: 6.12
# requires: sroce
# timeout: 400
#
# RoCE v1 beside RoCEv2, between sroce0 (h1) and sroce1 (h2): the GID
# table lists a RoCE v1 entry for each address beside its RoCE v2 entry;
# ibv_rc_pingpong (payload checked) over the v1 GIDs of the IPv4 and the
# IPv6 address, WRITEs and READs (perftest) over v1, and the RDMA CM (rping
# -V, payload checked) with the devices' default RoCE mode set to v1
# through configfs. Every frame is captured on h1's veth: roce_pcap.py
# checks that the v1 traffic went out as Ethertype 0x8915 frames (GRH,
# then BTH) with a right ICRC, and that none of it went as UDP; RoCEv2
# traffic of the same devices must go on as before. rdma_rxe cannot take
# part: it offers RoCE v2 only.
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=datapath_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/datapath_lib.sh"

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

dp_setup
v1_cli4=$(gid_index "$DP_CLI_DEV" "$(gid_v4 "$DP_CLI_IP4")" "IB/RoCE v1")
v1_cli6=$(gid_index "$DP_CLI_DEV" "$(gid_v6 "$DP_CLI_IP6")" "IB/RoCE v1")
v1_srv4=$(gid_index "$DP_SRV_DEV" "$(gid_v4 "$DP_SRV_IP4")" "IB/RoCE v1")
v1_srv6=$(gid_index "$DP_SRV_DEV" "$(gid_v6 "$DP_SRV_IP6")" "IB/RoCE v1")
for v in v1_cli4 v1_cli6 v1_srv4 v1_srv6; do
	if [ -n "${!v}" ]; then
		ok "RoCE v1 GID listed ($v: index ${!v})"
	else
		not_ok "RoCE v1 GID listed ($v)" "$(gid_table "$DP_CLI_DEV"; gid_table "$DP_SRV_DEV")"
	fi
done
[ -n "$v1_cli4" ] && [ -n "$v1_cli6" ] && [ -n "$v1_srv4" ] && [ -n "$v1_srv6" ] ||
	bail "no RoCE v1 GIDs"

# capture: start tcpdump on h1's veth into a new file, $pcap; it has
# started once the file holds its header.
capture() {
	rm -f "${pcap:-}"
	pcap=$(mktemp --suffix=.pcap)
	ip netns exec "$DP_CLI_NS" tcpdump --immediate-mode -Z root -i v1 -s 0 -U -w "$pcap" \
		'ether proto 0x8915 or udp port 4791' 2>/dev/null &
	capture_pid=$!
	wait_until 10 test -s "$pcap"
}

capture_end() {
	kill -INT "$capture_pid" 2>/dev/null
	wait "$capture_pid" 2>/dev/null
}

# The v1 GIDs take the place of the v2 ones in the data-path helpers.
v2_gids=("$DP_CLI_GID4" "$DP_CLI_GID6" "$DP_SRV_GID4" "$DP_SRV_GID6")
DP_CLI_GID4=$v1_cli4 DP_CLI_GID6=$v1_cli6 DP_SRV_GID4=$v1_srv4 DP_SRV_GID6=$v1_srv6

capture
n=20
dp_pair "ibv_rc_pingpong -s 5000 -n $n over RoCE v1 (IPv4 GID)" 120 \
	ibv_rc_pingpong -d @DEV@ -g @GID4@ -s 5000 -n "$n" -c -- \
	ibv_rc_pingpong -d @DEV@ -g @GID4@ -s 5000 -n "$n" -c @SRV4@
dp_pair "ibv_rc_pingpong -s 5000 -n $n over RoCE v1 (IPv6 GID)" 120 \
	ibv_rc_pingpong -d @DEV@ -g @GID6@ -s 5000 -n "$n" -c -- \
	ibv_rc_pingpong -d @DEV@ -g @GID6@ -s 5000 -n "$n" -c @SRV4@
dp_perftest "RoCE v1: " ib_write_bw -n 20 -s 8192
dp_perftest "RoCE v1: " ib_read_bw -n 20 -s 8192
capture_end
dp_tap_tool "RoCE v1 verbs on the wire" 60 "$here/roce_pcap.py" "$pcap" --kinds v1 \
	--expect SEND_FIRST,SEND_MIDDLE,SEND_LAST,WRITE_FIRST,WRITE_LAST,READ_REQUEST,READ_RESPONSE_FIRST,READ_RESPONSE_LAST,ACKNOWLEDGE

# The RDMA CM picks its GID by the port's default RoCE mode.
cfg=/sys/kernel/config/rdma_cm
# Loading configfs makes its mount point.
modprobe -q rdma_cm 2>/dev/null
mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
set_mode() {
	local dev
	for dev in "$DP_CLI_DEV" "$DP_SRV_DEV"; do
		mkdir -p "$cfg/$dev" && echo "$1" >"$cfg/$dev/ports/1/default_roce_mode" || return
	done
}
check "RDMA CM default RoCE mode of both devices set to RoCE v1" set_mode "IB/RoCE v1"
capture
dp_pair "rping -V -C 20 over RoCE v1 (RDMA CM, IPv4)" 120 \
	rping -s -a @SRV4@ -p 18750 -V -C 20 -S 1000 -- \
	rping -c -a @SRV4@ -p 18750 -V -C 20 -S 1000
capture_end
dp_tap_tool "RDMA CM over RoCE v1 on the wire" 60 "$here/roce_pcap.py" "$pcap" --kinds v1 \
	--expect SEND_ONLY,READ_REQUEST,WRITE_ONLY
check "RDMA CM default RoCE mode set back to RoCE v2" set_mode "RoCE v2"
for dev in "$DP_CLI_DEV" "$DP_SRV_DEV"; do rmdir "$cfg/$dev" 2>/dev/null; done

# RoCEv2 on the same devices, as before.
DP_CLI_GID4=${v2_gids[0]} DP_CLI_GID6=${v2_gids[1]}
DP_SRV_GID4=${v2_gids[2]} DP_SRV_GID6=${v2_gids[3]}
capture
dp_pair "ibv_rc_pingpong -s 5000 -n $n over RoCE v2 beside v1" 120 \
	ibv_rc_pingpong -d @DEV@ -g @GID4@ -s 5000 -n "$n" -c -- \
	ibv_rc_pingpong -d @DEV@ -g @GID4@ -s 5000 -n "$n" -c @SRV4@
capture_end
dp_tap_tool "RoCE v2 on the wire" 60 "$here/roce_pcap.py" "$pcap" --kinds v4 \
	--expect SEND_FIRST,SEND_LAST,ACKNOWLEDGE
rm -f "$pcap"
diag "$(dp_stats "$DP_CLI_DEV")"
done_testing
