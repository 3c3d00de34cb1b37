#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# UCX (Debian 12's 1.13) over sroce between two guests, through UCX's
# verbs transports: ucx_info must list sroce0:1 under rc_verbs and
# ud_verbs; then ucx_perftest's UCT tests over rc_verbs on sroce0:1 (put
# bandwidth and get, zero copy, 64 KiB; active message latency), a fixed
# and small number of iterations each. ucx_perftest exchanges the UCT
# addresses over its own TCP connection and fails on any transport error;
# it checks no data.
#
# Then ud_verbs: UCT active messages (latency, and bandwidth of bcopy
# messages), and UCP over ud_verbs alone (UCX_TLS=ud_verbs,self: tag
# latency, tag bandwidth of 64 KiB messages and put bandwidth, which UCP
# emulates with messages over UD). UCX takes from each UD receive
# completion's SL whether the GRH image in front of the datagram holds an
# IPv4 or an IPv6 header, and drops the datagrams whose image names no
# local GID: with an SL that did not say IPv4, every datagram was dropped
# and UCX ended with "UD endpoint ... unhandled timeout". Last,
# tools/bin/sroce-ucpcheck checks every byte of tagged messages (1 B to
# 1 MiB, eager and rendezvous), gets and puts, over ud_verbs alone and
# over rc_verbs with ud_verbs as Open MPI uses them (UCP wires rc_verbs up
# through ud_verbs); its checks become this scenario's, and the lanes UCP
# chose must be on sroce0:1.
#
# topology: twovm
# kernels: 6.12
# full-kernels: 6.1
# timeout: 300
# requires: sroce

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/datapath_lib.sh"

UCPCHECK=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/tools/bin/sroce-ucpcheck
command -v ucx_perftest >/dev/null || bail "ucx_perftest is not installed (ucx-utils)"
[ -x "$UCPCHECK" ] || bail "$UCPCHECK is missing: make -C tools"

dp_setup

# ucx_info -d: the transports that list sroce0:1 as their device.
info=$(ucx_info -d 2>&1)
log "$info"
tls=$(awk '/# *Transport:/ { tl = $NF } /# *Device:/ && $NF == "sroce0:1" { print tl }' <<<"$info" | sort -u | tr '\n' ' ')
expect_match "ucx_info -d lists sroce0:1 under rc_verbs" '(^| )rc_verbs ' "$tls"
expect_match "ucx_info -d lists sroce0:1 under ud_verbs" '(^| )ud_verbs ' "$tls"

export UCX_NET_DEVICES=sroce0:1 UCX_TLS=rc_verbs
# ucx_perftest's warm-up is 10000 iterations unless told otherwise.
DP_PERFTEST_PORT=13400
pft() {
	local desc=$1
	shift
	DP_PERFTEST_PORT=$((DP_PERFTEST_PORT + 1))
	dp_pair "$desc" 120 \
		ucx_perftest -p "$DP_PERFTEST_PORT" -- \
		ucx_perftest @SRV4@ -p "$DP_PERFTEST_PORT" -w 10 "$@"
}
pft "rc_verbs: ucx_perftest UCT put_bw zcopy 64 KiB x 100" -t put_bw \
	-x rc_verbs -d sroce0:1 -D zcopy -s 65536 -n 100
pft "rc_verbs: ucx_perftest UCT get zcopy 64 KiB x 100" -t get \
	-x rc_verbs -d sroce0:1 -D zcopy -s 65536 -n 100
pft "rc_verbs: ucx_perftest UCT am_lat x 200" -t am_lat -x rc_verbs \
	-d sroce0:1 -n 200
pft "ud_verbs: ucx_perftest UCT am_lat x 200" -t am_lat -x ud_verbs \
	-d sroce0:1 -n 200
pft "ud_verbs: ucx_perftest UCT am_bw bcopy 512 B x 500" -t am_bw \
	-x ud_verbs -d sroce0:1 -D bcopy -s 512 -n 500
export UCX_TLS=ud_verbs,self
pft "ud_verbs: ucx_perftest UCP tag_lat x 200" -t tag_lat -n 200
pft "ud_verbs: ucx_perftest UCP tag_bw 64 KiB x 50" -t tag_bw -s 65536 -n 50
pft "ud_verbs: ucx_perftest UCP ucp_put_bw 64 KiB x 50" -t ucp_put_bw \
	-s 65536 -n 50

# ucpcheck LABEL LANE_ERE: sroce-ucpcheck over UCX_TLS, one round; its
# client's TAP lines (VM a) become this scenario's, and UCP's lanes must
# match LANE_ERE.
ucpcheck() {
	local label=$1 lanes=$2 out=/tmp/ucpcheck.out line n=0
	DP_PERFTEST_PORT=$((DP_PERFTEST_PORT + 1))
	rm -f "$out"
	# shellcheck disable=SC2016 # expanded by that bash
	dp_pair "$label: sroce-ucpcheck exits 0" 180 \
		"$UCPCHECK" -p "$DP_PERFTEST_PORT" -n 1 -- \
		bash -o pipefail -c '"${@:2}" | tee "$1"' _ "$out" \
		"$UCPCHECK" -p "$DP_PERFTEST_PORT" -n 1 @SRV4@
	[ "$ROLE" = a ] || return 0
	while IFS= read -r line; do
		case $line in
		"ok "*) ok "$label: ${line#* - }" ;;
		"not ok "*) not_ok "$label: ${line#* - }" ;;
		*) continue ;;
		esac
		n=$((n + 1))
	done <"$out"
	# Tag echo and delivery, four sizes of get and four of put.
	expect_eq "$label: sroce-ucpcheck reported all its checks" 10 "$n"
	expect_match "$label: UCP's lanes are on sroce0:1" "$lanes" "$(cat "$out")"
}
ucpcheck "ud_verbs" 'ud_verbs/sroce0:1'
export UCX_TLS=rc_verbs,ud_verbs,self
ucpcheck "rc_verbs,ud_verbs" 'rc_verbs/sroce0:1'
unset UCX_TLS UCX_NET_DEVICES
if [ "$ROLE" = a ]; then
	dp_stats "$DP_CLI_DEV" >&2
fi
done_testing
