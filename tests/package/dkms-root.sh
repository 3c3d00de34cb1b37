#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install the sroce-dkms package, as a user would ("apt-get install
# ./sroce-dkms_*.deb"), into an overlay of this machine's root: the
# overlay is mounted in a private mount namespace, so the machine itself
# does not change, and DKMS builds sroce.ko there for every installed
# kernel with headers. What the installation wrote stays in DIR/upper, the
# overlay's upper layer, which the "dkms" scenario gives its guests.
#
# Usage: dkms-root.sh DIR
#
# Builds the package first (scripts/make-deb.sh). DIR is reused while it
# holds an installation of the same package (DIR/ready names its
# sha256); concurrent callers wait for one another.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
dir=${1:?usage: dkms-root.sh DIR}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)

exec 9>>"$dir/lock"
flock 9

deb=$("$root/scripts/make-deb.sh" "$dir/deb")
sum=$(sha256sum "$deb" | cut -d' ' -f1)
if [ "$(cat "$dir/ready" 2>/dev/null)" = "$sum" ]; then
	echo "dkms-root: $dir holds sroce-dkms ($sum)"
	exit 0
fi

rm -rf "$dir/upper" "$dir/work" "$dir/merged" "$dir/ready"
mkdir -p "$dir/upper" "$dir/work" "$dir/merged"
# shellcheck disable=SC2016 # expanded by the inner shell
unshare -m --propagation private bash -euc '
	dir=$1 deb=$2
	mount -t overlay sroce-pkg -o "lowerdir=/,upperdir=$dir/upper,workdir=$dir/work" "$dir/merged"
	for m in proc sys dev; do mount --bind "/$m" "$dir/merged/$m"; done
	mkdir -p "$dir/merged/var/tmp/sroce-pkg"
	cp "$deb" "$dir/merged/var/tmp/sroce-pkg/"
	chroot "$dir/merged" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -q --no-install-recommends \
		"/var/tmp/sroce-pkg/${deb##*/}"
	chroot "$dir/merged" dkms status -m sroce
	rm -rf "$dir/merged/var/tmp/sroce-pkg"
' dkms-root "$dir" "$deb"
rmdir "$dir/merged"
echo "$sum" >"$dir/ready"
echo "dkms-root: sroce-dkms installed into $dir/upper"
