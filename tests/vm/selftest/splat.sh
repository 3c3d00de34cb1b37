#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: netns
# timeout: 60
# Harness self-test, must FAIL: a WARNING in the kernel log fails the
# scenario even though its own tests pass.
# shellcheck source=../../scenarios/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../scenarios/lib.sh"
plan 1
echo "<4>WARNING: CPU: 0 PID: $$ at selftest/splat.c:1 harness_selftest+0x0/0x10" >/dev/kmsg
ok "wrote a WARNING to the kernel log"
