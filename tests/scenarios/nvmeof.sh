#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# NVMe over Fabrics (nvmet-rdma, nvme-rdma) over sroce between two guests:
# a checksummed data set through the block device and through ext4 (tests
# in nvmeof_lib.sh).
#
# topology: twovm
# kernels: 6.1
# full-kernels: 6.12
# timeout: 900
# requires: sroce

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=datapath_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/datapath_lib.sh"
# shellcheck source=nvmeof_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/nvmeof_lib.sh"

dp_setup
nvmf_session "sroce" 4420
[ "$ROLE" = a ] && dp_stats "$DP_CLI_DEV" >&2
done_testing
