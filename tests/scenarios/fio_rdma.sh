#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# fio's rdma engine between two guests: VM b runs the server job (rw=read:
# it registers its buffers, hands their addresses and keys to the client
# through the RDMA CM connection and waits for the client's end message),
# VM a the client job (rw=write), which moves every block with RDMA WRITE
# (verb=write) or RDMA READ (verb=read) to or from those buffers.
#
# fio cannot verify through this engine: its verify phase reopens the
# "file", which means a new connection to a server that has already gone,
# and it never looks at the server's memory. So each side keeps its I/O
# buffers in a file of its own (mem=mmapshared:FILE, a shared mapping of
# a tmpfs file, which a hard link keeps after fio removes it) and the
# scenario looks at them afterwards. Which client unit ends up paired
# with which server buffer is fio's business (it varies from run to run),
# so the checks do not assume it:
#
#   write: every block the client writes is "sroce-io" and the block's
#          offset (8 bytes, little endian), repeated (fio's verify=pattern
#          with %o). Each of the server's buffers, zero before, must hold
#          exactly such a block, no two the same offset, one of them the
#          last block of the run.
#   read:  the server's buffers are filled with random bytes first (fio
#          never writes a read job's buffers); each of the client's must
#          end as one of them, over what fio had put there.
#
# Also checked: the client moved the whole size (fio's JSON report), no
# I/O error, and the devices' byte counters rose by at least that much on
# the sending and the receiving side.
#
# topology: twovm
# kernels: none
# full-kernels: 6.1 6.12
# timeout: 300
# requires: sroce

. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/datapath_lib.sh"

command -v fio >/dev/null || bail "fio is not installed"
fio --enghelp 2>/dev/null | grep -qw rdma || bail "this fio has no rdma engine"

dp_setup

BS=65536
DEPTH=4
SIZE=$((8 * 1024 * 1024))
PORT=18810

# counter NAME: a counter of this VM's device (0 when it is missing).
counter() {
	rdma statistic show link "sroce0/1" | tr ' ' '\n' |
		awk -v n="$1" '$0 == n { getline; v = $0 } END { print v + 0 }'
}

# block_sums FILE: the sha256 of each of the DEPTH buffers in FILE, one
# line, space separated.
block_sums() {
	local i out=()
	for ((i = 0; i < DEPTH; i++)); do
		out+=("$(dd if="$1" bs="$BS" skip="$i" count=1 2>/dev/null |
			sha256sum | cut -c1-16)")
	done
	echo "${out[*]}"
}

# pattern_blocks FILE: the offset held by each of the DEPTH buffers in
# FILE, one line, or "bad:I" for a buffer I that is no block of the write
# run's pattern.
pattern_blocks() {
	python3 - "$1" "$BS" "$DEPTH" <<-'EOF'
	import struct, sys
	path, bs, depth = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
	data = open(path, "rb").read()
	out = []
	for i in range(depth):
	    blk = data[i * bs:(i + 1) * bs]
	    off = struct.unpack_from("<Q", blk, 8)[0] if len(blk) == bs else 0
	    unit = b"sroce-io" + struct.pack("<Q", off)
	    out.append(str(off) if blk == unit * (bs // 16) else "bad:%d" % i)
	print(" ".join(out))
	EOF
}

# memfile NAME [FILL]: a fresh buffer file in tmpfs, with FILL's bytes at
# its start, and a hard link that outlives fio's unlink; prints the file's
# path (the link is PATH.keep). fio maps a shared file at the size it has
# (it truncates only private ones): room is made beyond the DEPTH buffers
# for any alignment fio adds.
memfile() {
	local f=/dev/shm/fio-$1
	rm -f "$f" "$f.keep"
	if [ -n "${2:-}" ]; then
		head -c $((BS * DEPTH)) "$2" >"$f" || return
	fi
	truncate -s $((BS * (DEPTH + 1))) "$f" &&
		ln "$f" "$f.keep" && echo "$f"
}

# server VERB: VM b's side of one run.
server() {
	local verb=$1 f pid rc rx0 tx0
	# The read run reads what is here: random bytes, not what fio put.
	if [ "$verb" = read ]; then
		f=$(memfile "srv-$verb" /dev/urandom)
	else
		f=$(memfile "srv-$verb")
	fi
	[ -n "$f" ] || bail "cannot create the server's buffer file"
	rx0=$(counter rx_bytes) tx0=$(counter tx_bytes)
	log "+ fio server ($verb)"
	timeout 60 fio --name="srv-$verb" --ioengine=rdma --port="$PORT" \
		--rw=read --bs="$BS" --size="$SIZE" --iodepth="$DEPTH" \
		--mem="mmapshared:$f" >&2 &
	pid=$!
	dp_wait_server "$pid" cm fio
	barrier "fio-$verb" || true
	wait "$pid"
	rc=$?
	put "$verb.srv.rc" "$rc"
	put "$verb.srv.sums" "$(block_sums "$f.keep")"
	[ "$verb" = write ] && put "$verb.srv.blocks" "$(pattern_blocks "$f.keep")"
	put "$verb.srv.rx" $(($(counter rx_bytes) - rx0))
	put "$verb.srv.tx" $(($(counter tx_bytes) - tx0))
	rm -f "$f" "$f.keep"
	get "$verb.done" 60 >/dev/null
	PORT=$((PORT + 1))
}

# client VERB [FIO_OPTION...]: VM a's side of one run, and its checks.
client() {
	local verb=$1 f out rc json bytes errs srv_rc srv_sums cli_sums rx0 tx0
	local d_rx d_tx s_rx s_tx
	shift
	f=$(memfile "cli-$verb") || bail "cannot create the client's buffer file"
	out=$(mktemp)
	barrier "fio-$verb" || true
	rx0=$(counter rx_bytes) tx0=$(counter tx_bytes)
	log "+ fio client ($verb) $*"
	timeout 60 fio --name="cli-$verb" --ioengine=rdma --hostname="$NET4_B" \
		--port="$PORT" --verb="$verb" --rw=write --bs="$BS" \
		--size="$SIZE" --iodepth="$DEPTH" --mem="mmapshared:$f" \
		--output-format=json "$@" >"$out" 2>&1
	rc=$?
	d_rx=$(($(counter rx_bytes) - rx0)) d_tx=$(($(counter tx_bytes) - tx0))
	cat "$out" >&2
	srv_rc=$(get "$verb.srv.rc" 90) || srv_rc=timeout
	srv_sums=$(get "$verb.srv.sums" 30)
	s_rx=$(get "$verb.srv.rx" 30) s_tx=$(get "$verb.srv.tx" 30)
	put "$verb.done" 1
	if [ "$rc" = 0 ] && [ "$srv_rc" = 0 ]; then
		ok "fio verb=$verb: client and server exit 0"
	else
		not_ok "fio verb=$verb: client and server exit 0" \
			"client exit status $rc, server $srv_rc"
		diag_file "$out" 30
	fi
	# The JSON report follows whatever fio printed before it.
	json=$(sed -n '/^{/,$p' "$out")
	read -r bytes errs < <(python3 -c '
import json, sys
j = json.loads(sys.stdin.read())["jobs"][0]
print(j["write"]["io_bytes"], j["error"])' <<<"$json" 2>/dev/null)
	expect_eq "fio verb=$verb: $SIZE bytes moved, no error" "$SIZE 0" "$bytes $errs"

	cli_sums=$(block_sums "$f.keep")
	rm -f "$f" "$f.keep" "$out"
	if [ "$verb" = write ]; then
		check_blocks "$(get write.srv.blocks 30)"
	else
		check_members "$srv_sums" "$cli_sums"
	fi

	# The payload went one way: out of the client for write, into it for
	# read (requests and acknowledgements add a little either way).
	if [ "$verb" = write ]; then
		check_ge "fio verb=write: client tx_bytes rose by the size" "$d_tx"
		check_ge "fio verb=write: server rx_bytes rose by the size" "$s_rx"
	else
		check_ge "fio verb=read: server tx_bytes rose by the size" "$s_tx"
		check_ge "fio verb=read: client rx_bytes rose by the size" "$d_rx"
	fi
	PORT=$((PORT + 1))
}

# check_blocks OFFSETS: the server's buffers after the write run.
check_blocks() {
	local offs=$1 o n=0 last=0 uniq
	for o in $offs; do
		if [[ $o == bad:* ]] || [ $((o % BS)) != 0 ] || [ "$o" -ge "$SIZE" ]; then
			not_ok "fio verb=write: each server buffer holds one written block" \
				"buffer offsets: $offs"
			return
		fi
		n=$((n + 1))
		[ "$o" -gt "$last" ] && last=$o
	done
	expect_eq "fio verb=write: each server buffer holds one written block" \
		"$DEPTH" "$n"
	uniq=$(tr ' ' '\n' <<<"$offs" | sort -u | grep -c .)
	expect_eq "fio verb=write: no two server buffers hold the same block ($offs)" \
		"$DEPTH" "$uniq"
	expect_eq "fio verb=write: the last block is in one of them" \
		$((SIZE - BS)) "$last"
}

# check_members SERVER_SUMS CLIENT_SUMS: after the read run, each of the
# client's buffers holds one of the server's (random) buffers.
check_members() {
	local s c missing=0
	for c in $2; do
		for s in $1; do
			[ "$c" = "$s" ] && continue 2
		done
		missing=$((missing + 1))
	done
	if [ -n "$2" ] && [ "$missing" = 0 ]; then
		ok "fio verb=read: each client buffer holds one of the server's buffers"
	else
		not_ok "fio verb=read: each client buffer holds one of the server's buffers" \
			"server: $1" "client: $2"
	fi
}

# check_ge DESC VALUE: ok when VALUE is at least SIZE.
check_ge() {
	if [ "${2:-0}" -ge "$SIZE" ]; then
		ok "$1 ($2 >= $SIZE)"
	else
		not_ok "$1" "rose by ${2:-nothing}, less than $SIZE"
	fi
}

if [ "$ROLE" = b ]; then
	server write
	server read
else
	# Without do_verify, fio only fills its blocks with the pattern.
	client write --verify=pattern --verify_pattern='"sroce-io"%o' \
		--do_verify=0
	# fio's scrambling of each block before a write would touch the
	# bytes that the read then replaces; off, so that only the read
	# decides what the buffers hold.
	client read --scramble_buffers=0
	dp_stats sroce0 >&2
fi
done_testing
