#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the sroce-dkms Debian package (sources, dkms.conf, a modprobe.d
# file) with Debian's own tooling (debhelper and dh-dkms) into OUTDIR
# (default out/deb). Prints the path of the .deb on stdout.
#
# Usage: make-deb.sh [OUTDIR]
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
outdir=${1:-$root/out/deb}
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$root/dkms.conf")
[ -n "$version" ] || { echo "make-deb: no PACKAGE_VERSION in dkms.conf" >&2; exit 1; }
src=$outdir/src/sroce-$version

# sources: what git tracks (no build artefacts); a tree without git
# (an unpacked tarball) is taken as it is, minus object files.
list_sources() {
	if git -C "$root" rev-parse --git-dir >/dev/null 2>&1; then
		git -C "$root" ls-files -- drivers include scripts/compat-probe.sh dkms.conf
	else
		(cd "$root" && find drivers include scripts/compat-probe.sh dkms.conf -type f \
			! -name '*.o' ! -name '*.ko' ! -name '*.mod*' ! -name '.*.cmd' \
			! -name '*.order' ! -name 'Module.symvers')
	fi
}

rm -rf "$outdir/src" "$outdir"/sroce-dkms_*
mkdir -p "$src"
list_sources | (cd "$root" && cpio -pdm --quiet "$src")
cp -r "$root/packaging/debian" "$src/debian"
for f in "$src"/debian/sroce-dkms.install "$src"/debian/sroce-dkms.postinst; do
	sed -i "s/@VERSION@/$version/g" "$f"
done
# The changelog carries the version; its date is the last commit's, so
# that two builds of one tree give the same package.
date=$(git -C "$root" log -1 --format=%aD 2>/dev/null || date -R)
cat >"$src/debian/changelog" <<EOT
sroce ($version) unstable; urgency=medium

  * sroce $version.

 -- The sroce developers <sroce-devel@example.org>  $date
EOT

(cd "$src" && dpkg-buildpackage -b -us -uc >"$outdir/build.log" 2>&1) || {
	tail -n 30 "$outdir/build.log" >&2
	exit 1
}
# dpkg-buildpackage writes beside the source directory.
mv "$outdir/src/sroce-dkms_${version}_all.deb" "$outdir/"
rm -rf "$outdir/src"
echo "$outdir/sroce-dkms_${version}_all.deb"
