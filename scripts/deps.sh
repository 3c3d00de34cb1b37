#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Install, with apt-get and only when missing, everything the build and test
# targets need on a Debian 12 machine. Safe to run repeatedly.
set -euo pipefail

pkgs=(
	# kernels, headers and source: Debian 12's 6.1 and 6.12
	linux-image-amd64 linux-headers-amd64 linux-source-6.1
	linux-image-6.12-amd64 linux-headers-6.12-amd64
	# building kernels and modules
	build-essential bc bison flex libelf-dev libssl-dev dwarves kmod cpio xz-utils
	zstd rsync sparse codespell python3
	# virtual machines
	qemu-system-x86 busybox-static
	# RDMA user space and peers, used inside the guests through the shared root
	rdma-core ibverbs-utils ibverbs-providers libibverbs-dev librdmacm-dev
	perftest rdmacm-utils python3-pyverbs iproute2 ethtool tcpdump
	qperf iperf3 nvme-cli
	# ping -A with DF for make bench's latency floor (busybox's has no -M)
	iputils-ping
	# kernel ULP scenarios: the NFS server's tools and mount.nfs (nfsrdma),
	# device-mapper's dmsetup (srp)
	nfs-kernel-server nfs-common dmsetup
	# applications over RDMA: fio's rdma engine, UCX (ucx_perftest, and
	# the UCP headers tools/ucpcheck builds against)
	fio ucx-utils libucx0 libucx-dev
	# Open MPI over UCX (mpirun, and mpicc for tools/mpicheck)
	openmpi-bin libopenmpi-dev
	# libfabric's fi_info and fi_pingpong
	libfabric-bin
	# the sroce-dkms package (make deb) and its installation test
	dkms dh-dkms debhelper dpkg-dev
	# decoding the trace events and the captured frames (observe scenario)
	linux-perf tshark
	# the plot beside make bench's table
	gnuplot-nox
)

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing packages: ${missing[*]}; run 'make deps' as root" >&2
	exit 1
fi

echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q || true
apt-get install -y -q --no-install-recommends "${missing[@]}"
# The NFS server and rpcbind are for the test guests, which start their
# own: none of them runs on the host.
if [ -d /run/systemd/system ]; then
	systemctl disable --now nfs-server.service rpcbind.service rpcbind.socket \
		>/dev/null 2>&1 || true
fi
