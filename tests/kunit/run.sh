#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make kunit: build the debug kernel (cached), build sroce.ko and
# sroce_kunit.ko against it, and run the KUnit scenario in a VM.
# TAP on stdout, ending with "N passed, N failed".
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

kdir=$("$root/tests/kernel/debug-kernel.sh")
kver=$(cat "$kdir/kver")
"$root/scripts/build-kernels.sh" "$kver=$kdir/build" >&2
[ -f "$root/build/$kver/sroce_kunit.ko" ] || {
	echo "sroce_kunit.ko was not built for $kver" >&2
	exit 1
}
exec "$root/tests/run-scenarios.sh" --kernel debug --filter '^kunit$'
