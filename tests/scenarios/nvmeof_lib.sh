# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# NVMe over Fabrics with the RDMA transport between the two guests, for
# nvmeof.sh and nvmeof_rxe.sh (no topology line: not a scenario itself).
# VM b exports a 64 MiB RAM disk through nvmet-rdma on its address; VM a
# connects with nvme-cli and checks a data set through the block device and
# through an ext4 file system, then disconnects.

NVMF_NQN=nqn.2026-11.invalid.sroce:nvmeof
NVMF_HOSTNQN=nqn.2014-08.org.nvmexpress:uuid:5f0e6c2a-4d1b-4a37-9c5e-7c1b0e2d9a01
NVMF_HOSTID=5f0e6c2a-4d1b-4a37-9c5e-7c1b0e2d9a01
NVMF_CFG=/sys/kernel/config/nvmet

nvmf_configfs() {
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
}

# nvmf_target_up PREFIX PORT: export /dev/ram0 on this VM's IPv4 address.
nvmf_target_up() {
	local p=$1 port=$2 sub=$NVMF_CFG/subsystems/$NVMF_NQN
	check "$p: modprobe nvmet-rdma and brd" sh -c 'modprobe nvmet-rdma && modprobe brd rd_nr=1 rd_size=65536' ||
		return 1
	nvmf_configfs
	check "$p: nvmet subsystem with /dev/ram0 as namespace 1, port $MY_IP4:$port (rdma)" sh -c "
		mkdir -p '$sub/namespaces/1' '$NVMF_CFG/ports/$port' &&
		echo 1 >'$sub/attr_allow_any_host' &&
		echo -n /dev/ram0 >'$sub/namespaces/1/device_path' &&
		echo 1 >'$sub/namespaces/1/enable' &&
		echo rdma >'$NVMF_CFG/ports/$port/addr_trtype' &&
		echo ipv4 >'$NVMF_CFG/ports/$port/addr_adrfam' &&
		echo '$MY_IP4' >'$NVMF_CFG/ports/$port/addr_traddr' &&
		echo '$port' >'$NVMF_CFG/ports/$port/addr_trsvcid' &&
		ln -s '$sub' '$NVMF_CFG/ports/$port/subsystems/$NVMF_NQN'"
}

# nvmf_target_down PREFIX PORT: remove the export and the modules.
nvmf_target_down() {
	local p=$1 port=$2 sub=$NVMF_CFG/subsystems/$NVMF_NQN
	check "$p: nvmet export removed, modules unloaded" sh -c "
		rm -f '$NVMF_CFG/ports/$port/subsystems/$NVMF_NQN' &&
		rmdir '$NVMF_CFG/ports/$port' &&
		echo 0 >'$sub/namespaces/1/enable' &&
		rmdir '$sub/namespaces/1' && rmdir '$sub' &&
		modprobe -r nvmet-rdma nvmet && rmmod brd"
}

# The namespace's block device, once the connection made it appear.
nvmf_blk() {
	local d
	for d in /dev/nvme*n1; do
		[ -b "$d" ] && { echo "$d"; return 0; }
	done
	return 1
}

# nvmf_check_files DIR: every file of the data set has its checksum.
nvmf_check_files() {
	(cd "$1" && sha256sum -c --quiet /tmp/nvmf-sums)
}

# nvmf_host PREFIX PORT: connect, check the data set, disconnect.
nvmf_host() {
	local p=$1 port=$2 blk mnt=/tmp/nvmf-mnt i want got
	check "$p: modprobe nvme-rdma" modprobe nvme-rdma || return 1
	check "$p: nvme connect -t rdma -a $PEER_IP4 -s $port" \
		nvme connect -t rdma -a "$PEER_IP4" -s "$port" -n "$NVMF_NQN" \
		--hostnqn="$NVMF_HOSTNQN" --hostid="$NVMF_HOSTID" || return 1
	if ! wait_until 30 nvmf_blk; then
		not_ok "$p: namespace block device appears"
		return 1
	fi
	blk=$(nvmf_blk)
	ok "$p: namespace block device appears ($blk)"

	head -c $((16 << 20)) /dev/urandom >/tmp/nvmf-data
	want=$(sha256sum </tmp/nvmf-data | cut -d' ' -f1)
	check "$p: write 16 MiB through $blk (O_DIRECT)" \
		dd if=/tmp/nvmf-data of="$blk" bs=1M oflag=direct conv=fsync status=none
	got=$(dd if="$blk" bs=1M count=16 iflag=direct status=none | sha256sum | cut -d' ' -f1)
	expect_eq "$p: read back through $blk (O_DIRECT), sha256 identical" "$want" "$got"

	check "$p: mkfs.ext4 on $blk" mkfs.ext4 -q -F "$blk"
	mkdir -p "$mnt"
	check "$p: mount ext4" mount "$blk" "$mnt"
	mkdir -p "$mnt/set"
	cp /tmp/nvmf-data "$mnt/set/big"
	for i in $(seq 1 100); do
		head -c $((i * 997)) /dev/urandom >"$mnt/set/small-$i"
	done
	(cd "$mnt/set" && sha256sum -- *) >/tmp/nvmf-sums
	check "$p: 101 files written, unmounted" umount "$mnt"
	echo 3 >/proc/sys/vm/drop_caches
	check "$p: mount again" mount "$blk" "$mnt"
	check "$p: every file's sha256 as written" nvmf_check_files "$mnt/set"
	check "$p: umount" umount "$mnt"
	check "$p: nvme disconnect" nvme disconnect -n "$NVMF_NQN"
	check_wait "$p: namespace block device gone" 30 sh -c '! ls /dev/nvme*n1 >/dev/null 2>&1'
	modprobe -r nvme-rdma nvme-fabrics >/dev/null 2>&1
	rm -f /tmp/nvmf-data /tmp/nvmf-sums
}

# nvmf_session PREFIX PORT: VM b serves, VM a is the host.
nvmf_session() {
	local p=$1 port=$2
	if [ "$ROLE" = b ]; then
		nvmf_target_up "$p" "$port" || bail "no NVMe target"
		barrier "nvmf-up-$port" 300
		barrier "nvmf-done-$port" 600
		nvmf_target_down "$p" "$port"
	else
		barrier "nvmf-up-$port" 300 || bail "the target did not come up"
		nvmf_host "$p" "$port"
		barrier "nvmf-done-$port" 600
	fi
}
