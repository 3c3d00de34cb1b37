#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Open MPI (Debian 12's 4.1) over UCX over sroce: mpirun on VM a starts
# one rank there and one on VM b of tools/bin/sroce-mpicheck, with the
# UCX PML and one-sided component (--mca pml ucx --mca osc ucx) and
# UCX_NET_DEVICES=sroce0:1. The program checks a ring exchange of 8 B and
# 1 MiB and its echo, an MPI_Allreduce and MPI_Put/MPI_Get in a window,
# every result against the expected values.
#
# The guests have no ssh between them. mpirun starts its daemon on VM b
# through an agent of this scenario (--mca plm_rsh_agent) that hands the
# command to VM b through the directory both guests share, where this
# scenario runs it (attached, not daemonized: --leave-session-attached)
# and reports its exit status back; the daemon talks to mpirun over TCP
# on eth0, as it would after ssh.
#
# Open MPI 4.1 lets its UCX components run only on devices named like
# mlx* unless told otherwise (opal_common_ucx_devices); sroce0 is not.
#
# UCP wires up over UCX's UD transport (see the ucx scenario), so this
# needs sroce's UD receive completions to say in their SL which L3 header
# the GRH image holds.
#
# topology: twovm
# kernels: 6.12
# full-kernels: 6.1
# timeout: 300
# requires: sroce

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/datapath_lib.sh"

MPICHECK=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/tools/bin/sroce-mpicheck
LIB=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib.sh
command -v mpirun >/dev/null || bail "mpirun is not installed (openmpi-bin)"
[ -x "$MPICHECK" ] || bail "$MPICHECK is missing: make -C tools"

dp_setup

# counter NAME: a counter of this VM's device.
counter() {
	rdma statistic show link "sroce0/1" | tr ' ' '\n' |
		awk -v n="$1" '$0 == n { getline; v = $0 } END { print v + 0 }'
}

# Distinct names, so that Open MPI sees two nodes (both guests boot with
# the same one).
old_host=$(hostname)
hostname "sroce-$ROLE"
tx0=$(counter tx_bytes) rx0=$(counter rx_bytes)

if [ "$ROLE" = b ]; then
	# Run what VM a's agent hands over: Open MPI's daemon for this VM.
	if cmd=$(get mpi.cmd 100); then
		log "+ from mpirun's agent: $cmd"
		# The daemon is told the agent's path, which exists on VM a
		# only, and ends (with a segmentation fault) when its own
		# launcher does not find it there. It launches nothing
		# itself: a stand-in that refuses is enough.
		stub=$(sed -n 's/.*plm_rsh_agent "\([^"]*\)".*/\1/p' <<<"$cmd")
		if [ -n "$stub" ] && [ ! -e "$stub" ]; then
			printf '#!/bin/sh\nexit 1\n' >"$stub" && chmod +x "$stub"
		else
			stub=
		fi
		out=$(mktemp)
		timeout 130 bash -c "$cmd" >"$out" 2>&1
		rc=$?
		cat "$out" >&2
		put mpi.rc "$rc"
		rm -f "$out" ${stub:+"$stub"}
		expect_eq "Open MPI's daemon on this VM exits 0" 0 "$rc"
	else
		not_ok "mpirun's agent handed a command over"
	fi
	put b.tx $(($(counter tx_bytes) - tx0))
	put b.rx $(($(counter rx_bytes) - rx0))
else
	agent=$(mktemp /tmp/mpi-agent.XXXXXX)
	# mpirun calls it as AGENT HOST COMMAND...; VM b is the only remote.
	cat >"$agent" <<-EOF
	#!/bin/bash
	. "$LIB"
	shift
	put mpi.cmd "\$*"
	rc=\$(get mpi.rc 250) || rc=255
	exit "\$rc"
	EOF
	chmod +x "$agent"
	out=$(mktemp)
	log "+ mpirun over UCX"
	timeout 120 mpirun --allow-run-as-root -np 2 --map-by node \
		-H "$NET4_A,$NET4_B" --wdir /tmp \
		--mca plm_rsh_agent "$agent" --leave-session-attached \
		--mca oob_tcp_if_include eth0 --mca btl self \
		--mca pml ucx --mca osc ucx \
		--mca opal_common_ucx_tls any --mca opal_common_ucx_devices any \
		-x UCX_NET_DEVICES=sroce0:1 -x UCX_TLS=rc_verbs,ud_verbs,self \
		"$MPICHECK" >"$out" 2>&1
	rc=$?
	cat "$out" >&2
	if [ "$rc" = 0 ]; then
		ok "mpirun sroce-mpicheck exits 0"
	else
		not_ok "mpirun sroce-mpicheck exits 0" "exit status $rc"
		diag_file "$out" 40
	fi
	expect_match "rank 1 ran on VM b" '^rank 1 of 2 on sroce-b$' "$(cat "$out")"
	for what in "p2p 8 bytes and back" "p2p large message and back" \
		"allreduce sum of 4096 int64" \
		"MPI_Put into the next rank's window" \
		"MPI_Get from the previous rank's window"; do
		expect_match "$what" "^PASS $what: 0 of 2 ranks failed" "$(cat "$out")"
	done
	rm -f "$out" "$agent"
	# Both ranks' traffic went through the sroce devices: 1 MiB each way
	# and the 256 KiB window each way at least.
	d_tx=$(($(counter tx_bytes) - tx0)) d_rx=$(($(counter rx_bytes) - rx0))
	b_tx=$(get b.tx 60) b_rx=$(get b.rx 60)
	min=$((1 << 20))
	for v in "VM a tx_bytes:$d_tx" "VM a rx_bytes:$d_rx" \
		"VM b tx_bytes:${b_tx:-0}" "VM b rx_bytes:${b_rx:-0}"; do
		if [ "${v##*:}" -ge "$min" ]; then
			ok "${v%%:*} rose by at least 1 MiB (${v##*:})"
		else
			not_ok "${v%%:*} rose by at least 1 MiB" "by ${v##*:}"
		fi
	done
fi
hostname "$old_host"
done_testing
