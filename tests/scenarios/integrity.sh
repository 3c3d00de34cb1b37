#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tools/bin/sroce-integrity between two VMs over sroce: every test case
# over the IPv4 RoCE v2 GID, then the quick subset over the IPv6 one
# (every operation and variant, at the sizes where packets split: the
# payload path does not depend on the IP version, the framing does), then
# a few runs with injected faults that must be caught (integrity_lib.sh).
# VM b serves, VM a runs the cases. interop_rxe.sh runs the cases against
# rdma_rxe.
#
# topology: twovm
# kernels: 6.1 6.12
# timeout: 900
# requires: sroce

# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=integrity_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/integrity_lib.sh"

INTEGRITY_V6_ARGS=${INTEGRITY_V6_ARGS---quick}
integrity_main sroce sroce sroce0
