#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: netns
# kernels: none
# requires: sroce
# timeout: 2400
#
# pktfuzz.sh with a million packets (PKTFUZZ_COUNT), for "make check-full"
# only, which runs it on the debug kernel ("kernels: none" keeps it out of
# "make check").
PKTFUZZ_COUNT=${PKTFUZZ_COUNT:-1000000}
export PKTFUZZ_COUNT
exec bash "$(dirname "${BASH_SOURCE[0]}")/pktfuzz.sh"
