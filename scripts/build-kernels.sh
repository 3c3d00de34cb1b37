#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build sroce's modules for several kernels, each in its own copy of the tree,
# and collect them in build/KVER/*.ko, where the VM harness picks them up.
#
# Usage: build-kernels.sh [KVER=KDIR ...] [-- MAKE_ARGS...]
#   Without KVER=KDIR pairs: every supported stock kernel (scripts/kernels.sh).
#   MAKE_ARGS go to kbuild, e.g. W=1 or C=2. SROCE_JOBS: parallel make
#   jobs (default: one per CPU).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
targets=()
make_args=()
while [ $# -gt 0 ]; do
	case $1 in
	--) shift; make_args=("$@"); break ;;
	*=*) targets+=("$1") ;;
	*) echo "usage: $0 [KVER=KDIR ...] [-- MAKE_ARGS]" >&2; exit 2 ;;
	esac
	shift
done
if [ ${#targets[@]} -eq 0 ]; then
	while read -r _ kver kdir _; do
		targets+=("$kver=$kdir")
	done < <("$root/scripts/kernels.sh")
fi
[ ${#targets[@]} -gt 0 ] || { echo "no kernels to build for: run 'make deps'" >&2; exit 1; }

for t in "${targets[@]}"; do
	kver=${t%%=*}
	kdir=${t#*=}
	out=$root/build/$kver
	mkdir -p "$out/src"
	rsync -a --delete --exclude /build --exclude /out --exclude /.git \
		--exclude '*.o' --exclude '*.ko' --exclude '.*.cmd' --exclude '*.mod' \
		--exclude '*.mod.c' --exclude '*.order' --exclude Module.symvers \
		"$root/" "$out/src/"
	echo "  BUILD   $kver"
	if ! make -s -j"${SROCE_JOBS:-$(nproc)}" -C "$kdir" M="$out/src" "${make_args[@]}" modules \
			>"$out/build.log" 2>&1; then
		cat "$out/build.log" >&2
		exit 1
	fi
	grep -v 'Skipping BTF generation' "$out/build.log" || true
	# What scripts/lint.sh may reuse: the flags of this build.
	printf '%s\n' "${make_args[@]}" >"$out/make-args"
	rm -f "$out"/*.ko
	find "$out/src" -name '*.ko' -exec cp {} "$out/" \;
	ls "$out"/*.ko >/dev/null
done
