#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: netns
# timeout: 10
# Harness self-test, must FAIL: the scenario outlives its timeout and the
# guest kills it.
# shellcheck source=../../scenarios/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../scenarios/lib.sh"
plan 2
ok "sleeping past the timeout"
sleep 1000
ok "woke up (never printed)"
