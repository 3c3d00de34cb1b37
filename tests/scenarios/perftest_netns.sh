#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# perftest bandwidth and latency tests (send, write, read, atomic) over
# sroce, between two network namespaces of one guest (tests in perftest_body.sh).
#
# topology: netns
# kernels: 6.1 6.12
# timeout: 1200
# requires: sroce

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/perftest_body.sh"
