# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Guest side of tests/bench.sh: runs in both VMs of the twovm topology
# through tests/vm/shell.sh (lib.sh already sourced). VM b serves, VM a
# measures; every figure becomes one line on VM a's output:
#
#   BENCH <tab> MTU <tab> STACK <tab> TEST <tab> X <tab> METRIC <tab> VALUE
#
# MTU is the netdev MTU of both eth0s; STACK is sroce, sroce1 (sroce
# loaded with tx_burst=1, ack_coalesce=0 and ack_hold_us=0: every packet
# handed to the IP layer alone, every ACK requested sent at once), rxe
# or tcp, or one of the link's floors: floor (TEST icmp_echo, X the ping
# payload), udp (TEST iperf3_udp, X the datagram size: the RoCE payload
# of one packet at this MTU) or link (TEST pktgen, X that payload too:
# full-size frames from VM a's kernel packet generator). X is otherwise
# the message size in bytes,
# or the QP count for TEST ib_write_bw_qps.
# METRIC is one of
#   MiBps          perftest "BW average" in MiB/s; iperf3's receiver rate
#   sent_MiBps, lost_pct
#                  UDP: the sender's rate and the datagrams lost
#   t_typical, t_avg, t_p99, t_p999
#                  perftest latency (half a round trip, usec): the median,
#                  the mean, the 99th and 99.9th percentiles
#   lat            qperf tcp_lat (half a round trip, usec, the mean)
#   count          ICMP echo: the replies the figures are computed from
#   frames, sent_frames, frames_per_s
#                  pktgen: the frames VM b received, those VM a sent, and
#                  the rate received (MiBps is that rate times X)
#   bytes          payload the run moved
#   active_mtu     the RDMA port's active MTU (TEST port, X 0)
#   tx_burst, ack_coalesce, ack_hold_us
#                  the sroce module's parameters as read back
#                  (TEST param, X 0), "absent" when it has none
#   cpu_kern, cpu_user
#                  CPU seconds both guests spent in the kernel (system,
#                  irq, softirq) and in user space during the run, from
#                  /proc/stat; perftest polls its completion queue, so its
#                  user time is the length of the run
#   frames         frames both guests' eth0 sent during the run
#   bytes_short, frames_short, cpu_kern_short, cpu_user_short
#                  the same of a short run beside it (5 messages, the
#                  sizes of BENCH_CPU_SIZES only): what a run costs besides
#                  its transfer (the programs' start, connection and
#                  memory registration, their exit), which the report
#                  takes off the long run's figures
#   timeouts       sroce's retransmit_timeouts counter on VM a (the
#                  requester) over a bandwidth run: a run with many is one
#                  that went back again and again, whatever else it says
# A run that fails prints VALUE "failed". Runs are sized by iteration
# counts (bytes for iperf3); qperf's latency test only knows durations.
#
# The environment selects a subset (tests/bench.sh passes it on):
#   BENCH_MTUS      netdev MTUs (default "1500 4200": RoCE path MTU 1024
#                   and 4096)
#   BENCH_SIZES     message sizes in bytes
#   BENCH_QPS       QP counts of the ib_write_bw scaling run
#   BENCH_STACKS    any of sroce sroce1 rxe tcp
#   BENCH_FLOORS    any of icmp udp link: the link's latency, packet-rate
#                   and frame-rate floors, measured at each MTU before the
#                   stacks (default icmp udp: see link_floor)
#   BENCH_BW_TESTS, BENCH_LAT_TESTS  perftest programs; ib_send_bw_event
#                   and ib_read_bw_event are ib_send_bw -e and ib_read_bw
#                   -e: the side that receives the payload sleeps on
#                   completion events instead of polling the CQ, as TCP's
#                   receiver sleeps in read() (a poller takes half of a
#                   one-vCPU guest from the softirq that receives)
#   BENCH_CPU_SIZES  message sizes whose bandwidth runs get a short run
#                   beside them (default "65536 1048576", those of the
#                   targets)
# Each of those takes its default when unset and selects nothing when empty.
#   BENCH_RUN_TIMEOUT  seconds a client may run (default 60; the longest
#                   run takes under ten): a run that hangs is killed and
#                   reported failed instead of stalling the rest
#   BENCH_GIVE_UP   runs of one stack in a row whose server failed after
#                   which its other runs at that MTU are skipped (default 3)
#   BENCH_ROUNDS    times the floors and the stacks run at each MTU, in
#                   turn (default 1): each figure is then printed once per
#                   round, the stacks' runs alternating
#   BENCH_CUT_LINK  for a test of link_repair: the number of a run (of
#                   pair()) before which VM a drops everything it sends,
#                   as a link that QEMU stopped carrying would (empty: none)

: "${BENCH_MTUS=1500 4200}"
: "${BENCH_SIZES=64 1024 4096 65536 1048576}"
: "${BENCH_QPS=1 10 100 1000}"
: "${BENCH_STACKS=sroce rxe tcp}"
: "${BENCH_FLOORS=icmp udp}"
: "${BENCH_BW_TESTS=ib_write_bw ib_send_bw ib_send_bw_event ib_read_bw ib_read_bw_event}"
: "${BENCH_LAT_TESTS=ib_write_lat ib_send_lat}"
: "${BENCH_CPU_SIZES=65536 1048576}"
: "${BENCH_RUN_TIMEOUT:=60}"
: "${BENCH_ROUNDS:=1}"
: "${BENCH_GIVE_UP:=3}"
: "${BENCH_CUT_LINK:=}"
BENCH_STEP=0
# The scaling run's message size and payload, shared by its QPs.
BENCH_QPS_SIZE=4096
BENCH_QPS_BYTES=$((32 << 20))
BENCH_TCP_LAT_SECS=2
BENCH_PING_COUNT=1000
# The link floor's frames: a burst as long as sroce's (tx_burst), sent to
# an address in the test range that no guest has.
BENCH_PKTGEN_BURST=64
BENCH_PKTGEN_DST=198.18.0.250
# iputils ping when installed, busybox's otherwise (both have -A, and
# print every reply's round trip in ms).
if command -v ping >/dev/null; then
	BENCH_PING=(ping)
else
	BENCH_PING=(busybox ping)
fi

# clamp VALUE MIN MAX
clamp() {
	local v=$1
	[ "$v" -lt "$2" ] && v=$2
	[ "$v" -gt "$3" ] && v=$3
	echo "$v"
}

# Bandwidth runs move about 32 MiB, at most 10000 messages: a few seconds
# each on the TCG link; at the sizes whose CPU time is measured
# (cpu_size), as much as TCP's run of that size (tcp_bytes, 256 MiB):
# a transfer of 32 MiB lasts a fifth of a second at MTU 4200, less than
# what starting and ending a run costs, and the CPU time of so short a
# transfer is lost in that of the run around it. Latency runs are round
# trips, one at a time.
bw_iters() {
	if cpu_size "$1"; then
		clamp $(($(tcp_bytes "$1") / $1)) 32 10000
	else
		clamp $(((32 << 20) / $1)) 32 10000
	fi
}
lat_iters() { clamp $(((8 << 20) / $1)) 20 1000; }
# iperf3 writes of 64 bytes are slow: fewer bytes for small writes.
tcp_bytes() { clamp $(($1 << 16)) $((4 << 20)) $((256 << 20)); }

emit() {
	printf 'BENCH\t%s\t%s\t%s\t%s\t%s\t%s\n' "$BENCH_MTU" "$@"
}

listening() { ss -ltn | grep -q ":$1 "; }

# cpu_jiffies: "KERNEL USER FRAMES": jiffies of all CPUs since boot, and
# the frames eth0 has sent.
cpu_jiffies() {
	local tx
	tx=$(cat /sys/class/net/eth0/statistics/tx_packets 2>/dev/null)
	awk -v tx="${tx:-0}" '$1 == "cpu" { print $4 + $7 + $8, $2 + $3, tx; exit }' /proc/stat
}

# cpu_delta "K0 U0 F0" "K1 U1 F1": what cpu_jiffies counted between two
# readings.
cpu_delta() {
	local a b
	read -ra a <<<"$1"
	read -ra b <<<"$2"
	echo "$((b[0] - a[0])) $((b[1] - a[1])) $((b[2] - a[2]))"
}

_pair_n=0
_pair_step=
_pair_fails=0
# cpu_percpu: "KERNEL USER NET_RX" of each CPU of this VM since boot, the
# CPUs one after the other on one line: jiffies as cpu_jiffies's, and the
# NET_RX softirqs the CPU ran (/proc/softirqs).
cpu_percpu() {
	awk 'FNR == NR { if ($1 ~ /^cpu[0-9]+$/) c[n++] = ($4 + $7 + $8) " " ($2 + $3); next }
		$1 == "NET_RX:" { for (i = 0; i < n; i++) printf "%s %s ", c[i], $(i + 2) }
		END { print "" }' /proc/stat /proc/softirqs
}

# vec_delta "A..." "B...": B - A, element by element.
vec_delta() {
	local a b i d=()
	read -ra a <<<"$1"
	read -ra b <<<"$2"
	for i in "${!b[@]}"; do
		d+=($((b[i] - ${a[i]:-0})))
	done
	echo "${d[*]}"
}

# host_mark TAG: HOST_NOW is the host's "BUSY IDLE QEMU_A QEMU_B" at this
# moment (tests/bench/hostcpu.py answers: ticks of the host's CPUs, ns of
# each guest's QEMU), or empty when the host does not answer; then no
# later run asks (a run of this script with no one on the host side).
BENCH_HOST=1
host_mark() {
	HOST_NOW=
	[ "$BENCH_HOST" = 1 ] || return 0
	put "hostcpu.$1" 1
	HOST_NOW=$(get "hostcpu.$1.at" 3) && return 0
	BENCH_HOST=0
	HOST_NOW=
	echo "# the host did not answer: no host CPU figures from here on" >&2
}

# host_delta "BUSY0 IDLE0 QA0 QB0" "BUSY1 IDLE1 QA1 QB1": "BUSY IDLE QEMU_NS"
# between two host_mark readings, both QEMUs' time added up, or nothing
# when either reading is missing.
host_delta() {
	local a b
	read -ra a <<<"$1"
	read -ra b <<<"$2"
	[ ${#a[@]} = 4 ] && [ ${#b[@]} = 4 ] || return 0
	[[ "${a[*]} ${b[*]}" =~ ^[0-9\ ]+$ ]] || return 0
	echo "$((b[0] - a[0])) $((b[1] - a[1])) $((b[2] + b[3] - a[2] - a[3]))"
}

# pair PORTS SERVER_CMD... -- CLIENT_CMD...: VM b starts the server and
# waits until it listens on each TCP port of PORTS, then VM a runs the
# client. On VM a, PAIR_OUT holds the client's output and PAIR_CPU the
# "KERNEL USER" jiffies both VMs spent while it ran and the frames both
# sent (each frame on the link once, whichever way), PAIR_HOST the host's
# (host_delta; empty when the host did not answer); with BENCH_PERCPU=1,
# PAIR_PERCPU_A and PAIR_PERCPU_B hold each VM's cpu_percpu over the run.
# Returns non-zero when either side failed, or when the run was skipped:
# after BENCH_GIVE_UP runs in a row of one stack (one BENCH_STEP) whose
# server failed, the rest of that stack's runs are not started. A stack,
# or a link, that has wedged (at MTU 4200 every run once failed from some
# point on) would otherwise cost every later run its timeout, and the
# benchmark its time limit. Both VMs count the server's failures, so both skip the same runs.
pair() {
	local port=$1 srv=() cli=() pid rc srv_rc out c0 c1 peer p p0 link h0
	shift
	while [ "$1" != -- ]; do
		srv+=("$1")
		shift
	done
	shift
	cli=("$@")
	if [ "$_pair_step" != "$BENCH_STEP" ]; then
		_pair_step=$BENCH_STEP
		_pair_fails=0
	fi
	if [ "$_pair_fails" -ge "$BENCH_GIVE_UP" ]; then
		[ "$ROLE" = a ] &&
			echo "# skipped: ${cli[*]} (the last $_pair_fails servers of this stack failed)"
		return 1
	fi
	_pair_n=$((_pair_n + 1))
	PAIR_OUT=
	PAIR_CPU=
	PAIR_HOST=
	if [ "$ROLE" = b ]; then
		out=$(mktemp)
		# The server outlives a client that timed out by a little.
		timeout $((BENCH_RUN_TIMEOUT + 30)) "${srv[@]}" >"$out" 2>&1 &
		pid=$!
		for p in $port; do
			wait_until 60 listening "$p"
		done
		barrier "pair$_pair_n" 300
		c0=$(cpu_jiffies)
		[ -n "${BENCH_PERCPU:-}" ] && p0=$(cpu_percpu)
		wait "$pid"
		rc=$?
		c1=$(cpu_jiffies)
		[ -n "${BENCH_PERCPU:-}" ] &&
			put "pair$_pair_n.percpu" "$(vec_delta "$p0" "$(cpu_percpu)")"
		put "pair$_pair_n.cpu" "$(cpu_delta "$c0" "$c1")"
		put "pair$_pair_n.rc" "$rc"
		pair_count "$rc"
		[ $rc = 0 ] || { echo "server failed ($rc): ${srv[*]}"; cat "$out"; nic_report; } >&2
		rm -f "$out"
		# VM a says whether the link outlived the run.
		link=$(get "pair$_pair_n.link" $((BENCH_RUN_TIMEOUT + 120))) || link=ok
		[ "$link" = ok ] || link_repair
		return 0
	fi
	barrier "pair$_pair_n" 300 || return 1
	[ "$BENCH_CUT_LINK" = "$_pair_n" ] &&
		tc qdisc replace dev eth0 root netem loss 100% >&2
	host_mark "pair$_pair_n.0"
	h0=$HOST_NOW
	c0=$(cpu_jiffies)
	[ -n "${BENCH_PERCPU:-}" ] && p0=$(cpu_percpu)
	PAIR_OUT=$(timeout "$BENCH_RUN_TIMEOUT" "${cli[@]}" 2>&1)
	rc=$?
	c1=$(cpu_jiffies)
	host_mark "pair$_pair_n.1"
	PAIR_HOST=$(host_delta "$h0" "$HOST_NOW")
	# shellcheck disable=SC2034 # read by scaling.sh
	[ -n "${BENCH_PERCPU:-}" ] && PAIR_PERCPU_A=$(vec_delta "$p0" "$(cpu_percpu)")
	srv_rc=$(get "pair$_pair_n.rc" $((BENCH_RUN_TIMEOUT + 60))) || srv_rc=none
	pair_count "$srv_rc"
	peer=$(get "pair$_pair_n.cpu" 10) || peer="0 0 0"
	if [ -n "${BENCH_PERCPU:-}" ]; then
		# shellcheck disable=SC2034 # read by scaling.sh
		PAIR_PERCPU_B=$(get "pair$_pair_n.percpu" 10) || PAIR_PERCPU_B=
	fi
	local mine theirs
	read -ra mine <<<"$(cpu_delta "$c0" "$c1")"
	read -ra theirs <<<"$peer"
	PAIR_CPU="$((mine[0] + theirs[0])) $((mine[1] + theirs[1])) $((mine[2] + ${theirs[2]:-0}))"
	echo "${cli[*]}" >&2
	echo "$PAIR_OUT" >&2
	if [ $rc != 0 ] || [ "$srv_rc" != 0 ]; then
		echo "# failed: ${cli[*]} (client $rc, server $srv_rc)"
		echo "$PAIR_OUT" | tail -n 5 | sed 's/^/#   /'
		nic_report >&2
		if peer_answers 3; then
			put "pair$_pair_n.link" ok
		else
			put "pair$_pair_n.link" lost
			link_repair
		fi
		return 1
	fi
	put "pair$_pair_n.link" ok
}

# nic_report: after a failed run, what the NIC and its queue hold, once
# per stack (BENCH_STEP): a link that stopped carrying frames shows there
# (a stopped transmit queue, a qdisc backlog, an unanswered neighbour).
nic_report() {
	[ "${_nic_report_step:-}" != "$BENCH_STEP" ] || return 0
	_nic_report_step=$BENCH_STEP
	echo "# link state of VM $ROLE after a failed run:"
	{
		ip -s link show dev eth0
		ethtool -S eth0 | grep -v ': 0$'
		tc -s qdisc show dev eth0
		ip neigh show dev eth0
		grep -E 'virtio|CPU' /proc/interrupts
		cat /proc/net/softnet_stat
		dmesg | grep -iE 'eth0|virtio|watchdog|timed out' | tail -n 5
	} 2>&1 | sed 's/^/#   /'
	# The host answers with both QEMUs' view of the NICs (nicstate.txt).
	put "nicstate.$BENCH_STEP.$ROLE" "$(date -u +%T)" 2>/dev/null
}

# link_repair: after a failed run that left VM b unreachable, both VMs
# (each calls it for the same run) reset their NIC and bring eth0 back at
# BENCH_MTU, with the RDMA device of the stack that was running, so that
# the runs after it go on. QEMU's side of the link can stop carrying
# frames for good under load (Documentation/performance.rst, "The link
# between the guests"); resetting the virtio device makes QEMU drop what
# it held (nic_reset).
link_repair() {
	local n=$_pair_n back=no dev=${BENCH_ATTACHED[2]:-}
	if [ -n "$dev" ]; then
		rdma link delete "$dev" 2>/dev/null
		wait_until 10 ibdev_gone "$dev"
	fi
	barrier "repair$n" 120
	nic_reset >&2 && ip link set eth0 mtu "$BENCH_MTU"
	barrier "repaired$n" 120
	wait_until 30 mtu_reached >/dev/null 2>&1 && back=yes
	if [ -n "$dev" ] && ! link_attach "${BENCH_ATTACHED[1]}" "$dev"; then
		echo "# cannot attach $dev again on VM $ROLE after the NIC reset"
	fi
	# The failures before were the link's.
	[ $back = yes ] && _pair_fails=0
	[ "$ROLE" = a ] &&
		echo "# link lost: VM b did not answer VM a after the run above; both NICs reset, link back: $back"
	# A test of the repair cuts the link once (see BENCH_CUT_LINK).
	BENCH_CUT_LINK=
}

# pair_count RC: count a server's exit status towards BENCH_GIVE_UP.
pair_count() {
	if [ "$1" = 0 ]; then
		_pair_fails=0
	else
		_pair_fails=$((_pair_fails + 1))
	fi
}

# emit_cpu STACK TEST X BYTES [SUFFIX]: the payload, CPU time and frames
# of the last pair, each name with SUFFIX ("_short" for a short run), and
# the host's: its CPUs' busy and idle ticks, both QEMUs' seconds.
emit_cpu() {
	local hz cpu host m=${5:-}
	hz=$(getconf CLK_TCK)
	read -ra cpu <<<"$PAIR_CPU"
	emit "$1" "$2" "$3" "bytes$m" "$4"
	emit "$1" "$2" "$3" "frames$m" "${cpu[2]}"
	emit "$1" "$2" "$3" "cpu_kern$m" "$(awk -v j="${cpu[0]}" -v hz="$hz" 'BEGIN { printf "%.2f", j / hz }')"
	emit "$1" "$2" "$3" "cpu_user$m" "$(awk -v j="${cpu[1]}" -v hz="$hz" 'BEGIN { printf "%.2f", j / hz }')"
	[ -n "$PAIR_HOST" ] || return 0
	read -ra host <<<"$PAIR_HOST"
	emit "$1" "$2" "$3" "host_busy$m" "${host[0]}"
	emit "$1" "$2" "$3" "host_idle$m" "${host[1]}"
	emit "$1" "$2" "$3" "host_qemu$m" "$(awk -v ns="${host[2]}" 'BEGIN { printf "%.3f", ns / 1e9 }')"
}

# cpu_size SIZE: whether runs of SIZE get a short run beside them.
cpu_size() {
	[[ " $BENCH_CPU_SIZES " == *" $1 "* ]]
}

# The RDMA stack attached now (MODULE TYPE DEV), for link_repair.
BENCH_ATTACHED=()

# BENCH_SHORT_MSGS: the messages of a short run.
BENCH_SHORT_MSGS=5

# attach MODULE TYPE DEV [PARAM=VALUE...]: sets BENCH_GID to the IPv4
# RoCE v2 GID index.
attach() {
	modprobe "$1" "${@:4}" || return 1
	BENCH_ATTACHED=("$1" "$2" "$3")
	link_attach "$2" "$3"
}

# link_attach TYPE DEV: an RDMA device DEV of TYPE on eth0, its port active
# and its IPv4 RoCE v2 GID index in BENCH_GID.
link_attach() {
	rdma link add "$2" type "$1" netdev eth0 || return 1
	wait_until 30 port_is "$2" PORT_ACTIVE || return 1
	wait_until 30 gid_index "$2" "$(gid_v4 "$MY_IP4")" || return 1
	BENCH_GID=$(gid_index "$2" "$(gid_v4 "$MY_IP4")")
}

detach() {
	BENCH_ATTACHED=()
	rdma link delete "$2"
	wait_until 10 ibdev_gone "$2"
	rmmod "$1"
}

port=18700

# timeouts DEV: the retransmit_timeouts counter of an sroce device, nothing
# for another driver.
timeouts() {
	rdma statistic show link "$1/1" 2>/dev/null |
		awk '{ for (i = 1; i < NF; i++) if ($i == "retransmit_timeouts") print $(i + 1) }'
}

# counters DEV: an sroce device's counters, one "NAME VALUE" a line.
counters() {
	rdma statistic show link "$1/1" 2>/dev/null |
		awk '{ for (i = 3; i < NF; i += 2) print $i, $(i + 1) }'
}

# counters_moved BEFORE AFTER: the counters that changed, "NAME +DELTA"
# on one line, for the guest's output (cmd.out): what each run cost in
# packets, ACKs, retransmissions and drops.
counters_moved() {
	awk 'NR == FNR { v[$1] = $2; next }
	     $2 != v[$1] { printf "%s%s +%d", sep, $1, $2 - v[$1]; sep = " " }
	     END { print "" }' <(echo "$1") <(echo "$2")
}

# perftest_bw STACK DEV TEST SIZE QPS: one bandwidth run; X is the size,
# or the QP count when QPS is above one or TEST is ib_write_bw_qps.
perftest_bw() {
	local stack=$1 dev=$2 t=$3 size=$4 qps=$5 name=$3 x=$4 n val rto0 rto1 c0 rc
	local ev=()
	# perftest sleeps on completion events where completions of
	# received payload come: SEND's receiver, READ's requester.
	case $t in
	ib_send_bw_event | ib_read_bw_event) t=${t%_event} ev=(-e) ;;
	esac
	if [ "$qps" -gt 0 ]; then
		name=${t}_qps x=$qps
		n=$(clamp $((BENCH_QPS_BYTES / size / qps)) 10 10000)
	else
		qps=1
		n=$(bw_iters "$size")
	fi
	# Whole rounds of perftest's completion moderation (100): with
	# several QPs and a partial last round ib_write_bw -q 10 -n 819 hung
	# on either stack.
	[ "$n" -gt 100 ] && n=$((n - n % 100))
	port=$((port + 1))
	[ "$ROLE" = a ] && rto0=$(timeouts "$dev")
	c0=$(counters "$dev")
	pair $port "$t" -d "$dev" -x "$BENCH_GID" -p $port -s "$size" -n "$n" -q "$qps" "${ev[@]}" -- \
		"$t" -d "$dev" -x "$BENCH_GID" -p $port -s "$size" -n "$n" -q "$qps" "${ev[@]}" "$NET4_B"
	rc=$?
	[ -n "$c0" ] &&
		echo "# counters of VM $ROLE over $name $x: $(counters_moved "$c0" "$(counters "$dev")")" >&2
	if [ "$ROLE" = a ] && [ $rc = 0 ]; then
		# #bytes #iterations BW_peak BW_average MsgRate
		val=$(awk -v s="$size" '$1 == s && NF >= 5 { v = $4 } END { print v }' <<<"$PAIR_OUT")
		emit "$stack" "$name" "$x" MiBps "${val:-failed}"
		[ -n "$val" ] && emit_cpu "$stack" "$name" "$x" $((size * n * qps))
		rto1=$(timeouts "$dev")
		[ -n "$rto0" ] && [ -n "$rto1" ] &&
			emit "$stack" "$name" "$x" timeouts $((rto1 - rto0))
	elif [ "$ROLE" = a ]; then
		emit "$stack" "$name" "$x" MiBps failed
	fi
	# Both VMs, whatever the outcome: each pair is one on either side.
	[ "$qps" = 1 ] && [ "$name" = "$3" ] && cpu_size "$size" &&
		perftest_short "$stack" "$dev" "$t" "$size" "$name" "${ev[@]}"
	return 0
}

# perftest_short STACK DEV TEST SIZE NAME [-e]: the short run beside a
# bandwidth run of SIZE, reported under NAME.
perftest_short() {
	local stack=$1 dev=$2 t=$3 size=$4 name=$5 n=$BENCH_SHORT_MSGS
	shift 5
	port=$((port + 1))
	pair $port "$t" -d "$dev" -x "$BENCH_GID" -p $port -s "$size" -n "$n" "$@" -- \
		"$t" -d "$dev" -x "$BENCH_GID" -p $port -s "$size" -n "$n" "$@" "$NET4_B" &&
		[ "$ROLE" = a ] && emit_cpu "$stack" "$name" "$size" $((size * n)) _short
	return 0
}

# rdma_stack STACK MODULE TYPE DEV [PARAM=VALUE...]: the module loaded
# with those parameters.
rdma_stack() {
	local stack=$1 dev=$4 t size line q m
	local metrics=(t_typical t_avg t_p99 t_p999)
	barrier "attach-$stack-$BENCH_MTU-$BENCH_STEP" 300
	if ! attach "$2" "$3" "$dev" "${@:5}"; then
		echo "# $stack: cannot attach $dev" >&2
		[ "$ROLE" = a ] && echo "# $stack: cannot attach $dev on VM a"
	fi
	if [ "$ROLE" = a ]; then
		emit "$stack" port 0 active_mtu "$(ibv_attr "$dev" active_mtu)"
		# Which batching the run had: an older sroce lacks the parameters.
		if [ "$2" = sroce ]; then
			for m in tx_burst ack_coalesce ack_hold_us; do
				emit "$stack" param 0 "$m" \
					"$(cat "/sys/module/sroce/parameters/$m" 2>/dev/null || echo absent)"
			done
		fi
	fi
	for t in $BENCH_BW_TESTS; do
		for size in $BENCH_SIZES; do
			perftest_bw "$stack" "$dev" "$t" "$size" 0
		done
	done
	for q in $BENCH_QPS; do
		perftest_bw "$stack" "$dev" ib_write_bw "$BENCH_QPS_SIZE" "$q"
	done
	for t in $BENCH_LAT_TESTS; do
		for size in $BENCH_SIZES; do
			port=$((port + 1))
			if pair $port "$t" -d "$dev" -x "$BENCH_GID" -p $port -s "$size" -n "$(lat_iters "$size")" -- \
				"$t" -d "$dev" -x "$BENCH_GID" -p $port -s "$size" -n "$(lat_iters "$size")" "$NET4_B"; then
				[ "$ROLE" = a ] || continue
				# #bytes #iterations t_min t_max t_typical t_avg t_stdev 99% 99.9%
				read -ra line < <(awk -v s="$size" '$1 == s && NF >= 9 { l = $5 " " $6 " " $8 " " $9 } END { print l }' <<<"$PAIR_OUT")
				for m in 0 1 2 3; do
					emit "$stack" "$t" "$size" "${metrics[m]}" "${line[m]:-failed}"
				done
			elif [ "$ROLE" = a ]; then
				for m in "${metrics[@]}"; do
					emit "$stack" "$t" "$size" "$m" failed
				done
			fi
		done
	done
	barrier "detach-$stack-$BENCH_MTU-$BENCH_STEP" 300
	[ "$ROLE" = a ] && rdma statistic show link "$dev/1" >&2
	detach "$2" "$dev"
}

# qperf_usec TEXT: qperf's "latency = N unit" in microseconds.
qperf_usec() {
	awk '$1 == "latency" { v = $3; u = $4
		if (u == "ns") v /= 1000; else if (u == "ms") v *= 1000; else if (u == "sec") v *= 1000000
		printf "%.2f\n", v }' <<<"$1"
}

tcp_stack() {
	local size val bytes
	for size in $BENCH_SIZES; do
		bytes=$(tcp_bytes "$size")
		if ! pair 5201 iperf3 -s -1 -p 5201 -- \
			iperf3 -c "$NET4_B" -p 5201 -n "$bytes" -l "$size" -J; then
			[ "$ROLE" = a ] && emit tcp iperf3 "$size" MiBps failed
		elif [ "$ROLE" = a ]; then
			val=$(/usr/bin/python3 -c 'import json, sys
print("%.2f" % (json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"] / 8 / 1048576))' <<<"$PAIR_OUT")
			emit tcp iperf3 "$size" MiBps "${val:-failed}"
			[ -n "$val" ] && emit_cpu tcp iperf3 "$size" "$bytes"
		fi
		# Both VMs: each pair is one on either side.
		cpu_size "$size" || continue
		bytes=$((size * BENCH_SHORT_MSGS))
		pair 5201 iperf3 -s -1 -p 5201 -- \
			iperf3 -c "$NET4_B" -p 5201 -n "$bytes" -l "$size" -J &&
			[ "$ROLE" = a ] && emit_cpu tcp iperf3 "$size" "$bytes" _short
	done
	# qperf's server serves any number of clients: VM b stops it at the end.
	if [ "$ROLE" = b ]; then
		qperf >/dev/null 2>&1 &
		local qpid=$!
		wait_until 60 listening 19765
		barrier "qperf-up-$BENCH_MTU-$BENCH_STEP" 300
		barrier "qperf-done-$BENCH_MTU-$BENCH_STEP" 600
		kill "$qpid"
		wait "$qpid" 2>/dev/null
		return 0
	fi
	barrier "qperf-up-$BENCH_MTU-$BENCH_STEP" 300
	for size in $BENCH_SIZES; do
		PAIR_OUT=$(timeout 120 qperf "$NET4_B" -t $BENCH_TCP_LAT_SECS -m "$size" tcp_lat 2>&1)
		echo "$PAIR_OUT" >&2
		val=$(qperf_usec "$PAIR_OUT")
		emit tcp qperf_tcp_lat "$size" lat "${val:-failed}"
	done
	barrier "qperf-done-$BENCH_MTU-$BENCH_STEP" 600
}

# roce_payload MTU: the RoCE active MTU at that netdev MTU, the payload of
# one full packet: the largest IB MTU leaving 92 bytes for the headers
# (sroce's rule, IPv6 and the largest extension headers; rdma_rxe's
# choice is the same at 1500 and 4200).
roce_payload() {
	local m
	for m in 4096 2048 1024 512; do
		[ $(($1 - 92)) -ge $m ] && { echo $m; return; }
	done
	echo 256
}

# median_etc: of numbers one per line, "MEDIAN MEAN P99 P999 COUNT".
median_etc() {
	sort -g | awk '{ v[NR] = $1; s += $1 }
		END { if (!NR) exit 1
			m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			p = int(NR * 0.99 + 0.999); q = int(NR * 0.999 + 0.999)
			print m, s / NR, v[p], v[q], NR }'
}

# icmp_floor: the latency floor, VM a pinging VM b back to back (the next
# echo as soon as the reply is in), with the smallest message size as
# payload when it fits in one packet. Half the round trips, in usec, as
# t_typical (the median), t_avg, t_p99 and t_p999, like perftest's.
icmp_floor() {
	local size sizes out st m metrics=(t_typical t_avg t_p99 t_p999 count)
	[ "$ROLE" = a ] || return 0
	read -ra sizes <<<"$BENCH_SIZES"
	size=$(printf '%s\n' "${sizes[@]}" | sort -n | head -n1)
	size=$(clamp "${size:-8}" 8 $((BENCH_MTU - 28)))
	out=$(timeout "$BENCH_RUN_TIMEOUT" "${BENCH_PING[@]}" -A -c "$BENCH_PING_COUNT" \
		-s "$size" "$PEER_IP4" 2>&1)
	echo "${BENCH_PING[*]} -A -c $BENCH_PING_COUNT -s $size $PEER_IP4" >&2
	tail -n 4 <<<"$out" >&2
	read -ra st < <(sed -n 's/.* time=\([0-9.]*\) ms.*/\1/p' <<<"$out" | median_etc)
	if [ ${#st[@]} != 5 ]; then
		echo "# failed: ${BENCH_PING[*]} -A -c $BENCH_PING_COUNT -s $size $PEER_IP4"
		tail -n 3 <<<"$out" | sed 's/^/#   /'
		emit floor icmp_echo "$size" t_typical failed
		return 0
	fi
	for m in 0 1 2 3; do
		emit floor icmp_echo "$size" "${metrics[m]}" \
			"$(awk -v ms="${st[m]}" 'BEGIN { printf "%.2f", ms * 500 }')"
	done
	emit floor icmp_echo "$size" count "${st[4]}"
}

# udp_floor: the packet-rate floor, one iperf3 UDP stream as fast as it
# goes (-b 0), one datagram per packet of the RoCE payload at this MTU,
# sized like the TCP run of that message size. What VM b received counts.
udp_floor() {
	local len bytes val
	len=$(roce_payload "$BENCH_MTU")
	bytes=$(tcp_bytes "$len")
	if pair 5202 iperf3 -s -1 -p 5202 -- \
		iperf3 -c "$NET4_B" -p 5202 -u -b 0 -l "$len" -n "$bytes" -J; then
		[ "$ROLE" = a ] || return 0
		read -ra val < <(/usr/bin/python3 -c 'import json, sys
e = json.load(sys.stdin)["end"]
r, s = e["sum_received"], e["sum_sent"]
print("%.2f %.2f %.2f %d" % (r["bits_per_second"] / 8 / 1048576,
      s["bits_per_second"] / 8 / 1048576, r["lost_percent"], r["bytes"]))' <<<"$PAIR_OUT")
		if [ ${#val[@]} = 4 ]; then
			emit udp iperf3_udp "$len" MiBps "${val[0]}"
			emit udp iperf3_udp "$len" sent_MiBps "${val[1]}"
			emit udp iperf3_udp "$len" lost_pct "${val[2]}"
			emit_cpu udp iperf3_udp "$len" "${val[3]}"
		else
			emit udp iperf3_udp "$len" MiBps failed
		fi
	elif [ "$ROLE" = a ]; then
		emit udp iperf3_udp "$len" MiBps failed
	fi
}

# link_floor: the frame-rate floor of the link itself. VM a's kernel
# packet generator (pktgen) hands eth0 full-size UDP frames in bursts of
# BENCH_PKTGEN_BURST (xmit_more), below any socket or RDMA stack; they go
# to VM b's MAC address but to an IP address no guest has, so that VM b's
# stack drops each at once, answering none. What VM b's driver counted,
# over the time pktgen took to send them all, is the most frames a second
# this link delivers; times the RoCE payload of one packet, the most any
# RoCE stack could move (MiBps). Not in the default floors: in two of
# the three runs that had it at MTU 4200, the link stopped carrying the
# stacks' frames some minutes later (every run of every stack after that
# point failed); the third, and a run without it, passed. Those runs were
# on QEMU's stream netdev, which stalls under load without pktgen too
# (performance.rst, "The link between the guests"); on the dgram link both
# full runs with the floor lost the link in the same way.
link_floor() {
	local len frames pg=/proc/net/pktgen rx0 rx1 got usec mac res step
	len=$(roce_payload "$BENCH_MTU")
	frames=$(((64 << 20) / len))
	step=pktgen-$BENCH_STEP
	if [ "$ROLE" = b ]; then
		read -r rx0 </sys/class/net/eth0/statistics/rx_packets
		barrier "$step-go" 300 || return 0
		barrier "$step-sent" $((BENCH_RUN_TIMEOUT + 60)) || return 0
		# What was still on its way when pktgen returned.
		sleep 1
		read -r rx1 </sys/class/net/eth0/statistics/rx_packets
		put "$step.rx" "$((rx1 - rx0))"
		return 0
	fi
	mac=$(ip neigh show "$PEER_IP4" dev eth0 | awk '{ for (i = 1; i < NF; i++) if ($i == "lladdr") print $(i + 1) }')
	if [ -z "$mac" ] || ! modprobe pktgen ||
	   ! pktgen_set "$pg/kpktgend_0" rem_device_all "add_device eth0" ||
	   ! pktgen_set "$pg/eth0" "count $frames" "pkt_size $((BENCH_MTU + 14))" 		"dst $BENCH_PKTGEN_DST" "dst_mac $mac" "udp_dst_min 9" 		"udp_dst_max 9" "clone_skb 1000" "burst $BENCH_PKTGEN_BURST" 		"delay 0"; then
		echo "# failed: pktgen on eth0 (VM b's MAC ${mac:-unknown})"
		barrier "$step-go" 300
		barrier "$step-sent" 60
		emit link pktgen "$len" MiBps failed
		return 0
	fi
	barrier "$step-go" 300
	timeout "$BENCH_RUN_TIMEOUT" sh -c "echo start >$pg/pgctrl"
	res=$(sed -n 's/^Result: //p' "$pg/eth0")
	echo "pktgen: $frames frames of $((BENCH_MTU + 14)) bytes, burst $BENCH_PKTGEN_BURST: $res" >&2
	echo "stop" >"$pg/pgctrl"
	pktgen_set "$pg/kpktgend_0" rem_device_all
	rmmod pktgen 2>/dev/null
	barrier "$step-sent" 60
	got=$(get "$step.rx" 60)
	usec=$(sed -n 's/^OK: \([0-9]*\)(.*/\1/p' <<<"$res")
	if [ -z "$usec" ] || [ "$usec" = 0 ] || [ -z "$got" ]; then
		emit link pktgen "$len" MiBps failed
		return 0
	fi
	emit link pktgen "$len" frames "$got"
	emit link pktgen "$len" sent_frames "$frames"
	emit link pktgen "$len" frames_per_s \
		"$(awk -v n="$got" -v us="$usec" 'BEGIN { printf "%.0f", n / us * 1e6 }')"
	emit link pktgen "$len" MiBps \
		"$(awk -v n="$got" -v us="$usec" -v l="$len" 'BEGIN { printf "%.2f", n * l / us * 1e6 / 1048576 }')"
}

# pktgen_set FILE COMMAND...: write each command to a pktgen control file;
# fails on the first it refuses.
pktgen_set() {
	local f=$1 c
	shift
	for c in "$@"; do
		if ! echo "$c" >"$f" 2>/dev/null; then
			echo "# pktgen refused \"$c\" in $f: $(sed -n 's/^Result: //p' "$f" 2>/dev/null)"
			return 1
		fi
	done
}

# mtu_reached: VM b answers a ping that fills a packet at BENCH_MTU; with
# DF set when iputils ping is there (busybox's cannot set it).
mtu_reached() {
	if [ "${BENCH_PING[0]}" = ping ]; then
		ping -c 1 -W 1 -M "do" -s $((BENCH_MTU - 28)) "$PEER_IP4"
	else
		busybox ping -c 1 -W 1 -s $((BENCH_MTU - 28)) "$PEER_IP4"
	fi
}

# set_mtu: both eth0s at BENCH_MTU, and a packet that fills one goes
# through; fails when this VM cannot set it.
set_mtu() {
	barrier "mtu-$BENCH_MTU" 300
	if ! ip link set eth0 mtu "$BENCH_MTU"; then
		echo "# cannot set MTU $BENCH_MTU on VM $ROLE"
		return 1
	fi
	# Both ends at the new MTU before anything is sent at it.
	barrier "mtu-set-$BENCH_MTU" 300
	wait_until 30 mtu_reached
}

bench_main() {
	local round floor stack
	for BENCH_MTU in $BENCH_MTUS; do
		set_mtu || continue
		for round in $(seq "$BENCH_ROUNDS"); do
			[ "$ROLE" = a ] && [ "$BENCH_ROUNDS" -gt 1 ] &&
				echo "# MTU $BENCH_MTU, round $round of $BENCH_ROUNDS" >&2
			for floor in $BENCH_FLOORS; do
				BENCH_STEP=$((BENCH_STEP + 1))
				case $floor in
				icmp) icmp_floor ;;
				udp) udp_floor ;;
				link) link_floor ;;
				esac
			done
			for stack in $BENCH_STACKS; do
				# Names the barriers of this stack's run: a stack may
				# run several times at one MTU.
				BENCH_STEP=$((BENCH_STEP + 1))
				case $stack in
				sroce) rdma_stack sroce sroce sroce sroce0 ;;
				sroce1) rdma_stack sroce1 sroce sroce sroce0 tx_burst=1 ack_coalesce=0 ack_hold_us=0 ;;
				rxe) rdma_stack rxe rdma_rxe rxe rxe0 ;;
				tcp) tcp_stack ;;
				esac
			done
		done
	done
}

# shellcheck source=scaling.sh
. "$(dirname "${BASH_SOURCE[0]}")/scaling.sh"

if [ "${BENCH_SCALING:-0}" -gt 0 ]; then
	scale_main
else
	bench_main
fi
ip link set eth0 mtu 1500
barrier bench-done 300
true
