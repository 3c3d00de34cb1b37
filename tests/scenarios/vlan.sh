#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# sroce over an 802.1Q VLAN between two VMs. VLAN 100 on each VM's eth0
# carries 198.19.100.0/24 and 2001:db8:100::/64. First VM a attaches
# sroce0 to the VLAN device eth0.100 itself, VM b attaches sroce0 to eth0:
# ibv_rc_pingpong with payload checks and a different SL on each side, and
# the integrity tool's quick set, over the VLAN device's link-local GIDs
# (the RDMA core gives a device on a VLAN device no other GID; the IPv4
# GID is a skip). Then VM a moves sroce0 to eth0 and both use the GIDs of
# their VLAN upper: ibv_rc_pingpong over IPv4 and IPv6, rping -V and
# ucmatose -t through the RDMA CM, which takes the SL from the ToS through
# VM a's egress-qos-map, and an untagged ibv_rc_pingpong over eth0's own
# GIDs. VM a captures the RoCEv2 frames on eth0 during each data test and
# checks both sides' frames: the 802.1Q tag (VLAN 100, priority = the
# sender's SL, or no tag), the IP TOS or traffic class. Last, VM b runs
# rdma_rxe on eth0 against sroce over the VLAN.
#
# topology: twovm
# kernels: none
# full-kernels: 6.1 6.12
# timeout: 600
# requires: sroce

# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=datapath_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/datapath_lib.sh"
# shellcheck source=integrity_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/integrity_lib.sh"

VID=100
VDEV=eth0.$VID
V4_A=198.19.100.1 V4_B=198.19.100.2
V6_A=2001:db8:100::1 V6_B=2001:db8:100::2
if [ "$ROLE" = a ]; then
	MY_V4=$V4_A PEER_V4=$V4_B MY_V6=$V6_A
else
	MY_V4=$V4_B PEER_V4=$V4_A MY_V6=$V6_B
fi
CAP=/tmp/vlan-cap

need_module sroce
check "modprobe 8021q" modprobe 8021q || bail "no 802.1Q support"
check "VLAN $VID on eth0" ip link add link eth0 name "$VDEV" type vlan id "$VID" ||
	bail "cannot add $VDEV"
ip addr add "$MY_V4/24" dev "$VDEV"
ip addr add "$MY_V6/64" dev "$VDEV" nodad
ip link set "$VDEV" up
barrier vlan-up || bail "peer did not set up the VLAN"
check_wait "the peer answers over VLAN $VID" 20 ping_ok "" "$PEER_V4" 1 ||
	bail "no traffic over the VLAN"

# gid_ndev DEV GID: the netdev of GID's RoCE v2 entry.
gid_ndev() {
	local g t n
	while read -r _ g t n; do
		[ "$g" = "$2" ] && [ "$t" = RoCE_v2 ] && { echo "$n"; return 0; }
	done < <(gid_table "$1")
	return 1
}

# gid_on DEV GID NETDEV: the index of GID's RoCE v2 entry of NETDEV (a
# base device holds its VLAN upper's link-local GID besides its own).
gid_on() {
	local i g t n
	while read -r i g t n; do
		[ "$g" = "$2" ] && [ "$t" = RoCE_v2 ] && [ "$n" = "$3" ] &&
			{ echo "$i"; return 0; }
	done < <(gid_table "$1")
	return 1
}

# This VM's IPv6 link-local address (the VLAN device shares eth0's MAC).
if [ "$ROLE" = a ]; then MY_LL=$(eui64_guid "$MAC_A"); else MY_LL=$(eui64_guid "$MAC_B"); fi
MY_LL=fe80:0000:0000:0000:$MY_LL

# attach NETDEV: sroce0 on NETDEV, ready for dp_pair: GID4/GID6 the
# indices of this VM's VLAN addresses (when the device has them), GIDLL
# that of the VLAN device's link-local address.
attach() {
	rdma link delete sroce0 >/dev/null 2>&1
	wait_until 10 ibdev_gone sroce0
	check "rdma link add sroce0 type sroce netdev $1" \
		rdma link add sroce0 type sroce netdev "$1" || bail "cannot add sroce0"
	check_wait "sroce0 on $1 active" 30 port_is sroce0 PORT_ACTIVE
	check_wait "sroce0 on $1 has the link-local GID of $VDEV" 30 \
		gid_on sroce0 "$MY_LL" "$VDEV"
	GIDLL=$(gid_on sroce0 "$MY_LL" "$VDEV")
	# shellcheck disable=SC2034 # for dp_pair
	DP_SRV_DEV=sroce0 DP_CLI_DEV=sroce0
	DP_SRV_IP4=$V4_B DP_SRV_IP6=$V6_B DP_CLI_IP4=$V4_A DP_CLI_IP6=$V6_A
	DP_SRV_GID4='' DP_SRV_GID6=''
	[ "$1" = "$VDEV" ] && return 0
	check_wait "sroce0 on $1 has the IPv4 GID of $VDEV" 30 \
		gid_on sroce0 "$(gid_v4 "$MY_V4")" "$VDEV"
	check_wait "sroce0 on $1 has the IPv6 GID of $VDEV" 30 \
		gid_on sroce0 "$(gid_v6 "$MY_V6")" "$VDEV"
	DP_SRV_GID4=$(gid_on sroce0 "$(gid_v4 "$MY_V4")" "$VDEV")
	DP_SRV_GID6=$(gid_on sroce0 "$(gid_v6 "$MY_V6")" "$VDEV")
	# shellcheck disable=SC2034 # for dp_pair
	DP_CLI_GID4=$DP_SRV_GID4 DP_CLI_GID6=$DP_SRV_GID6
	gid_table sroce0 >&2
}

# cap_start: capture the RoCEv2 frames on eth0 (VM a), tagged or not.
cap_start() {
	[ "$ROLE" = a ] || return 0
	rm -f "$CAP.pcap" "$CAP.err"
	# Immediate mode: frames still in the capture buffer when tcpdump is
	# stopped would be lost, and a short exchange may be all of them.
	tcpdump --immediate-mode -i eth0 -nn -s 128 -w "$CAP.pcap" \
		'udp port 4791 or (vlan and udp port 4791)' 2>"$CAP.err" &
	CAP_PID=$!
	wait_until 10 grep -q 'listening on' "$CAP.err" ||
		log "tcpdump did not start: $(cat "$CAP.err")"
}

# cap_stop: end the capture; CAP_SUM gets one line per kind of frame:
# "COUNT SOURCE_MAC TAG TOS", TAG "untagged" or "VID/pPRIORITY", TOS the
# IPv4 TOS or IPv6 traffic class.
cap_stop() {
	[ "$ROLE" = a ] || return 0
	kill -INT "$CAP_PID" 2>/dev/null
	wait "$CAP_PID"
	cat "$CAP.err" >&2
	# The TOS or traffic class without its two ECN bits: RC packets carry
	# ECT(0) while the ecn module parameter is on, and tcpdump prints the
	# whole byte.
	CAP_SUM=$(tcpdump -r "$CAP.pcap" -e -nn -v 2>/dev/null | awk '
		function hexval(h,  i, v) {
			v = 0
			h = tolower(h)
			sub(/^0x/, "", h)
			for (i = 1; i <= length(h); i++)
				v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1
			return v
		}
		/^[0-9]/ {
			tag = "untagged"
			if (match($0, /vlan [0-9]+, p [0-9]+/)) {
				split(substr($0, RSTART, RLENGTH), w, /[ ,]+/)
				tag = w[2] "/p" w[4]
			}
			tos = "0x0"
			if (match($0, /\((tos|class) 0x[0-9a-f]+/)) {
				s = substr($0, RSTART, RLENGTH)
				sub(/.* /, "", s)
				tos = sprintf("0x%x", hexval(s) - hexval(s) % 4)
			}
			print $2, tag, tos
		}' | sort | uniq -c)
	log "captured frames:"
	log "$CAP_SUM"
}

# cap_expect WHO MAC TAG TOS MIN: all the captured frames from MAC carry
# TAG and TOS, and there are at least MIN of them.
cap_expect() {
	local who=$1 mac=$2 tag=$3 tos=$4 min=$5 lines n
	[ "$ROLE" = a ] || return 0
	lines=$(awk -v m="$mac" '$2 == m' <<<"$CAP_SUM")
	n=$(awk '{ n += $1 } END { print n + 0 }' <<<"$lines")
	if [ "$n" -ge "$min" ] && [ "$(awk '{ print $3, $4 }' <<<"$lines")" = "$tag $tos" ]; then
		ok "$who: $n frames, all $tag, TOS $tos"
	else
		not_ok "$who: at least $min frames, all $tag, TOS $tos" \
			"frames from $mac (count, source, tag, TOS):" "${lines:-none}"
	fi
}

n=100
[ "$SROCE_SLOW" -gt 1 ] && n=20

# --- VM a: sroce0 on the VLAN device; VM b: sroce0 on eth0 ----------------
# The RDMA core gives a RoCE device the IP-based GIDs of its netdev's
# addresses only when that netdev is the real device of the address's
# netdev (roce_gid_mgmt's is_eth_port_of_netdev_filter, 6.1 and 6.12): a
# device on a VLAN device gets its default, link-local GID alone. Over
# that GID, the VLAN carries RDMA; IP-addressed GIDs, and so the RDMA CM,
# need the device on the base netdev.
if [ "$ROLE" = a ]; then
	attach "$VDEV"
	expect_match "rdma link shows sroce0 on $VDEV" "netdev $VDEV( |$)" \
		"$(rdma link show sroce0/1 2>&1)"
	if wait_until 3 gid_index sroce0 "$(gid_v4 "$MY_V4")"; then
		ok "sroce0 on $VDEV has the IPv4 GID of $VDEV"
	else
		skip "sroce0 on $VDEV has the IPv4 GID of $VDEV" \
			"the RDMA core adds IP GIDs to a device on the real netdev only"
	fi
else
	attach eth0
	check_wait "sroce0 on eth0 keeps the IPv4 GID of eth0" 30 \
		gid_on sroce0 "$(gid_v4 "$MY_IP4")" eth0
fi

# Each side's frames carry its own SL: ibv_rc_pingpong -l sets the SL of
# its QP's address vector; its traffic class stays 0. VM b's source GID is
# its VLAN device's link-local one: the route must follow that GID's
# netdev.
DP_SRV_GID6=$GIDLL DP_CLI_GID6=$GIDLL
cap_start
dp_pair "ibv_rc_pingpong -c, link-local GIDs of VLAN $VID, SL 3 (a) and 6 (b)" 120 \
	ibv_rc_pingpong -d @DEV@ -g @GID6@ -l 6 -s 1024 -n "$n" -c -- \
	ibv_rc_pingpong -d @DEV@ -g @GID6@ -l 3 -s 1024 -n "$n" -c @SRV4@
cap_stop
cap_expect "frames of a (sroce on $VDEV)" "$MAC_A" "$VID/p3" 0x0 "$n"
cap_expect "frames of b (sroce on eth0, GID of $VDEV)" "$MAC_B" "$VID/p6" 0x0 "$n"

INTEGRITY_DEV=sroce0
integrity_session vlan "$GIDLL" "$PEER_V4" --quick

# --- VM a's device moves to eth0: both use their VLAN upper's GIDs ---------
barrier vlan-base || bail "peer gone"
if [ "$ROLE" = a ]; then
	attach eth0
else
	DP_SRV_GID4=$(gid_on sroce0 "$(gid_v4 "$MY_V4")" "$VDEV")
	DP_SRV_GID6=$(gid_on sroce0 "$(gid_v6 "$MY_V6")" "$VDEV")
	DP_CLI_GID4=$DP_SRV_GID4 DP_CLI_GID6=$DP_SRV_GID6
fi

cap_start
dp_pair "ibv_rc_pingpong -c, IPv4 GIDs of VLAN $VID, SL 5 (a) and 1 (b)" 120 \
	ibv_rc_pingpong -d @DEV@ -g @GID4@ -l 1 -s 1024 -n "$n" -c -- \
	ibv_rc_pingpong -d @DEV@ -g @GID4@ -l 5 -s 1024 -n "$n" -c @SRV4@
cap_stop
cap_expect "IPv4 frames of a" "$MAC_A" "$VID/p5" 0x0 "$n"
cap_expect "IPv4 frames of b" "$MAC_B" "$VID/p1" 0x0 "$n"

cap_start
dp_pair "ibv_rc_pingpong -c, IPv6 GIDs of VLAN $VID, SL 2 (a) and 7 (b)" 120 \
	ibv_rc_pingpong -d @DEV@ -g @GID6@ -l 7 -s 4096 -n 50 -c -- \
	ibv_rc_pingpong -d @DEV@ -g @GID6@ -l 2 -s 4096 -n 50 -c @SRV4@
cap_stop
cap_expect "IPv6 frames of a" "$MAC_A" "$VID/p2" 0x0 50
cap_expect "IPv6 frames of b" "$MAC_B" "$VID/p7" 0x0 50

# The RDMA CM maps the ToS to a priority (rt_tos2priority: 0 -> 0, 0xb8
# -> 4) and that through the VLAN device's egress-qos-map to the SL of the
# path; the passive side takes the SL and traffic class of the request.
if [ "$ROLE" = a ]; then
	check "egress-qos-map 0:2 4:5 on $VDEV" \
		ip link set "$VDEV" type vlan egress-qos-map 0:2 4:5
fi
cap_start
dp_pair "rping -V -C $n over VLAN $VID (ToS 0)" 120 \
	rping -s -a @SRV4@ -p 18700 -V -C "$n" -S 1000 -- \
	rping -c -a @SRV4@ -p 18700 -V -C "$n" -S 1000
cap_stop
cap_expect "rping frames of a" "$MAC_A" "$VID/p2" 0x0 "$n"
cap_expect "rping frames of b" "$MAC_B" "$VID/p2" 0x0 "$n"

cap_start
dp_pair "ucmatose -t 0xb8 over VLAN $VID: 2 connections, $n messages each" 120 \
	ucmatose -b @SRV4@ -p 18702 -c 2 -C "$n" -- \
	ucmatose -s @SRV4@ -p 18702 -c 2 -C "$n" -t 0xb8
cap_stop
cap_expect "ucmatose frames of a" "$MAC_A" "$VID/p5" 0xb8 "$n"
cap_expect "ucmatose frames of b" "$MAC_B" "$VID/p5" 0xb8 "$n"
[ "$ROLE" = a ] && ip link set "$VDEV" type vlan egress-qos-map 0:0 4:0

# The untagged path is unchanged.
g4=$(gid_on sroce0 "$(gid_v4 "$MY_IP4")" eth0)
vg4=$DP_SRV_GID4
DP_SRV_GID4=$g4 DP_CLI_GID4=$g4 DP_SRV_IP4=$NET4_B
cap_start
dp_pair "ibv_rc_pingpong -c untagged, SL 4" 120 \
	ibv_rc_pingpong -d @DEV@ -g @GID4@ -l 4 -s 1024 -n "$n" -c -- \
	ibv_rc_pingpong -d @DEV@ -g @GID4@ -l 4 -s 1024 -n "$n" -c @SRV4@
cap_stop
cap_expect "untagged frames of a" "$MAC_A" untagged 0x0 "$n"
cap_expect "untagged frames of b" "$MAC_B" untagged 0x0 "$n"

# --- rdma_rxe on VM b's base device, over the VLAN ------------------------
# rdma_rxe refuses a VLAN device but serves its base device's VLAN GIDs.
# It sends through the VLAN device, whose egress-qos-map sets the
# priority (none here: 0), so only a's frames are checked.
DP_SRV_GID4=$vg4 DP_CLI_GID4=$vg4 DP_SRV_IP4=$V4_B
if [ "$ROLE" = b ]; then
	rdma link delete sroce0 >/dev/null 2>&1
	wait_until 10 ibdev_gone sroce0
	check "rmmod sroce" rmmod sroce
	check "modprobe rdma_rxe" modprobe rdma_rxe
	check_fail "rdma_rxe refuses $VDEV" rdma link add rxe1 type rxe netdev "$VDEV"
	check "rdma link add rxe0 type rxe netdev eth0" \
		rdma link add rxe0 type rxe netdev eth0
	check_wait "rxe0 has the IPv4 GID of $VDEV" 30 \
		gid_index rxe0 "$(gid_v4 "$MY_V4")"
	DP_SRV_DEV=rxe0
	DP_SRV_GID4=$(gid_index rxe0 "$(gid_v4 "$MY_V4")")
fi
cap_start
dp_pair "ibv_rc_pingpong -c, sroce (a) against rdma_rxe (b) over VLAN $VID" 120 \
	ibv_rc_pingpong -d @DEV@ -g @GID4@ -s 1024 -n "$n" -c -- \
	ibv_rc_pingpong -d @DEV@ -g @GID4@ -l 7 -s 1024 -n "$n" -c @SRV4@
cap_stop
cap_expect "frames of a (sroce on eth0, GID of $VDEV) to rdma_rxe" "$MAC_A" "$VID/p7" 0x0 "$n"
barrier vlan-done 120
if [ "$ROLE" = b ]; then
	check "rdma link delete rxe0" rdma link delete rxe0
else
	check "rdma link delete sroce0" rdma link delete sroce0
fi
done_testing
