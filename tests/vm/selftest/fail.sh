#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: netns
# timeout: 60
# Harness self-test, must FAIL: failing checks and a short plan. The
# kernel stays clean, so the following scenarios share the boot.
# shellcheck source=../../scenarios/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../scenarios/lib.sh"
plan 5
check "a command that fails" ls /nonexistent
expect_eq "a wrong value" 1 2
check_fail "a command that should fail but succeeds" true
check "a command that succeeds" true
