# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Library for the sroce VM scenarios. A scenario is a bash script in
# tests/scenarios/ that runs as root inside a test guest (tests/vm/guest.sh
# starts it) and prints TAP on stdout; its stderr goes to a log file.
# Header lines the runner reads:
#
#   # topology: netns | twovm     (required; "netns twovm" runs the
#                                  scenario in each, named NAME_netns and
#                                  NAME_twovm)
#   # kernels: 6.1 6.12 debug     (default: all; "K:TOPO" names a kernel
#                                  for one topology only; "none" runs it
#                                  only under SROCE_ALL_KERNELS=1, as
#                                  make check-full does)
#   # full-kernels: 6.12          (stock kernels the "kernels:" header
#                                  leaves out that make check-full runs
#                                  it on; "K:TOPO" as above)
#   # timeout: SECONDS            (default 180; scaled by 5 on the debug kernel)
#   # requires: sroce             (fail at once when build/KVER/sroce.ko is missing)
#   # isolate: yes                (boot a VM for this scenario alone)
#   # vcpus: N                    (default 1: each VM of the topology boots
#                                  with N vCPUs; scenarios with different
#                                  counts never share a boot)
#
# Environment from the harness:
#   ROLE          a or b (twovm; always a on netns)
#   TOPO          netns or twovm
#   KVER          uname -r
#   SROCE_KNAME   6.1, 6.12, debug or debug-6.12
#   SROCE_SLOW    multiply waiting times by this (5 on the debug kernel)
#   SROCE_SYNC    directory shared by both VMs for this scenario
#
# Topology at the start of a scenario:
#   netns: namespaces h1 and h2, veth v1 (h1) <-> v2 (h2), MTU 1500,
#          v1 198.18.0.1/24 2001:db8::1/64, v2 198.18.0.2/24 2001:db8::2/64
#          and, in the initial namespace, down and without addresses, a
#          virtio NIC whose link has no peer (MAC $MAC_LONE, see
#          lone_nic_up): it never completes a transmission
#   twovm: eth0 of VM a 198.18.0.1 / 2001:db8::1, VM b .2 / ::2, MTU 1500
# No module beyond what the topology needs is loaded; the harness removes
# devices, namespaces and modules after each scenario.

: "${ROLE:=a}" "${TOPO:=netns}" "${SROCE_SLOW:=1}"
: "${KVER:=$(uname -r)}"
export ROLE TOPO KVER SROCE_SLOW

NET4_A=198.18.0.1
NET4_B=198.18.0.2
NET6_A=2001:db8::1
NET6_B=2001:db8::2
MAC_A=52:54:00:12:34:01
MAC_B=52:54:00:12:34:02
# shellcheck disable=SC2034 # for the scenarios
MAC_LONE=52:54:00:12:34:09
# shellcheck disable=SC2034 # for the scenarios
ROCE_PORT=4791

# shellcheck disable=SC2034 # for the scenarios
if [ "$ROLE" = b ]; then
	MY_IP4=$NET4_B PEER_IP4=$NET4_A MY_IP6=$NET6_B PEER_IP6=$NET6_A PEER=a
else
	MY_IP4=$NET4_A PEER_IP4=$NET4_B MY_IP6=$NET6_A PEER_IP6=$NET6_B PEER=b
fi

# nap SECONDS: sleep without starting a process. A guest under TCG pays
# tens of milliseconds per fork and exec (a third of a second on the debug
# kernel), so a polling loop around sleep(1) kept its CPU busy and slowed
# down the very work it waited for. read -t on a pipe that this shell
# holds open for writing waits out the time instead.
_nap_fd=
nap() {
	[ -n "$_nap_fd" ] || exec {_nap_fd}<> <(:)
	read -r -t "$1" -u "$_nap_fd" _ || :
}

# ---------------------------------------------------------------------------
# TAP

_tap_n=0
_tap_failed=0
_tap_planned=

plan() {
	_tap_planned=$1
	echo "1..$1"
}

# done_testing: print the plan at the end when plan was not called first.
done_testing() {
	[ -n "$_tap_planned" ] || echo "1..$_tap_n"
	_tap_planned=${_tap_planned:-$_tap_n}
	return 0
}

# diag MESSAGE...: each argument (and each line of it) as a TAP comment.
diag() {
	local arg line
	for arg; do
		while IFS= read -r line; do
			echo "# $line"
		done <<<"$arg"
	done
}

# diag_file FILE [MAXLINES]: a command's output as diagnostics.
diag_file() {
	local max=${2:-60} n
	n=$(wc -l <"$1")
	if [ "$n" -gt "$max" ]; then
		echo "# ... ($((n - max)) earlier lines in the log)"
	fi
	tail -n "$max" "$1" | sed 's/^/#   /'
}

# log: to the scenario's log only.
log() { echo "[$(date +%T)] $*" >&2; }

ok() {
	_tap_n=$((_tap_n + 1))
	echo "ok $_tap_n - $*"
	log "ok $_tap_n - $*"
}

# not_ok DESC [DIAGNOSTIC...]
not_ok() {
	local desc=$1
	shift
	_tap_n=$((_tap_n + 1))
	_tap_failed=$((_tap_failed + 1))
	echo "not ok $_tap_n - $desc"
	log "not ok $_tap_n - $desc"
	[ $# -gt 0 ] && diag "$@"
	return 0
}

skip() {
	_tap_n=$((_tap_n + 1))
	echo "ok $_tap_n - $1 # SKIP ${2:-}"
}

# bail REASON: stop the scenario; the runner reports it as failed.
bail() {
	echo "Bail out! $*"
	log "Bail out! $*"
	exit 2
}

# check DESC CMD [ARGS...]: ok when CMD exits 0; otherwise not ok with
# its exit status and output. The output always goes to the log.
check() {
	local desc=$1 rc out
	shift
	out=$(mktemp)
	log "+ $*"
	"$@" >"$out" 2>&1
	rc=$?
	cat "$out" >&2
	if [ $rc -eq 0 ]; then
		ok "$desc"
	else
		not_ok "$desc"
		diag "command: $*" "exit status: $rc"
		diag_file "$out"
	fi
	rm -f "$out"
	return $rc
}

# check_fail DESC CMD [ARGS...]: ok when CMD fails.
check_fail() {
	local desc=$1 rc out
	shift
	out=$(mktemp)
	log "+ (must fail) $*"
	"$@" >"$out" 2>&1
	rc=$?
	cat "$out" >&2
	if [ $rc -ne 0 ]; then
		ok "$desc"
		rm -f "$out"
		return 0
	fi
	not_ok "$desc"
	diag "command: $*" "succeeded but must fail"
	diag_file "$out"
	rm -f "$out"
	return 1
}

# expect_eq DESC EXPECTED ACTUAL
expect_eq() {
	if [ "$2" = "$3" ]; then
		ok "$1"
		return 0
	fi
	not_ok "$1" "expected: '$2'" "got:      '$3'"
	return 1
}

expect_ne() {
	if [ "$2" != "$3" ]; then
		ok "$1"
		return 0
	fi
	not_ok "$1" "expected anything but '$2'"
	return 1
}

# expect_match DESC ERE TEXT
expect_match() {
	if grep -qE -- "$2" <<<"$3"; then
		ok "$1"
		return 0
	fi
	not_ok "$1" "expected a match for: $2" "in:"
	diag "$3"
	return 1
}

expect_nomatch() {
	if ! grep -qE -- "$2" <<<"$3"; then
		ok "$1"
		return 0
	fi
	not_ok "$1" "expected no match for: $2" "in:"
	diag "$3"
	return 1
}

# wait_until SECONDS CMD [ARGS...]: poll CMD (quietly) until it succeeds;
# SECONDS is scaled by SROCE_SLOW.
wait_until() {
	local limit=$(($1 * SROCE_SLOW)) start=$SECONDS
	shift
	while ! "$@" >/dev/null 2>&1; do
		if [ $((SECONDS - start)) -ge "$limit" ]; then
			log "gave up after $((SECONDS - start)) s: $*"
			return 1
		fi
		nap 0.2
	done
	# Long waits show in the log, where the budget is looked for.
	[ $((SECONDS - start)) -lt 5 ] || log "waited $((SECONDS - start)) s: $*"
}

# check_wait DESC SECONDS CMD [ARGS...]: ok once CMD succeeds within SECONDS.
check_wait() {
	local desc=$1 secs=$2 out
	shift 2
	log "+ (wait ${secs}s) $*"
	if wait_until "$secs" "$@"; then
		ok "$desc"
		return 0
	fi
	out=$("$@" 2>&1)
	not_ok "$desc" "still failing after $((secs * SROCE_SLOW)) s: $*"
	[ -n "$out" ] && diag "$out"
	return 1
}

# ---------------------------------------------------------------------------
# Network namespaces and topologies

h1() { ip netns exec h1 "$@"; }
h2() { ip netns exec h2 "$@"; }

# in_ns NS CMD...: run in namespace NS; an empty NS is the initial one.
in_ns() {
	local ns=$1
	shift
	if [ -n "$ns" ]; then
		ip netns exec "$ns" "$@"
	else
		"$@"
	fi
}

# ping_ok NS ADDR [COUNT]: ADDR answers pings from namespace NS ("" =
# initial); iputils ping when installed, busybox's otherwise.
ping_ok() {
	local ns=$1 addr=$2 count=${3:-2} fam=-4
	[[ $addr == *:* ]] && fam=-6
	if command -v ping >/dev/null; then
		in_ns "$ns" ping "$fam" -c "$count" -W 5 "$addr"
	else
		in_ns "$ns" busybox ping "$fam" -c "$count" -W 5 "$addr"
	fi
}

# iface_by_mac MAC: the name of the netdev with that address.
iface_by_mac() {
	local d
	for d in /sys/class/net/*; do
		[ "$(cat "$d/address" 2>/dev/null)" = "$1" ] && { echo "${d##*/}"; return 0; }
	done
	return 1
}

# lone_nic_up NAME NS: the netns guest's NIC with no peer, renamed NAME,
# in namespace NS, up, with 198.19.0.1/24 and 2001:db8:1::1/64.
lone_nic_up() {
	local dev
	dev=$(iface_by_mac "$MAC_LONE") || return
	ip link set "$dev" down && ip link set "$dev" name "$1" &&
	ip link set "$1" netns "$2" || return
	ip -n "$2" addr add 198.19.0.1/24 dev "$1" &&
	ip -n "$2" addr add 2001:db8:1::1/64 dev "$1" nodad &&
	ip -n "$2" link set "$1" up || return
	wait_until 10 link_is_up "$2" "$1"
}

# topo_netns_up: (re)create h1, h2 and the veth pair between them.
# Each namespace is configured by one "ip -batch": every exec costs
# seconds on the debug kernel under TCG.
topo_netns_up() {
	[ ! -e /run/netns/h1 ] || ip netns del h1
	[ ! -e /run/netns/h2 ] || ip netns del h2
	[ -d /sys/module/veth ] || modprobe -q veth 2>/dev/null
	ip netns add h1 && ip netns add h2 &&
	ip link add v1 netns h1 type veth peer name v2 netns h2 || return
	printf '%s\n' "addr add $NET4_A/24 dev v1" "addr add $NET6_A/64 dev v1 nodad" \
		"link set lo up" "link set v1 up" | ip -n h1 -batch - || return
	printf '%s\n' "addr add $NET4_B/24 dev v2" "addr add $NET6_B/64 dev v2 nodad" \
		"link set lo up" "link set v2 up" | ip -n h2 -batch - || return
	wait_until 10 link_is_up h1 v1 && wait_until 10 link_is_up h2 v2
}

# link_state NS DEV: operational state of DEV in NS ("" = initial ns),
# e.g. UP, DOWN, LOWERLAYERDOWN.
link_state() {
	in_ns "$1" ip -o link show dev "$2" 2>/dev/null |
		sed -n 's/.* state \([A-Z_]*\) .*/\1/p'
}

link_is_up() { [ "$(link_state "$1" "$2")" = UP ]; }

# has_carrier NS DEV: DEV in NS ("" = initial ns) is up with a carrier.
has_carrier() {
	in_ns "$1" ip -o link show dev "$2" 2>/dev/null | grep -q 'state UP' &&
		! in_ns "$1" ip -o link show dev "$2" | grep -q NO-CARRIER
}

topo_netns_down() {
	ip -all netns delete 2>/dev/null
	return 0
}

# topo_twovm_up: the virtio NIC with this role's MAC becomes eth0 with the
# role's addresses and MTU 1500.
topo_twovm_up() {
	local mac=$MAC_A dev
	[ "$ROLE" = b ] && mac=$MAC_B
	modprobe -q virtio_net 2>/dev/null
	wait_until 10 iface_by_mac "$mac" || { echo "no NIC with MAC $mac" >&2; return 1; }
	dev=$(iface_by_mac "$mac")
	if [ "$dev" != eth0 ]; then
		ip link set "$dev" down
		ip link set "$dev" name eth0 || return
	fi
	ip link set eth0 down
	ip addr flush dev eth0
	ip link set eth0 mtu 1500 &&
	ip addr add "$MY_IP4/24" dev eth0 &&
	ip addr add "$MY_IP6/64" dev eth0 nodad &&
	ip link set eth0 up || return
	wait_until 10 link_is_up "" eth0
}

# peer_answers [TRIES]: the peer VM answers a ping on the twovm link within
# TRIES tries (default 1) of two seconds each; busybox's ping where the
# guest has no other.
peer_answers() {
	local i ping=(ping)
	command -v ping >/dev/null || ping=(busybox ping)
	for ((i = 0; i < ${1:-1}; i++)); do
		"${ping[@]}" -c 1 -W 2 "$PEER_IP4" >/dev/null 2>&1 && return 0
	done
	return 1
}

# nic_reset: reset the twovm link's NIC as a new boot would. Unbinding
# virtio-net and binding it again resets the virtio device, and QEMU then
# drops whatever its side of the link still held; eth0 comes back as
# topo_twovm_up leaves it (MTU 1500, the addresses of this VM). An RDMA
# device on eth0 goes with the old netdev.
nic_reset() {
	local dev drv=/sys/bus/virtio/drivers/virtio_net
	dev=$(basename "$(readlink -f /sys/class/net/eth0/device)") || return
	echo "$dev" >"$drv/unbind" && echo "$dev" >"$drv/bind" || return
	topo_twovm_up
}

# ---------------------------------------------------------------------------
# Between the two VMs (twovm). Rendezvous files live in SROCE_SYNC, a
# directory both VMs see through the harness's 9p share, so they work
# whatever a scenario does to the test link. On netns they are local.

# _sync_dir: set _sync to the directory shared with the peer, made on
# first use (no command substitution: the loops below call it).
_sync=
_sync_dir() {
	[ -n "$_sync" ] && return 0
	_sync=${SROCE_SYNC:-/tmp/sroce-sync}
	mkdir -p "$_sync"
}

# _peer_gone: the peer's scenario already ended (the harness writes
# exit.ROLE when a scenario process ends).
_peer_gone() {
	[ "$TOPO" = twovm ] && _sync_dir && [ -e "$_sync/exit.$PEER" ]
}

# barrier NAME [SECONDS]: wait until both VMs reached barrier NAME.
# Fails when the peer ends its scenario first or after SECONDS (default
# 120, scaled).
barrier() {
	local name=$1 limit=$((${2:-120} * SROCE_SLOW)) dir start=$SECONDS
	[ "$TOPO" = twovm ] || return 0
	_sync_dir && dir=$_sync
	touch "$dir/bar.$name.$ROLE"
	log "barrier $name: waiting for $PEER"
	until [ -e "$dir/bar.$name.$PEER" ]; do
		# The peer may have reached the barrier just before it ended.
		if _peer_gone && [ ! -e "$dir/bar.$name.$PEER" ]; then
			log "barrier $name: peer $PEER ended its scenario"
			return 1
		fi
		[ $((SECONDS - start)) -ge "$limit" ] && { log "barrier $name: timeout"; return 1; }
		nap 0.1
	done
	log "barrier $name: passed"
}

# put KEY VALUE: publish a small value for the peer.
put() {
	local dir
	_sync_dir && dir=$_sync
	printf '%s\n' "$2" >"$dir/.val.$1.$ROLE"
	mv -f "$dir/.val.$1.$ROLE" "$dir/val.$1"
	log "put $1=$2"
}

# get KEY [SECONDS]: wait for the value the peer published under KEY.
get() {
	local key=$1 limit=$((${2:-120} * SROCE_SLOW)) dir start=$SECONDS
	_sync_dir && dir=$_sync
	until [ -e "$dir/val.$key" ]; do
		# The peer may have published the value just before it ended.
		if _peer_gone && [ ! -e "$dir/val.$key" ]; then
			log "get $key: peer $PEER ended its scenario"
			return 1
		fi
		[ $((SECONDS - start)) -ge "$limit" ] && { log "get $key: timeout"; return 1; }
		nap 0.1
	done
	cat "$dir/val.$key"
}

# ---------------------------------------------------------------------------
# Kernel log

# dmesg_mark: remember this point of the kernel log.
dmesg_mark() {
	_dmesg_marker="srocevm: mark $$.$RANDOM.$SECONDS"
	echo "$_dmesg_marker" >/dev/kmsg
}

# dmesg_since: kernel log lines after the last dmesg_mark.
dmesg_since() {
	dmesg | awk -v m="$_dmesg_marker" 'found { print } index($0, m) { found = 1 }'
}

# ---------------------------------------------------------------------------
# RDMA

# need_module NAME: load a module or stop the scenario.
need_module() {
	local out
	out=$(modprobe "$1" 2>&1) && return 0
	if [ "$1" = sroce ] && ! modinfo sroce >/dev/null 2>&1; then
		bail "sroce.ko is not installed for $KVER: the host's build/$KVER/ has no sroce.ko (make kmods)"
	fi
	bail "modprobe $1 failed: $out"
}

ibdev_exists() { [ -e "/sys/class/infiniband/$1" ]; }
ibdev_gone() { ! ibdev_exists "$1"; }

# ibv_attr DEV KEY: the first word of KEY's value in `ibv_devinfo -v`
# (port attributes of port 1 for port keys).
ibv_attr() {
	ibv_devinfo -d "$1" -v 2>/dev/null |
		awk -v k="$2" '{ sub(/^[ \t]+/, "") }
			index($0, k ":") == 1 { sub(/^[^:]*:[ \t]*/, ""); split($0, w, /[ \t]+/); print w[1]; exit }'
}

# port_is DEV STATE: port 1 of DEV is in STATE, as ibv_devinfo names it
# (PORT_ACTIVE...). Read from sysfs, which asks the driver as
# ibv_query_port does, without a process: the waits poll it.
port_is() {
	local s
	read -r s 2>/dev/null <"/sys/class/infiniband/$1/ports/1/state" || return 1
	[ "PORT_${s#*: }" = "$2" ]
}

# Sysfs GID table of port 1: lines "INDEX GID TYPE NETDEV", TYPE with "_"
# for blanks. Builtins only, and only the used part of the table: the RDMA
# core fills the lowest free index first, so after 64 empty entries in a
# row nothing follows (a scenario would have to delete more addresses
# than that to leave a wider hole). A process or a sysfs file costs
# milliseconds in a TCG guest and far more on the debug kernel, and the
# table has 1024 entries.
gid_table() {
	local p=/sys/class/infiniband/$1/ports/1 i g t n empty=0
	for ((i = 0; empty < 64; i++)); do
		[ -e "$p/gids/$i" ] || break
		g=
		read -r g 2>/dev/null <"$p/gids/$i"
		if [ -z "$g" ] || [ "$g" = 0000:0000:0000:0000:0000:0000:0000:0000 ]; then
			empty=$((empty + 1))
			continue
		fi
		empty=0 t= n=
		read -r t 2>/dev/null <"$p/gid_attrs/types/$i"
		read -r n 2>/dev/null <"$p/gid_attrs/ndevs/$i"
		echo "$i $g ${t// /_} $n"
	done
}

# gid_index DEV GID [TYPE]: index of GID (sysfs notation) in the port's
# table, of TYPE ("RoCE v2" by default).
gid_index() {
	local want=${3:-RoCE v2} i g t n
	while read -r i g t n; do
		if [ "$g" = "$2" ] && [ "$t" = "${want// /_}" ]; then
			echo "$i"
			return 0
		fi
	done < <(gid_table "$1")
	return 1
}

# gid_v4 ADDR: the RoCE GID of an IPv4 address (::ffff:a.b.c.d).
gid_v4() {
	local IFS=.
	# shellcheck disable=SC2086
	set -- $1
	printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x\n' "$1" "$2" "$3" "$4"
}

# gid_v6 ADDR: an IPv6 address in sysfs GID notation (8 groups of 4).
gid_v6() {
	local a=$1 head tail h=() t=() out=() i
	if [[ $a == *::* ]]; then
		head=${a%%::*} tail=${a#*::}
	else
		head=$a tail=
	fi
	IFS=: read -r -a h <<<"$head"
	IFS=: read -r -a t <<<"$tail"
	for i in "${h[@]}"; do out+=("$(printf '%04x' "0x${i:-0}")"); done
	for ((i = ${#h[@]} + ${#t[@]}; i < 8; i++)); do out+=(0000); done
	for i in "${t[@]}"; do out+=("$(printf '%04x' "0x${i:-0}")"); done
	local IFS=:
	echo "${out[*]}"
}

# eui64_guid MAC: the node GUID an RoCE device derives from a MAC
# (EUI-64: ff:fe in the middle, universal/local bit flipped).
eui64_guid() {
	local IFS=:
	# shellcheck disable=SC2086
	set -- $1
	printf '%02x%s:%sff:fe%s:%s%s\n' $((0x$1 ^ 2)) "$2" "$3" "$4" "$5" "$6"
}

# ib_mtu_for NETDEV_MTU: the active IB MTU RoCEv2 over IPv6 allows.
ib_mtu_for() {
	local room=$(($1 - 92)) m best=0
	for m in 256 512 1024 2048 4096; do
		[ "$m" -le "$room" ] && best=$m
	done
	echo $best
}

# udp_port_count [NS]: UDP sockets bound to port 4791 in NS (v4 and v6).
udp_port_count() {
	in_ns "${1:-}" cat /proc/net/udp /proc/net/udp6 2>/dev/null |
		awk '$2 ~ /:12B7$/ { n++ } END { print n + 0 }'
}
