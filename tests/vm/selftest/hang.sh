#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: netns
# timeout: 10
# Harness self-test, must FAIL: the guest stops making progress (the
# guest-side timeout is stopped too), so the host's deadline kills QEMU.
# shellcheck source=../../scenarios/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../scenarios/lib.sh"
plan 1
ok "hanging now"
kill -STOP "$PPID"
sleep 100000
