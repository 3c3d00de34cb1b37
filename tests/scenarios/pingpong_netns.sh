#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ibv_rc/uc/ud/srq_pingpong over sroce with payload checks, between two network
# namespaces of one guest (tests in pingpong_body.sh).
#
# topology: netns
# timeout: 900
# requires: sroce

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/pingpong_body.sh"
