#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ibv_rc/uc/ud_pingpong over sroce with payload checks, between two guests (tests in pingpong_body.sh).
#
# topology: twovm
# kernels: 6.1 6.12
# timeout: 900
# requires: sroce

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/pingpong_body.sh"
