#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: netns
# kernels: 6.1
# requires: sroce
# timeout: 2700
# vcpus: 2
#
# make check-full's long packet fuzz: tests/scenarios/pktfuzz.sh with
# PKTFUZZ_COUNT packets (default 1000000, four fuzzers of 250000) on two
# vCPUs, the integrity tool's rounds and the pingpongs going on for the
# whole burst, all of pktfuzz's checks at the end (no kernel report, the
# drop counters account for every packet, every byte verified, no NAK
# that fails a QP). Here only for its timeout: make check runs pktfuzz
# with 4000 packets within its own.
: "${PKTFUZZ_COUNT:=1000000}"
# shellcheck source=../scenarios/pktfuzz.sh
. "$(dirname "${BASH_SOURCE[0]}")/../scenarios/pktfuzz.sh"
