# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Shared by ringfuzz.sh and churn.sh (no scenario itself): run
# tools/bin/sroce-ringfuzz as an unprivileged user (nobody, no
# capabilities) on sroce0 in h1, sending to the device's own GIDs.
#
# rf_setup: the devices (dp_setup), a private copy of the tool, and
#   /dev/infiniband/uverbs* opened to everyone: nothing else is granted.
# rf_user CMD...: CMD in h1 as nobody:nogroup without any capability.
# rf_run LABEL LIMIT MODE ARGS...: the tool's MODE for at most LIMIT
#   seconds (scaled by SROCE_SLOW), its test points reported as
#   "LABEL: DESC"; a tool that ends without its summary line (a crash, a
#   timeout) is a failure. Sets RF_RC to its exit status.

shopt -s lastpipe

RF_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
RF_TOOL=$RF_REPO/tools/bin/sroce-ringfuzz

rf_setup() {
	[ -x "$RF_TOOL" ] ||
		bail "$RF_TOOL is missing: build it on the host with 'make -C tools'"
	# A private copy: the host's tools/bin may be rebuilt while this runs.
	if ! cp "$RF_TOOL" /tmp/sroce-ringfuzz || ! chmod 755 /tmp/sroce-ringfuzz; then
		bail "cannot copy $RF_TOOL"
	fi
	RF_TOOL=/tmp/sroce-ringfuzz
	dp_setup
	chmod 666 /dev/infiniband/uverbs* || bail "no uverbs device"
}

rf_user() {
	in_ns h1 setpriv --reuid=nobody --regid=nogroup --clear-groups \
		--inh-caps=-all --bounding-set=-all -- \
		env SROCE_SLOW="$SROCE_SLOW" "$@"
}

rf_run() {
	local label=$1 limit=$(($2 * SROCE_SLOW)) mode=$3 out line
	shift 3
	out=$(mktemp)
	RF_RC=255
	log "+ (as nobody, ${limit}s) $RF_TOOL $mode $*"
	# Line by line, so that what ran before a kernel crash is on record.
	{
		rf_user timeout -k 10 "$limit" "$RF_TOOL" "$mode" "$@" 2>&1
		echo "rf-exit $?"
	} | while IFS= read -r line; do
		printf '%s\n' "$line" >&2
		case $line in
		"ok "*) ok "$label: ${line#ok * - }" ;;
		"not ok "*) not_ok "$label: ${line#not ok * - }" ;;
		"rf-exit "*) RF_RC=${line#rf-exit } ;;
		"# "*)
			diag "$label: ${line#\# }"
			printf '%s\n' "$line" >>"$out"
			;;
		*) printf '%s\n' "$line" >>"$out" ;;
		esac
	done
	if [ "$RF_RC" -eq 124 ] || [ "$RF_RC" -eq 137 ]; then
		not_ok "$label: finished within ${limit}s" \
			"killed by timeout; its last lines:" "$(tail -n 15 "$out")"
	elif ! grep -qE '^[0-9]+ passed, [0-9]+ failed$' "$out"; then
		not_ok "$label: ran to its end" "exit status $RF_RC; its last lines:" \
			"$(tail -n 15 "$out")"
	fi
	rm -f "$out"
}
