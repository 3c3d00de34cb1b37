#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: netns
# kernels: 6.1
# full-kernels: 6.12
# requires: sroce
# timeout: 600
#
# Hostile peers (spoof_verbs.py): live RC and UC connections from sroce0 (h1,
# the victim) to sroce1 (h2, the peer) over the IPv6 GIDs take packets that
# tools/sroce-inject.py crafts in h2, from a third address added to v2 and
# from the peer's own address: duplicate READ, FLUSH and atomic requests
# with bad rkeys at the last PSN and half the PSN space away, in-sequence
# SENDs and WRITEs from the third address, another partition, a bad ICRC,
# malformed UC messages, CNPs (handled only from the peer's address and
# only with the ecn parameter on). Each connection must carry data unharmed
# afterwards, the victim's receives and memory must hold no attacker byte,
# and each drop counter must rise by the packets sent for its reason. A SEND
# with invalidate naming an ordinary region must be refused. A WRITE Middle
# with a wrong ICRC into pages of an on-demand region that are not mapped
# must leave nothing holding the region: its deregistration returns.
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=datapath_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/datapath_lib.sh"

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tool=$here/spoof_verbs.py
inject=$(cd "$here/../.." && pwd)/tools/sroce-inject.py
THIRD6=2001:db8::3

dp_setup
if [ -z "$DP_CLI_GID6" ] || [ -z "$DP_SRV_GID6" ]; then
	bail "no IPv6 GIDs"
fi
check "ICRC of the injector matches a captured packet" \
	/usr/bin/python3 "$inject" --selftest
check "a third address on v2: $THIRD6" \
	ip -n h2 addr add "$THIRD6/64" dev v2 nodad
dp_tap_tool "spoof" 300 "$tool" \
	--victim "$DP_CLI_DEV:$DP_CLI_GID6:$DP_CLI_IP6" \
	--peer "$DP_SRV_DEV:$DP_SRV_GID6:$DP_SRV_IP6" \
	--third "$THIRD6" --ns h2 --inject "$inject"
diag "$(dp_stats "$DP_CLI_DEV")"
done_testing
