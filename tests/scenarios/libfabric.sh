#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# libfabric (Debian 12's 1.17) over sroce between two guests: fi_info's
# verbs provider must list the sroce0 domain, for MSG endpoints and for
# datagram ones, and verbs;ofi_rxm for RDM endpoints; then fi_pingpong
# from libfabric-bin with its data checks (-c: every received buffer
# compared against what the sender put in), at 4 KiB and 1 MiB over verbs
# MSG endpoints (RC QPs connected through the RDMA CM), at 1000 B over
# verbs datagram endpoints (UD QPs) and over verbs;ofi_rxm RDM endpoints
# at one size per rxm protocol: 4 KiB eager, 64 KiB segmented (SAR) and
# 1 MiB rendezvous (the receiver READs the payload). libfabric-bin has no
# fi_rdm_* tests (those are fabtests, which Debian 12 does not package).
#
# rxm gives an RDM endpoint one CQ for all its connections, of (MSG send
# + receive depth) * FI_UNIVERSE_SIZE entries, 65536 by default, which the
# verbs provider asks of ibv_create_cq() unclamped: with a max_cqe of
# 32767 fi_enable() failed with -EINVAL ("Unable to create verbs CQ").
#
# topology: twovm
# kernels: none
# full-kernels: 6.1 6.12
# timeout: 300
# requires: sroce

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/datapath_lib.sh"

command -v fi_pingpong >/dev/null || bail "fi_pingpong is not installed (libfabric-bin)"

dp_setup

for ep in msg dgram; do
	out=$(fi_info -p verbs -t "FI_EP_${ep^^}" 2>&1)
	log "$out"
	expect_match "fi_info -p verbs -t FI_EP_${ep^^} lists the sroce0 domain" \
		'domain: sroce0(-dgram)?$' "$out"
done
out=$(fi_info -p 'verbs;ofi_rxm' -t FI_EP_RDM 2>&1)
log "$out"
expect_match "fi_info -p 'verbs;ofi_rxm' -t FI_EP_RDM lists the sroce0 domain" \
	'domain: sroce0$' "$out"

# fpp DESC DOMAIN ARGS...: a fi_pingpong pair on a control port of its
# own. One size per pair: "all" goes up to 8 MiB, far too much for TCG.
port=47600
fpp() {
	local desc=$1 dom=$2
	shift 2
	port=$((port + 1))
	dp_pair "$desc" 120 \
		fi_pingpong -B "$port" -d "$dom" "$@" -- \
		fi_pingpong -P "$port" -d "$dom" "$@" @SRV4@
}
fpp "fi_pingpong verbs MSG 4 KiB x 50, -c" sroce0 -p verbs -e msg \
	-S 4096 -I 50 -c
fpp "fi_pingpong verbs MSG 1 MiB x 5, -c" sroce0 -p verbs -e msg \
	-S 1048576 -I 5 -c
fpp "fi_pingpong verbs DGRAM 1000 B x 50, -c" sroce0-dgram -p verbs \
	-e dgram -S 1000 -I 50 -c
fpp "fi_pingpong verbs;ofi_rxm RDM 4 KiB x 10, -c" sroce0 \
	-p 'verbs;ofi_rxm' -e rdm -S 4096 -I 10 -c
fpp "fi_pingpong verbs;ofi_rxm RDM 64 KiB x 10, -c" sroce0 \
	-p 'verbs;ofi_rxm' -e rdm -S 65536 -I 10 -c
fpp "fi_pingpong verbs;ofi_rxm RDM 1 MiB x 5, -c" sroce0 \
	-p 'verbs;ofi_rxm' -e rdm -S 1048576 -I 5 -c
if [ "$ROLE" = a ]; then
	dp_stats "$DP_CLI_DEV" >&2
fi
done_testing
