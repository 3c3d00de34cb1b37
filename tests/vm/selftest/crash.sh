#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: netns
# timeout: 60
# Harness self-test, must FAIL: the kernel panics in the middle of the
# scenario; the runner reports it and runs the rest in a fresh boot.
# shellcheck source=../../scenarios/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../scenarios/lib.sh"
plan 2
ok "before the crash"
sync
echo c >/proc/sysrq-trigger
ok "after the crash (never printed)"
