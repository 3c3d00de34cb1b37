#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# NFS over RDMA (svcrdma, xprtrdma) over sroce between two guests. VM b
# runs the kernel's NFS server with an RDMA listener on port 20049 and
# exports a tmpfs; VM a mounts it with proto=rdma (NFSv4.2), writes files
# (buffered and O_DIRECT), reads them back, and checks them again after a
# remount with cold caches; VM b checks what landed in its tmpfs. The
# sroce counters must show the bytes moved.
#
# It used to hang at the first WRITE larger than one FRWR region maps
# (xprtrdma posts REG_MR, REG_MR, SEND as one chain, and sroce started
# the second REG_MR only once the first was retired, which nothing did
# with no packet on the wire): the small files of 131073 bytes and more
# cover that.
#
# topology: twovm
# kernels: none
# full-kernels: 6.1 6.12
# timeout: 300
# requires: sroce

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
# shellcheck source=datapath_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/datapath_lib.sh"

NFS_PORT=20049
NFS_EXPORT=/srv/nfsrdma
NFS_MNT=/tmp/nfsrdma-mnt
NFS_SRC=/tmp/nfsrdma-src
# soft, with 30 s for a reply and one retransmission: an RPC whose reply
# is lost fails its system call (and the test) instead of hanging the
# scenario until its timeout.
NFS_OPTS=vers=4.2,proto=rdma,port=$NFS_PORT,soft,timeo=300,retrans=1
# Sizes of the small files, in bytes; the two large files are 6 MiB
# (buffered) and 2 MiB (O_DIRECT). Their sum is what the counters must
# show at least.
NFS_SMALL="1 511 4096 4097 65536 131073 262144 1000000"
NFS_BIG_MIB=6
NFS_DIRECT_MIB=2

# counter DEV NAME: one of the device's port counters.
counter() {
	local v
	read -r v <"/sys/class/infiniband/$1/ports/1/hw_counters/$2" || return 1
	echo "$v"
}

# ---------------------------------------------------------------------------
# VM b: the server

nfs_server_up() {
	check "modprobe nfsd and rpcrdma" sh -c 'modprobe nfsd && modprobe rpcrdma' ||
		return 1
	mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd
	mkdir -p "$NFS_EXPORT"
	check "tmpfs at $NFS_EXPORT" mount -t tmpfs -o size=32m tmpfs "$NFS_EXPORT" ||
		return 1
	# The shortest grace period the server allows: the client's first
	# OPEN waits for its end, and a guest's boot took long enough already.
	echo 10 >/proc/fs/nfsd/nfsv4leasetime
	echo 10 >/proc/fs/nfsd/nfsv4gracetime
	# NFSv4 only: neither rpcbind nor statd are needed. The tmpfs is the
	# root of the NFSv4 name space (fsid=0): a pseudo root built from
	# the guest's own root would be on its overlayfs, whose file handles
	# nfsd cannot export, and the mount fails with ENOENT.
	check "exportfs $NFS_EXPORT to $PEER_IP4 (fsid=0)" \
		exportfs -o rw,sync,no_root_squash,insecure,no_subtree_check,fsid=0 \
		"$PEER_IP4:$NFS_EXPORT" || return 1
	# mountd answers the kernel's export cache upcalls.
	check "rpc.mountd (NFSv4 only)" rpc.mountd -N 2 -N 3 -u || return 1
	check "rpc.nfsd (NFSv4 only, 2 threads)" rpc.nfsd -N 3 -U 2 || return 1
	check "rdma listener on port $NFS_PORT" sh -c "echo 'rdma $NFS_PORT' >/proc/fs/nfsd/portlist" ||
		return 1
	expect_match "portlist shows rdma $NFS_PORT" "^rdma $NFS_PORT\$" \
		"$(cat /proc/fs/nfsd/portlist)"
}

nfs_server_down() {
	check "rpc.nfsd 0 (server stopped)" rpc.nfsd 0
	exportfs -ua
	pkill -x rpc.mountd
	umount /proc/fs/nfsd
	check "tmpfs unmounted" umount "$NFS_EXPORT"
}

nfs_server() {
	local rx0 rx1 want sums bytes
	nfs_server_up || bail "no NFS server"
	rx0=$(counter "$DP_SRV_DEV" rx_bytes)
	barrier nfs-up 300
	# VM a wrote its files and publishes their sums and total size.
	barrier nfs-written 600
	if [ "$(get nfs-written 10)" = yes ]; then
		want=$(get nfs-sums 10)
		bytes=$(get nfs-bytes 10)
		sums=$(cd "$NFS_EXPORT" && sha256sum -- * 2>&1)
		expect_eq "every file in the exported tmpfs has the client's sha256" \
			"$want" "$sums"
		rx1=$(counter "$DP_SRV_DEV" rx_bytes)
		check "server's sroce0 rx_bytes rose by at least the $bytes bytes written ($((rx1 - rx0)))" \
			test $((rx1 - rx0)) -ge "$bytes"
	else
		skip "the exported files" "the client wrote none"
	fi
	barrier nfs-done 600
	log "counters of $DP_SRV_DEV:"
	dp_stats "$DP_SRV_DEV" >&2
	rdma resource show qp >&2
	nfs_server_down
}

# ---------------------------------------------------------------------------
# VM a: the client

nfs_mount() {
	mount -t nfs -o "$NFS_OPTS" "$PEER_IP4:/" "$NFS_MNT"
}

nfs_mounted_rdma() {
	local line
	line=$(grep " $NFS_MNT nfs4 " /proc/mounts)
	expect_match "/proc/mounts: proto=rdma,port=$NFS_PORT" \
		"[ ,]proto=rdma,port=${NFS_PORT}[ ,]" "$line"
	expect_match "/proc/self/mountstats: the transport is rdma" \
		"^[[:space:]]*xprt:[[:space:]]+rdma " \
		"$(awk -v m="$NFS_MNT" '$1 == "device" { cur = ($5 == m) } cur' /proc/self/mountstats)"
}

# nfs_diag: what the transport and the device saw, for a failure.
nfs_diag() {
	log "mountstats of $NFS_MNT:"
	awk -v m="$NFS_MNT" '$1 == "device" { cur = ($5 == m) } cur' /proc/self/mountstats >&2
	log "counters of $DP_CLI_DEV:"
	dp_stats "$DP_CLI_DEV" >&2
	rdma resource show qp >&2
}

# nfs_check_all DESC: every file of the data set has its sha256.
nfs_check_all() {
	check "$1" sh -c "cd '$NFS_MNT' && sha256sum -c --quiet /tmp/nfsrdma-sums"
}

nfs_client() {
	local s i tx0 rx0 tx1 rx1 bytes=0 want got
	check "modprobe rpcrdma and nfsv4" sh -c 'modprobe rpcrdma && modprobe nfsv4' ||
		bail "no NFS client"
	# The data set, made before the mount so its sums are known.
	rm -rf "$NFS_SRC"
	mkdir -p "$NFS_SRC" "$NFS_MNT"
	i=0
	for s in $NFS_SMALL; do
		i=$((i + 1))
		head -c "$s" /dev/urandom >"$NFS_SRC/small-$i"
		bytes=$((bytes + s))
	done
	head -c $((NFS_BIG_MIB << 20)) /dev/urandom >"$NFS_SRC/big"
	head -c $((NFS_DIRECT_MIB << 20)) /dev/urandom >"$NFS_SRC/direct"
	bytes=$((bytes + ((NFS_BIG_MIB + NFS_DIRECT_MIB) << 20)))
	(cd "$NFS_SRC" && sha256sum -- *) >/tmp/nfsrdma-sums

	barrier nfs-up 300 || bail "the server did not come up"
	tx0=$(counter "$DP_CLI_DEV" tx_bytes)
	rx0=$(counter "$DP_CLI_DEV" rx_bytes)
	if ! check "mount -o $NFS_OPTS $PEER_IP4:/" nfs_mount; then
		put nfs-written no
		barrier nfs-written 600
		barrier nfs-done 600
		return 1
	fi
	nfs_mounted_rdma
	expect_match "nfsstat -m: proto=rdma" "proto=rdma" "$(nfsstat -m 2>&1)"

	i=0
	for s in $NFS_SMALL; do
		i=$((i + 1))
		cp "$NFS_SRC/small-$i" "$NFS_MNT/" || break
	done
	check "small files of $NFS_SMALL bytes written (cp)" \
		cmp "$NFS_SRC/small-$i" "$NFS_MNT/small-$i" || nfs_diag
	check "${NFS_BIG_MIB} MiB written with dd (buffered, fsync)" \
		dd if="$NFS_SRC/big" of="$NFS_MNT/big" bs=1M conv=fsync status=none ||
		nfs_diag
	check "${NFS_DIRECT_MIB} MiB written with dd (O_DIRECT)" \
		dd if="$NFS_SRC/direct" of="$NFS_MNT/direct" bs=1M oflag=direct status=none ||
		nfs_diag
	want=$(sha256sum <"$NFS_SRC/direct" | cut -d' ' -f1)
	got=$(dd if="$NFS_MNT/direct" bs=1M iflag=direct status=none | sha256sum | cut -d' ' -f1)
	expect_eq "O_DIRECT read back, sha256 identical" "$want" "$got"
	nfs_check_all "every file's sha256 through the mount"

	put nfs-sums "$(cat /tmp/nfsrdma-sums)"
	put nfs-bytes "$bytes"
	put nfs-written yes
	barrier nfs-written 600

	check "umount" umount "$NFS_MNT"
	echo 3 >/proc/sys/vm/drop_caches
	check "mount again" nfs_mount
	nfs_check_all "every file's sha256 after a remount with cold caches"
	check "umount" umount "$NFS_MNT"

	tx1=$(counter "$DP_CLI_DEV" tx_bytes)
	rx1=$(counter "$DP_CLI_DEV" rx_bytes)
	# Written once, read back at least once after the remount.
	check "client's sroce0 tx_bytes rose by at least the $bytes bytes written ($((tx1 - tx0)))" \
		test $((tx1 - tx0)) -ge "$bytes"
	check "client's sroce0 rx_bytes rose by at least the $bytes bytes read ($((rx1 - rx0)))" \
		test $((rx1 - rx0)) -ge "$bytes"
	barrier nfs-done 600
	rm -rf "$NFS_SRC" /tmp/nfsrdma-sums
}

dp_setup
if [ "$ROLE" = b ]; then
	nfs_server
else
	nfs_client
	dp_stats "$DP_CLI_DEV" >&2
fi
done_testing
