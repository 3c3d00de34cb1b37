#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# NVMe over Fabrics between sroce and the kernel's rdma_rxe: first the
# target (VM b) on sroce and the host (VM a) on rdma_rxe, then the other way
# round (tests in nvmeof_lib.sh).
#
# topology: twovm
# kernels: none
# full-kernels: 6.1
# timeout: 900
# requires: sroce

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=datapath_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/datapath_lib.sh"
# shellcheck source=nvmeof_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/nvmeof_lib.sh"

# part PORT A_MODULE A_TYPE A_DEV B_MODULE B_TYPE B_DEV
part() {
	local port=$1
	shift
	P="host on $2, target on $5"
	barrier "part-$port" 300 || bail "VM $PEER did not reach part $port"
	dp_attach_role "$@"
	nvmf_session "$P" "$port"
	barrier "part-$port-end" 300
	dp_detach "$DP_MODULE" "$DP_DEV"
}

part 4421 rdma_rxe rxe rxe0 sroce sroce sroce0
part 4422 sroce sroce sroce0 rdma_rxe rxe rxe0
done_testing
