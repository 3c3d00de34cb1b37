#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tools/bin/sroce-integrity between two VMs over the kernel's own
# rdma_rxe: the reference for the integrity scenario over sroce
# (integrity.sh) and a check of the tool itself. VM b serves, VM a runs
# every test case over the IPv4 RoCE v2 GID, then over the IPv6 one, then
# a few runs with injected faults that must be caught (integrity_lib.sh).
#
# topology: twovm
# kernels: 6.1
# timeout: 900

# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../scenarios/lib.sh"
# shellcheck source=integrity_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../scenarios/integrity_lib.sh"

integrity_main rdma_rxe rxe rxe0
