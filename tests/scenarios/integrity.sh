#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tools/bin/sroce-integrity between two VMs over sroce: every test case
# over the IPv4 RoCE v2 GID, then over the IPv6 one, then a few runs with
# injected faults that must be caught (integrity_lib.sh). VM b serves,
# VM a runs the cases. integrity_rxe.sh does the same over rdma_rxe.
#
# topology: twovm
# kernels: 6.1 6.12
# timeout: 900
# requires: sroce

# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=integrity_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/integrity_lib.sh"

integrity_main sroce sroce sroce0
