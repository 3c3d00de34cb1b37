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

# _rf_relay LABEL LINE: one line of the tool's output as TAP or a note.
_rf_relay() {
	printf '%s\n' "$2" >&2
	case $2 in
	"ok "*) ok "$1: ${2#ok * - }" ;;
	"not ok "*) not_ok "$1: ${2#not ok * - }" ;;
	"# "*) diag "$1: ${2#\# }" ;;
	esac
}

rf_run() {
	local label=$1 limit=$(($2 * SROCE_SLOW)) mode=$3 out pid n=0 line
	local ended=0 deadline lines=()
	shift 3
	out=$(mktemp)
	log "+ (as nobody, ${limit}s) $RF_TOOL $mode $*"
	rf_user timeout -k 10 "$limit" "$RF_TOOL" "$mode" "$@" >"$out" 2>&1 &
	pid=$!
	# Relayed as it comes, so that what ran before a kernel crash is on
	# record; and never waited for past the limit: a process stuck in the
	# kernel ignores even SIGKILL.
	deadline=$((SECONDS + limit + 30))
	while :; do
		kill -0 "$pid" 2>/dev/null || ended=1
		mapfile -t -s "$n" lines <"$out"
		# A line still being written waits for the next round.
		if [ $ended = 0 ] && [ -n "$(tail -c 1 "$out")" ]; then
			unset 'lines[-1]'
		fi
		for line in "${lines[@]}"; do
			_rf_relay "$label" "$line"
		done
		n=$((n + ${#lines[@]}))
		[ $ended = 1 ] && break
		if [ $SECONDS -ge $deadline ]; then
			not_ok "$label: finished within ${limit}s" \
				"still running $((limit + 30)) s after it started: stuck in the kernel?" \
				"its last lines:" "$(tail -n 15 "$out")"
			RF_RC=124
			rm -f "$out"
			return
		fi
		sleep 1
	done
	wait "$pid"
	RF_RC=$?
	if [ "$RF_RC" -eq 124 ] || [ "$RF_RC" -eq 137 ]; then
		not_ok "$label: finished within ${limit}s" \
			"killed by timeout; its last lines:" "$(tail -n 15 "$out")"
	elif ! grep -qE '^[0-9]+ passed, [0-9]+ failed$' "$out"; then
		not_ok "$label: ran to its end" "exit status $RF_RC; its last lines:" \
			"$(tail -n 15 "$out")"
	fi
	rm -f "$out"
}
