#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Print the supported stock kernels installed on this machine, one per line:
#   NAME KVER KDIR IMAGE
# NAME is the short label the build and test targets use (6.1, 6.12).
set -euo pipefail

newest() {
	# $1: glob of header directories; prints the newest by version sort.
	ls -d $1 2>/dev/null | sort -V | tail -n1
}

emit() {
	local name=$1 dir=$2 kver
	[ -n "$dir" ] || return 0
	kver=${dir#/usr/src/linux-headers-}
	[ -e "/boot/vmlinuz-$kver" ] || return 0
	echo "$name $kver $dir /boot/vmlinuz-$kver"
}

emit 6.1 "$(newest '/usr/src/linux-headers-6.1.*-amd64')"
emit 6.12 "$(newest '/usr/src/linux-headers-6.12.*-amd64')"
