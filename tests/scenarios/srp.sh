#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# SCSI RDMA Protocol (ib_srpt through LIO, ib_srp) over sroce between two
# guests, logging in through the RDMA CM. VM b exports a 32 MiB RAM disk;
# VM a logs in twice (two initiator port IDs: two paths to one LUN), puts
# a dm-multipath device over both, makes an ext4 file system and checks
# its files after a remount with cold caches; then, for three rounds, a
# file is written while one path logs out under it, the path logs in
# again and rejoins the multipath table, and every file written so far is
# checked. A logout must take the target port off ib_srp's list: logging
# in again must never be refused as "Already connected".
#
# ib_srp posts the LOCAL_INV of a command's registration when the command
# ends and re-keys the region for the next command at once, often before
# that LOCAL_INV has run: the I/O of the rounds makes that frequent.
#
# topology: twovm
# kernels: none
# full-kernels: 6.1 6.12
# timeout: 600
# requires: sroce

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=datapath_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/datapath_lib.sh"

SRP_CM_PORT=5555
SRP_TGT=/sys/kernel/config/target
SRP_RD=$SRP_TGT/core/rd_mcp_0/disk0
SRP_MB=32
SRP_MNT=/tmp/srp-mnt
SRP_DM=srpmp
SRP_ROUNDS=3

# gid0_hex DEV: GID 0 of the device's port 1 as 32 hex digits.
gid0_hex() {
	local g
	read -r g <"/sys/class/infiniband/$1/ports/1/gids/0" || return 1
	echo "${g//:/}"
}

# ---------------------------------------------------------------------------
# VM b: the target

srp_target_up() {
	local ini tport t tpg ext acl guid
	ini=$(get srp-ini-gid 120) || return 1
	check "modprobe ib_srpt" modprobe ib_srpt || return 1
	# The guest mounts configfs at boot, before its module is loaded.
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
	# ib_srpt names each port by its GID 0, "0x" and 32 hex digits.
	tport=0x$(gid0_hex "$DP_SRV_DEV") || return 1
	t=$SRP_TGT/srpt/$tport
	tpg=$t/tpgt_1
	check "RAM disk backstore of $SRP_MB MiB" sh -c "
		mkdir -p '$SRP_RD' &&
		echo rd_pages=$((SRP_MB << 8)) >'$SRP_RD/control' &&
		echo 1 >'$SRP_RD/enable'" || return 1
	check "srpt target port $tport with LUN 0" sh -c "
		mkdir -p '$tpg/lun/lun_0' &&
		ln -s '$SRP_RD' '$tpg/lun/lun_0/disk0'" || return 1
	# An initiator port ID is the initiator's extension (one per path)
	# followed by the interface ID of its GID 0.
	for ext in 1 2; do
		acl=$tpg/acls/0x$(printf '%016x' "$ext")${ini:16}
		check "ACL for initiator port ID ${acl##*/}" sh -c "
			mkdir -p '$acl/lun_0' &&
			ln -s '$tpg/lun/lun_0' '$acl/lun_0/lun'" || return 1
	done
	check "target port enabled, RDMA CM port $SRP_CM_PORT" sh -c "
		echo 1 >'$tpg/enable' &&
		echo $SRP_CM_PORT >'$SRP_TGT/srpt/discovery_auth/rdma_cm_port'" || return 1
	# The service GUID is both halves of the target port ID to log in to.
	read -r guid </sys/module/ib_srpt/parameters/srpt_service_guid || return 1
	put srp-guid "${guid#0x}"
}

srp_target_down() {
	local t tpg acl
	t=$(echo "$SRP_TGT"/srpt/0x*)
	tpg=$t/tpgt_1
	echo 0 >"$SRP_TGT/srpt/discovery_auth/rdma_cm_port"
	echo 0 >"$tpg/enable"
	for acl in "$tpg"/acls/*; do
		rm -f "$acl/lun_0/lun"
		rmdir "$acl/lun_0" "$acl"
	done
	rm -f "$tpg/lun/lun_0/disk0"
	rmdir "$tpg/lun/lun_0" "$tpg" "$t"
	# The fabric's own directory holds ib_srpt: without it gone, the
	# module (and ib_core under it) cannot be unloaded after the scenario.
	check "target configuration removed" rmdir "$SRP_RD" "${SRP_RD%/*}" "$SRP_TGT/srpt"
}

# ---------------------------------------------------------------------------
# VM a: the initiator

# The paths: SRP_PORT[EXT] is the remote port of the login with that
# initiator extension, SRP_DISK[EXT] its SCSI disk.
declare -A SRP_PORT SRP_DISK
SRP_GUID=

srp_ports() { ls /sys/class/srp_remote_ports 2>/dev/null; }

# srp_disk_of PORT: the block device of LUN 0 behind a remote port
# "port-H:1".
srp_disk_of() {
	local host=${1#port-} b
	host=${host%:*}
	for b in /sys/class/scsi_host/host"$host"/device/target"$host":*/"$host":*/block/*; do
		[ -e "$b" ] && [ -b "/dev/${b##*/}" ] && { echo "${b##*/}"; return 0; }
	done
	return 1
}

# srp_login EXT: log in with initiator extension EXT; sets SRP_PORT and
# SRP_DISK for it.
srp_login() {
	local ext=$1 before p new='' opts
	before=" $(srp_ports | tr '\n' ' ') "
	opts="id_ext=$SRP_GUID,ioc_guid=$SRP_GUID,dest=$PEER_IP4:$SRP_CM_PORT"
	opts+=",initiator_ext=$(printf '%016x' "$ext")"
	dmesg_mark
	check "login, initiator_ext $ext ($opts)" sh -c \
		"echo '$opts' >/sys/class/infiniband_srp/srp-$DP_CLI_DEV-1/add_target"
	local rc=$?
	expect_nomatch "no 'Already connected to target port' refusal" \
		'Already connected' "$(dmesg_since)"
	[ $rc -eq 0 ] || return 1
	for p in $(srp_ports); do
		[[ $before == *" $p "* ]] || new=$p
	done
	[ -n "$new" ] || { not_ok "a new SRP remote port appears"; return 1; }
	SRP_PORT[$ext]=$new
	check_wait "$new has a SCSI disk" 30 srp_disk_of "$new" || return 1
	SRP_DISK[$ext]=$(srp_disk_of "$new")
}

# srp_logout EXT: delete that login's remote port and wait until its SCSI
# host and disk are gone.
srp_logout() {
	local ext=$1 p=${SRP_PORT[$1]} d=${SRP_DISK[$1]}
	check "logout $p (initiator_ext $ext)" sh -c "echo 1 >/sys/class/srp_remote_ports/$p/delete"
	check_wait "$p and /dev/${d:-(no disk)} gone" 60 sh -c \
		"! [ -e /sys/class/srp_remote_ports/$p ] && ! [ -e '/dev/${d:-/nonexistent}' ]"
	SRP_PORT[$ext]='' SRP_DISK[$ext]=''
}

# srp_dm_table: a multipath table over the disks of the paths logged in
# (round robin, 16 I/Os a path in turn).
srp_dm_table() {
	local ext d n=0 paths=
	for ext in 1 2; do
		d=${SRP_DISK[$ext]}
		[ -n "$d" ] || continue
		paths+=" $(cat "/sys/block/$d/dev") 16"
		n=$((n + 1))
	done
	echo "0 $((SRP_MB << 11)) multipath 0 0 1 1 round-robin 0 $n 1$paths"
}

srp_dm_paths() {
	dmsetup status "$SRP_DM" | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+:[0-9]+$/) { n++; if ($(i + 1) == "A") a++ } } END { print n + 0, a + 0 }'
}

srp_check_files() {
	check "$1" sh -c "cd '$SRP_MNT' && sha256sum -c --quiet /tmp/srp-sums"
}

# srp_add_file NAME KIB: a random file, its sum kept with the others.
srp_add_file() {
	head -c $(($2 << 10)) /dev/urandom >"/tmp/srp-src-$1"
	echo "$(sha256sum <"/tmp/srp-src-$1" | cut -d' ' -f1)  $1" >>/tmp/srp-sums
}

srp_round() {
	local r=$1 ext=$(($1 % 2 + 1)) pid rc other
	other=$((3 - ext))
	check "round $r: mount" mount "/dev/mapper/$SRP_DM" "$SRP_MNT" || return 1
	srp_add_file "round-$r" 3072
	dd if="/tmp/srp-src-round-$r" of="$SRP_MNT/round-$r" bs=64k oflag=direct status=none &
	pid=$!
	# The path goes while the writer's I/O is in flight on both.
	srp_logout "$ext"
	wait "$pid"
	rc=$?
	check "round $r: 3 MiB written (O_DIRECT) while path $ext logged out" test $rc -eq 0
	# Reads from the disk, not the page cache: they find the path gone.
	echo 3 >/proc/sys/vm/drop_caches
	srp_check_files "round $r: every file's sha256 over path $other alone"
	expect_eq "round $r: multipath has failed path $ext, path $other active" "2 1" "$(srp_dm_paths)"
	check "round $r: umount" umount "$SRP_MNT"
	echo 3 >/proc/sys/vm/drop_caches
	srp_login "$ext" || return 1
	check "round $r: path $ext back in the multipath table" sh -c \
		"dmsetup reload '$SRP_DM' --table '$(srp_dm_table)' && dmsetup resume '$SRP_DM'"
	expect_eq "round $r: multipath has 2 active paths" "2 2" "$(srp_dm_paths)"
	check "round $r: mount again" mount "/dev/mapper/$SRP_DM" "$SRP_MNT" || return 1
	srp_check_files "round $r: every file's sha256 over both paths, cold caches"
	check "round $r: umount" umount "$SRP_MNT"
}

srp_initiator() {
	local r f
	# No udev in the guest: the SCSI disk driver is loaded by hand.
	check "modprobe ib_srp, sd_mod and dm-multipath" \
		sh -c 'modprobe ib_srp && modprobe sd_mod && modprobe dm-multipath' ||
		return 1
	put srp-ini-gid "$(gid0_hex "$DP_CLI_DEV")"
	barrier srp-up 300 || bail "the target did not come up"
	SRP_GUID=$(get srp-guid 10) || return 1
	srp_login 1 || return 1
	srp_login 2 || return 1
	# Both logins must reach one LUN: what one path writes, the other reads.
	head -c $((1 << 20)) /dev/urandom >/tmp/srp-probe
	dd if=/tmp/srp-probe of="/dev/${SRP_DISK[1]}" bs=64k oflag=direct status=none
	expect_eq "what path 1 wrote, path 2 reads (sha256, O_DIRECT)" \
		"$(sha256sum </tmp/srp-probe | cut -d' ' -f1)" \
		"$(dd if="/dev/${SRP_DISK[2]}" bs=64k count=16 iflag=direct status=none | sha256sum | cut -d' ' -f1)"
	# The guest runs no udev: dmsetup makes /dev/mapper/NAME itself.
	check "dm-multipath device over both paths" sh -c \
		"dmsetup create '$SRP_DM' --verifyudev --table '$(srp_dm_table)' && dmsetup mknodes '$SRP_DM'" ||
		return 1
	expect_eq "multipath has 2 active paths" "2 2" "$(srp_dm_paths)"
	check "mkfs.ext4 on /dev/mapper/$SRP_DM" mkfs.ext4 -q -F "/dev/mapper/$SRP_DM" || return 1
	mkdir -p "$SRP_MNT"
	check "mount ext4" mount "/dev/mapper/$SRP_DM" "$SRP_MNT" || return 1
	: >/tmp/srp-sums
	for f in 1 2 3 4 5 6 7 8; do
		srp_add_file "small-$f" $((f * 13))
		cp "/tmp/srp-src-small-$f" "$SRP_MNT/small-$f"
	done
	srp_add_file big 2048
	dd if=/tmp/srp-src-big of="$SRP_MNT/big" bs=1M conv=fsync status=none
	srp_check_files "9 files written, sha256 through the page cache"
	check "umount" umount "$SRP_MNT"
	echo 3 >/proc/sys/vm/drop_caches
	check "mount again" mount "/dev/mapper/$SRP_DM" "$SRP_MNT"
	srp_check_files "every file's sha256 after a remount with cold caches"
	check "umount" umount "$SRP_MNT"
	for r in $(seq 1 "$SRP_ROUNDS"); do
		srp_round "$r" || break
	done
}

srp_initiator_down() {
	local ext
	mountpoint -q "$SRP_MNT" && umount "$SRP_MNT"
	dmsetup remove "$SRP_DM" 2>/dev/null
	for ext in 1 2; do
		[ -n "${SRP_PORT[$ext]:-}" ] && srp_logout "$ext"
	done
	check "no SRP remote port left" test -z "$(srp_ports)"
	rm -f /tmp/srp-src-* /tmp/srp-sums /tmp/srp-probe
}

dp_setup
if [ "$ROLE" = b ]; then
	srp_target_up || bail "no SRP target"
	barrier srp-up 300
	barrier srp-done 900
	srp_target_down
else
	srp_initiator
	srp_initiator_down
	barrier srp-done 900
	dp_stats "$DP_CLI_DEV" >&2
fi
done_testing
