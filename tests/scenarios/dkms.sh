#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: netns
# kernels: 6.1
# full-kernels: 6.12
# requires: deb
# timeout: 240
#
# The sroce-dkms package as a user installs it. The harness installed it
# into an overlay of the host's root (tests/package/dkms-root.sh: apt-get
# install of the .deb, DKMS building sroce.ko for every kernel), and this
# guest takes what that installation wrote for its kernel: the module and
# the module index depmod made, DKMS's state, the modprobe.d file. Then
# modprobe must load the DKMS-built module, which must move verified data,
# and the modprobe.d file must keep sroce and rdma_rxe apart with a message
# on the terminal.
#
# The package's files are laid over the guest's root in a mount namespace
# of the scenario's own, so they go with it: later scenarios of the boot
# load the harness's build of sroce and see no modprobe.d file.
if [ -z "${SROCE_DKMS_PRIVATE:-}" ]; then
	SROCE_DKMS_PRIVATE=1 exec unshare -m --propagation private \
		"$BASH" "${BASH_SOURCE[0]}" "$@"
fi
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/datapath_lib.sh"
plan 24

layer=$SROCE_REPO/out/package/upper
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$SROCE_REPO/dkms.conf")
mods=$layer/usr/lib/modules/$KVER
[ -d "$mods" ] || mods=$layer/lib/modules/$KVER
loaded() { grep -q "^$1 " /proc/modules; }
kre=${KVER//./\\.} kre=${kre//+/\\+}

check "the package built sroce for $KVER" \
	test -f "$mods/updates/dkms/sroce.ko" -o -f "$mods/updates/dkms/sroce.ko.xz" ||
	bail "no DKMS-built sroce in $mods"
# over DIR LAYER: what the installation wrote into DIR, over DIR (a
# read-only overlay, in this mount namespace only).
over() {
	mount -t overlay -o "lowerdir=$2:$1" sroce-dkms "$1"
}
check "the installation's files over this guest's root" \
	eval 'over "/lib/modules/$KVER" "$mods" &&
		over /etc/modprobe.d "$layer/etc/modprobe.d" &&
		over /var/lib/dkms "$layer/var/lib/dkms" &&
		over /usr/src "$layer/usr/src"' ||
	bail "cannot lay the package's files over the root"

expect_match "dkms status: sroce $version installed for $KVER" \
	"sroce/$version, $kre, [^:]*: installed" "$(dkms status -m sroce -k "$KVER" 2>/dev/null)"
file=$(modinfo -F filename sroce)
expect_match "modinfo finds the DKMS module" "^/lib/modules/$kre/updates/dkms/sroce\.ko" "$file"
expect_eq "modinfo: version $version" "$version" "$(modinfo -F version sroce)"
expect_match "modinfo: description" "RoCEv2" "$(modinfo -F description sroce)"
expect_match "modinfo: the rdma link alias" "rdma-link-sroce" "$(modinfo -F alias sroce)"
check "modprobe sroce" modprobe sroce || bail "the DKMS module does not load"
# The loaded module's build ID (its ELF note) is the DKMS file's: the
# harness's own build of the same sources has another.
kofile=$(mktemp)
case $file in
*.xz) xz -dc "$file" >"$kofile" ;;
*) cp "$file" "$kofile" ;;
esac
want=$(readelf -n "$kofile" | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')
rm -f "$kofile"
have=$(od -An -tx1 -v /sys/module/sroce/notes/.note.gnu.build-id | tr -d ' \n')
expect_match "the loaded module is the DKMS build (build ID ${want:-none})" \
	"^[0-9a-f]*${want:-none}\$" "$have"
expect_eq "/sys/module/sroce/version" "$version" "$(cat /sys/module/sroce/version)"

dp_setup
dp_pair "ibv_rc_pingpong --chk over the DKMS module" 120 \
	ibv_rc_pingpong -d @DEV@ -g @GID4@ -s 4096 -n 200 -c -- \
	ibv_rc_pingpong -d @DEV@ -g @GID4@ -s 4096 -n 200 -c @SRV4@
check "rdma link delete sroce0" rdma link delete sroce0
check "rdma link delete sroce1" rdma link delete sroce1

# The modprobe.d file: whichever comes second is refused before the kernel
# is asked, with a message that says what to do.
err=$(modprobe rdma_rxe 2>&1)
check_fail "modprobe rdma_rxe fails while sroce is loaded" loaded rdma_rxe
expect_match "... and says why on the terminal" "sroce is loaded.*modprobe -r sroce" "$err"
check "modprobe -r sroce" modprobe -r sroce
check "modprobe rdma_rxe once sroce is gone" modprobe rdma_rxe
err=$(modprobe sroce 2>&1)
check_fail "modprobe sroce fails while rdma_rxe is loaded" loaded sroce
expect_match "... and says why on the terminal" "rdma_rxe is loaded.*modprobe -r rdma_rxe" "$err"
check "modprobe -r rdma_rxe" modprobe -r rdma_rxe
check "modprobe sroce again" modprobe sroce
check "modprobe -r sroce" modprobe -r sroce
done_testing
