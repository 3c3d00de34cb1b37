#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# sroce on a NIC whose link has no peer, which never completes a
# transmission: the packets a QP sends may stay in its ring for ever, and
# must keep neither the QP, nor the device, nor a process from going away.
# rdma-core's RDMA CM cases (over the IPv4 GID: connections to the device's
# own address, and UD QPs sending to a group they belong to; datagrams to
# a group need no neighbour, so they reach the ring at once; they need a
# netdev with a parent device, which rdma_core_suite's veth has not) and
# the churn of tools/bin/sroce-ringfuzz
# as an unprivileged user run on it; then no QP of the device is left,
# "rdma link delete" completes, the packets still held keep only the
# module (its reference count), and resetting the NIC lets it go.
#
# topology: netns
# kernels: 6.1
# full-kernels: 6.12
# requires: sroce
# timeout: 600
# vcpus: 2

# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=ringfuzz_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/ringfuzz_lib.sh"

DEV=sroce9
SUITE=/usr/share/doc/rdma-core/tests

# QPs of DEV the RDMA core still tracks, the GSI QP left out.
user_qps() {
	timeout 30 rdma resource show qp 2>/dev/null | awk -v d="$1/" 'index($0, "link " d) && !/lqpn 1 /'
}

module_refs() { cat /sys/module/sroce/refcnt 2>/dev/null; }

# rdma-core's RDMA CM cases (test_rdmacm), as root in h1: each reported,
# and none may fail, err or hang.
run_rdma_core_cm() {
	local out=/tmp/lone-rdma-core.out line n=0

	rm -rf /tmp/lone-rdma-core && mkdir -p /tmp/lone-rdma-core &&
		cp -r "$SUITE" /tmp/lone-rdma-core/tests &&
		gunzip -f /tmp/lone-rdma-core/tests/*.gz ||
		bail "cannot copy rdma-core's tests"
	(cd /tmp/lone-rdma-core && in_ns h1 timeout -k 10 $((300 * SROCE_SLOW)) \
		/usr/bin/python3 tests/run_tests.py --dev "$DEV" --gid "$GID4" \
		-v -k test_rdmacm) >"$out" 2>&1
	local rc=$?
	while IFS= read -r line; do
		case $line in
		test_*" ... ok") n=$((n + 1)); ok "rdma-core: ${line%% *}" ;;
		test_*" ... skipped"*) n=$((n + 1)); skip "rdma-core: ${line%% *}" "${line#* ... skipped }" ;;
		test_*" ... "*) n=$((n + 1)); not_ok "rdma-core: ${line%% *}" "$line" ;;
		esac
	done <"$out"
	if [ "$rc" -eq 0 ] && [ "$n" -ge 10 ]; then
		ok "rdma-core RDMA CM cases: $n ran, all passed, none stuck"
	else
		not_ok "rdma-core RDMA CM cases: $n ran, all passed, none stuck" \
			"exit status $rc (124: stuck, a destroy that never returned?)" "$(tail -n 30 "$out")"
	fi
}

# Unbind and bind the NIC's driver: its ring and queue are freed.
reset_nic() {
	local vdev
	vdev=$(basename "$(readlink "/sys/class/net/$1/device")") || return
	echo "$vdev" >/sys/bus/virtio/drivers/virtio_net/unbind &&
		echo "$vdev" >/sys/bus/virtio/drivers/virtio_net/bind
}

[ -x "$RF_TOOL" ] || bail "$RF_TOOL is missing: build it on the host with 'make -C tools'"
cp "$RF_TOOL" /tmp/sroce-ringfuzz && chmod 755 /tmp/sroce-ringfuzz || bail "cannot copy $RF_TOOL"
RF_TOOL=/tmp/sroce-ringfuzz

check "the NIC without a peer is up as lone0 in h1" lone_nic_up lone0 h1 ||
	bail "no NIC without a peer"
modprobe sroce || bail "modprobe sroce failed"
check "rdma link add $DEV on lone0" in_ns h1 rdma link add "$DEV" type sroce netdev lone0
wait_until 30 gid_index "$DEV" "$(gid_v4 198.19.0.1)" || bail "no IPv4 GID on $DEV: $(gid_table "$DEV")"
GID4=$(gid_index "$DEV" "$(gid_v4 198.19.0.1)")
GID6=$(gid_index "$DEV" "$(gid_v6 2001:db8:1::1)")
chmod 666 /dev/infiniband/uverbs* || bail "no uverbs device"

# The rdma-core cases take minutes to start on a slow kernel (the debug
# kernel); the churn below sends to groups through the same NIC.
if [ "$SROCE_SLOW" -gt 1 ]; then
	skip "rdma-core RDMA CM cases" "slow kernel: the churn covers multicast on this NIC"
else
	run_rdma_core_cm
fi
iters=$((200 / SROCE_SLOW))
[ "$iters" -ge 40 ] || iters=40
rf_run "churn on lone0" 300 churn -d "$DEV" -g "$GID4" ${GID6:+-G "$GID6"} \
	-n "$iters" -s "$RANDOM"

expect_eq "no QP of $DEV left after the processes ended" "" "$(user_qps "$DEV")"
held=$(module_refs)
diag "module references after the processes ended: $held (packets the NIC holds)"
timeout $((60 * SROCE_SLOW)) rdma link delete "$DEV" >/tmp/lone-delete.out 2>&1 &
pid=$!
if wait_until 60 bash -c "! kill -0 $pid"; then
	wait "$pid"
	expect_eq "rdma link delete $DEV completes while the NIC holds its packets" 0 "$?"
else
	not_ok "rdma link delete $DEV completes while the NIC holds its packets" \
		"still waiting after $((60 * SROCE_SLOW)) s" "$(cat /tmp/lone-delete.out)"
fi
check "the NIC is reset" in_ns h1 bash -c "$(declare -f reset_nic); reset_nic lone0"
check_wait "once the NIC freed its packets no module reference is left" 30 \
	bash -c '[ "$(cat /sys/module/sroce/refcnt)" = 0 ]'
done_testing
