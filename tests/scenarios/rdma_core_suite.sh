#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rdma-core's own test suite (python3-pyverbs installs it under
# /usr/share/doc/rdma-core/tests) against sroce0 on the veth v1, run in its
# namespace h1, with 2 MiB huge pages available, over the IPv4 GID
# (run_tests.py's options, through rdma_core_tap.py). Each case is a test
# point; a skipped case is a skip with rdma-core's reason
# (Documentation/testing.rst lists them). The suite's traffic stays on one
# device, so one guest runs it; lone_nic.sh runs its multicast cases on a
# virtio NIC.
#
# topology: netns
# kernels: 6.1 6.12
# timeout: 1800
# requires: sroce

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=datapath_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/datapath_lib.sh"

SUITE=/usr/share/doc/rdma-core/tests
tap_tool=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/rdma_core_tap.py

dp_setup
# shellcheck disable=SC2016
check "2 MiB huge pages: 64 reserved" sh -c \
	'echo 64 >/proc/sys/vm/nr_hugepages && [ "$(cat /proc/sys/vm/nr_hugepages)" -ge 64 ]'
rm -rf /tmp/rdma-core-tests
mkdir -p /tmp/rdma-core-tests
cp -r "$SUITE" /tmp/rdma-core-tests/tests
gunzip -f /tmp/rdma-core-tests/tests/*.gz
suite_out=/tmp/rdma-core-tests/out
suite_tap=/tmp/rdma-core-tests/tap
(cd /tmp/rdma-core-tests && in_ns h1 timeout $((1500 * SROCE_SLOW)) /usr/bin/python3 \
	"$tap_tool" tests "$suite_tap" \
	--dev "$DP_CLI_DEV" --gid "$DP_CLI_GID4" -v) >"$suite_out" 2>&1
rc=$?
# The cases, renumbered into this scenario's plan.
while IFS= read -r line; do
	case $line in
	"ok "*" # SKIP "*)
		desc=${line#ok * - }
		skip "${desc%% # SKIP *}" "${desc#* # SKIP }"
		;;
	"ok "*) ok "${line#ok * - }" ;;
	"not ok "*) not_ok "${line#not ok * - }" ;;
	"#"*) diag "${line#\#   }" ;;
	esac
done <"$suite_tap"
summary=$(tail -n 1 "$suite_out")
diag "rdma-core suite: $summary"
if [ $rc -eq 0 ]; then
	ok "rdma-core suite: no failure, no error ($summary)"
else
	not_ok "rdma-core suite: exit status $rc ($summary)" "$(tail -n 30 "$suite_out")"
fi
done_testing
