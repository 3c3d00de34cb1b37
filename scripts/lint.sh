#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Static checks, each reported as TAP:
#   - a W=1 build and a sparse (C=2) build for every supported kernel,
#     with no warning at all (SROCE_LINT_BUILT=1: the W=1 builds are those
#     scripts/build-kernels.sh just made in build/KVER/, whose log is read
#     and in whose tree sparse then runs without compiling anything again;
#     tests/check.sh builds them so);
#   - checkpatch.pl --strict (from Debian's kernel source) on every C file;
#   - kernel-doc on the files with interfaces between them.
# Ends with "N passed, N failed"; exits non-zero on any failure.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cache=${SROCE_CACHE:-/var/cache/sroce}
# Parallel make jobs per build (tests/check.sh runs lint beside the VMs
# with one, at the lowest priority).
jobs=${SROCE_JOBS:-$(nproc)}
passed=0
failed=0
n=0

report() {
	# report STATUS DESCRIPTION [LOGFILE]
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2"
		passed=$((passed + 1))
	else
		echo "not ok $n - $2"
		[ -n "${3:-}" ] && sed 's/^/# /' "$3" | head -n 60
		failed=$((failed + 1))
	fi
}

# checkpatch.pl and its data files, extracted once from linux-source-6.1.
checkpatch_dir() {
	local tarball dir
	tarball=$(ls /usr/src/linux-source-6.1.tar.xz 2>/dev/null) || return 1
	dir=$cache/checkpatch/$(stat -c %Y "$tarball")
	if [ ! -x "$dir/scripts/checkpatch.pl" ]; then
		mkdir -p "$dir.tmp"
		tar -C "$dir.tmp" --strip-components=1 -xJf "$tarball" \
			linux-source-6.1/scripts/checkpatch.pl \
			linux-source-6.1/scripts/spelling.txt \
			linux-source-6.1/scripts/const_structs.checkpatch || return 1
		rm -rf "$dir" && mv "$dir.tmp" "$dir"
	fi
	echo "$dir"
}

log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT

# Kernel code: the module, its headers and its KUnit suites. (The
# user-space tools build with -Wall -Wextra -Werror instead.)
c_files=$(cd "$root" && find drivers include tests/kunit -name '*.[ch]' \
	! -name '*.mod.c' | sort)

# lint_fail LOG: any compiler or sparse diagnostic in LOG.
lint_fail() {
	grep -Eq 'warning|error|sparse:|Error' "$1"
}

# build_fresh KDIR OUT FLAGS: build a copy of the tree with FLAGS.
build_fresh() {
	local kdir=$1 out=$2
	shift 2
	(
		set -e
		tmp=$(mktemp -d)
		trap 'rm -rf "$tmp"' EXIT
		rsync -a --exclude /build --exclude /out --exclude /.git \
			"$root/" "$tmp/"
		make -s -j"$jobs" -C "$kdir" M="$tmp" "$@" modules 2>&1 |
			grep -v 'Skipping BTF generation' || true
	) >"$out" 2>&1
}

# build_reused KVER KDIR: the W=1 build of build/KVER/ (its log), then
# sparse over its tree: with the same flags the objects are up to date
# and kbuild only runs the checker (C=2 checks every file anyway).
build_reused() {
	local kver=$1 kdir=$2 src=$root/build/$1/src status
	grep -v 'Skipping BTF generation' "$root/build/$kver/build.log" \
		>"$log/$kver-W=1.log" 2>&1
	lint_fail "$log/$kver-W=1.log"
	report $((1 - $?)) "build W=1 against $name ($kver)" "$log/$kver-W=1.log"
	make -s -j"$jobs" -C "$kdir" M="$src" W=1 C=2 modules 2>&1 |
		grep -v 'Skipping BTF generation' >"$log/$kver-C=2.log"
	status=${PIPESTATUS[0]}
	lint_fail "$log/$kver-C=2.log" && status=1
	report "$status" "build C=2 against $name ($kver)" "$log/$kver-C=2.log"
}

echo "TAP version 13"
while read -r name kver kdir _; do
	if [ "${SROCE_LINT_BUILT:-0}" = 1 ] &&
	   grep -qx 'W=1' "$root/build/$kver/make-args" 2>/dev/null; then
		build_reused "$kver" "$kdir"
		continue
	fi
	for flags in W=1 C=2; do
		out=$log/$kver-$flags.log
		build_fresh "$kdir" "$out" $flags
		# Any compiler or sparse diagnostic counts as a failure.
		lint_fail "$out"
		report $((1 - $?)) "build $flags against $name ($kver)" "$out"
	done
done < <("$root/scripts/kernels.sh")

if cp=$(checkpatch_dir); then
	out=$log/checkpatch.log
	(cd "$root" && perl "$cp/scripts/checkpatch.pl" --strict --no-tree \
		--terse --show-types --ignore SPDX_LICENSE_TAG \
		--ignore FILE_PATH_CHANGES -f $c_files) >"$out" 2>&1
	report $? "checkpatch --strict" "$out"
else
	echo "# linux-source-6.1 missing: run 'make deps'"
	report 1 "checkpatch --strict"
fi

kdoc=$(ls /usr/src/linux-kbuild-6.1/scripts/kernel-doc 2>/dev/null | head -n1)
if [ -n "$kdoc" ]; then
	out=$log/kernel-doc.log
	(cd "$root" && perl "$kdoc" -none $(echo "$c_files" |
		grep -E '^(include|drivers)/')) >"$out" 2>&1
	grep -q . "$out"
	report $((1 - $?)) "kernel-doc" "$out"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
