#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# librdmacm's examples (rping, ucmatose, udaddy, rdma_server/client) and
# perftest over the RDMA CM, between two network namespaces of one guest
# (tests in rdmacm_body.sh).
#
# topology: netns
# kernels: 6.1 6.12
# timeout: 900
# requires: sroce

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/rdmacm_body.sh"
