#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Receive chains between two VMs (see Documentation/admin-guide.rst,
# "Receive chains"): virtio-net hands each guest its frames in batches, and
# the RoCEv2 socket's GRO hook chains the packets of one flow through the
# IP layer; sroce takes the chains apart. VM b serves the integrity tool,
# VM a runs its RC cases (SEND, WRITE, READ), and every run's data is
# checked:
#   chained:  rx_gro on (the default): both sides count packets that came
#             in chains (rx_gro_packets), over IPv4 and then over IPv6;
#   captured: a packet socket on VM b holds what it captures, unread, while
#             a session runs: each chain it saw is a clone that shares the
#             packets sroce takes apart. The data still arrives whole, and
#             the capture saw chains longer than the link's MTU;
#   garbage:  VM a sends random datagrams of 0 to 1100 bytes to VM b's port
#             4791 from one source port, one flow that is chained like any
#             other: VM b counts every one of them as a packet and as a
#             drop, and some of them came in chains;
#   alone:    rx_gro=N at run time: nothing is chained, and the data still
#             arrives whole.
#
# topology: twovm
# kernels: none
# full-kernels: 6.1 6.12
# timeout: 900
# requires: sroce

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/datapath_lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/integrity_lib.sh"

PARAM=/sys/module/sroce/parameters/rx_gro
CASES=rc_send,rc_write,rc_read
GARBAGE=${GRO_GARBAGE:-2000}
GARBAGE_PORT=40791
tmp=$(mktemp -d)


# drops_of: the sum of sroce0's drop counters, from one reading.
drops_of() {
	dp_stats sroce0 | awk -v list="$DP_DROPS" '
		BEGIN { n = split(list, w); for (i = 1; i <= n; i++) drop[w[i]] = 1 }
		$1 in drop { s += $2 }
		END { print s + 0 }'
}

# session NAME GIDX PEER [ARGS...]: the integrity cases between the VMs;
# each side then shares how many packets it took from chains meanwhile.
session() {
	local name=$1 gidx=$2 peer=$3 g0
	shift 3
	g0=$(dp_stat sroce0 rx_gro_packets)
	integrity_session "$name" "$gidx" "$peer" --tests "$CASES" "$@"
	put "$name.gro.$ROLE" $(($(dp_stat sroce0 rx_gro_packets) - g0))
	GRO_A=$(get "$name.gro.a" 120) GRO_B=$(get "$name.gro.b" 120)
	diag "$name: packets taken from chains: a $GRO_A, b $GRO_B"
}

# taken_since P0 N: whether rx_packets rose by N or more from P0.
taken_since() {
	[ $(($(dp_stat sroce0 rx_packets) - $1)) -ge "$2" ]
}

# capture_start: a packet socket on eth0 that takes IPv4 packets, keeps
# them queued until told to read them, and then reports the UDP ones to
# port 4791: how many, and the longest (from the IP header on).
capture_start() {
	/usr/bin/python3 - "$tmp/capture.go" >"$tmp/capture.out" 2>&1 <<'EOF' &
import os, socket, struct, sys, time
s = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(0x0800))
# SO_RCVBUFFORCE: past rmem_max, to hold many chains.
s.setsockopt(socket.SOL_SOCKET, 33, 16 << 20)
s.bind(("eth0", 0))
print("ready", flush=True)
while not os.path.exists(sys.argv[1]):
    time.sleep(0.2)
s.setblocking(False)
frames = longest = 0
while True:
    try:
        data = s.recv(1 << 17)
    except BlockingIOError:
        break
    if len(data) < 28 or data[9] != 17:
        continue
    ihl = (data[0] & 15) * 4
    if struct.unpack("!H", data[ihl + 2:ihl + 4])[0] != 4791:
        continue
    frames += 1
    longest = max(longest, len(data))
print("frames %d longest %d" % (frames, longest))
EOF
	CAPTURE_PID=$!
	wait_until 30 grep -q ready "$tmp/capture.out"
}

# garbage N DST: N random datagrams to DST's port 4791, all from one
# source port, without a UDP checksum, 32 at a time.
garbage() {
	/usr/bin/python3 - "$1" "$2" "$GARBAGE_PORT" <<'EOF'
import random, socket, sys, time
n, dst, sport = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
rnd = random.Random(4791)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
# SO_NO_CHECK: no UDP checksum, as RoCEv2 over IPv4 carries none.
s.setsockopt(socket.SOL_SOCKET, 11, 1)
s.bind(("", sport))
for i in range(n):
    s.sendto(rnd.randbytes(rnd.randrange(0, 1101)), (dst, 4791))
    if i % 32 == 31:
        time.sleep(0.002)
print("sent %d" % n)
EOF
}

check "modprobe sroce" modprobe sroce || bail "sroce does not load"
check "rdma link add sroce0 type sroce netdev eth0" \
	rdma link add sroce0 type sroce netdev eth0 || bail "no sroce0"
check_wait "sroce0 active" 30 port_is sroce0 PORT_ACTIVE
G4=$(_integrity_gid sroce0 "$(gid_v4 "$MY_IP4")") || bail "no IPv4 GID"
G6=$(_integrity_gid sroce0 "$(gid_v6 "$MY_IP6")") || bail "no IPv6 GID"
INTEGRITY_DEV=sroce0
expect_eq "rx_gro is on by default" Y "$(cat "$PARAM")"
expect_match "eth0 does GRO" 'generic-receive-offload: on' \
	"$(ethtool -k eth0)"

for ip in 4 6; do
	name=chained$ip gidx=$G4 peer=$NET4_B budget=$((2 << 20))
	[ "$ip" = 4 ] || name=chained6 gidx=$G6 peer=$NET6_B budget=$((1 << 20))
	session "$name" "$gidx" "$peer" --budget "$budget"
	[ "$ROLE" = a ] || continue
	check "$name: the responder took IPv$ip packets from chains ($GRO_B)" \
		[ "$GRO_B" -gt 0 ]
	check "$name: the requester took IPv$ip responses from chains ($GRO_A)" \
		[ "$GRO_A" -gt 0 ]
done

[ "$ROLE" = a ] || capture_start
session captured "$G4" "$NET4_B" --budget $((1 << 20))
if [ "$ROLE" = b ]; then
	: >"$tmp/capture.go"
	wait "$CAPTURE_PID"
	cap=$(cat "$tmp/capture.out")
	diag "captured: $(echo "$cap" | tail -n 1)"
	longest=$(echo "$cap" | awk '$1 == "frames" { print $4 }')
	mtu=$(cat /sys/class/net/eth0/mtu)
	check "captured: the capture saw a chain whole (${longest:-no} bytes, MTU $mtu)" \
		[ "${longest:-0}" -gt "$mtu" ]
	check "captured: chains were taken apart under the capture ($GRO_B)" \
		[ "$GRO_B" -gt 0 ]
fi

barrier garbage-ready 120
if [ "$ROLE" = b ]; then
	p0=$(dp_stat sroce0 rx_packets) d0=$(drops_of)
	g0=$(dp_stat sroce0 rx_gro_packets)
	put garbage.start 1
	get garbage.sent 300 >/dev/null
	# What is still on its way from the link.
	wait_until 30 taken_since "$p0" "$GARBAGE"
	sleep 1
	p=$(($(dp_stat sroce0 rx_packets) - p0)) d=$(($(drops_of) - d0))
	g=$(($(dp_stat sroce0 rx_gro_packets) - g0))
	diag "garbage: $GARBAGE sent, $p taken, $d dropped, $g from chains"
	expect_eq "garbage: every datagram reached sroce" "$GARBAGE" "$p"
	expect_eq "garbage: every datagram was counted as a drop" "$GARBAGE" "$d"
	check "garbage: datagrams came in chains ($g)" [ "$g" -gt 0 ]
else
	get garbage.start 120 >/dev/null
	check "garbage: $GARBAGE random datagrams to $NET4_B:4791" \
		garbage "$GARBAGE" "$NET4_B"
	put garbage.sent 1
fi
barrier garbage-done 120

check "rx_gro=N at run time" sh -c "echo N > $PARAM"
session alone "$G4" "$NET4_B" --budget $((1 << 20))
if [ "$ROLE" = a ]; then
	expect_eq "alone: nothing chained on a" 0 "$GRO_A"
	expect_eq "alone: nothing chained on b" 0 "$GRO_B"
fi
check "rx_gro back on" sh -c "echo Y > $PARAM"

barrier finished 120
rm -rf "$tmp"
done_testing
