# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Host side of the sroce test VMs, sourced by tests/run-scenarios.sh,
# tests/vm/shell.sh and anything else that boots a guest.
#
# A guest is QEMU (TCG) booting a kernel with a small busybox initramfs
# (tests/vm/initramfs-init) that mounts the host's root read-only over 9p
# with a tmpfs overlay on top and runs tests/vm/guest.sh from this tree as
# its init. One writable 9p share, the "boot directory", carries the job in
# and the results out:
#
#   BOOTDIR/scenarios        job: lines "NAME TIMEOUT", run in order
#   BOOTDIR/cmd.sh           job: a command (shell.sh), instead of scenarios
#   BOOTDIR/console-R.log    serial console of the VM in role R (a or b)
#   BOOTDIR/qmp-R.sock       its QMP socket (tests/vm/nicstate.py reads it)
#   BOOTDIR/link.sock        twovm: the paths of the link's two sockets
#   BOOTDIR/R/NAME.*         per-scenario results (see guest.sh)
#   BOOTDIR/sync/            rendezvous files shared by the two VMs
#
# Interface:
#   vm_kernel NAME          NAME is 6.1, 6.12, debug (6.1 source), debug-6.12
#                           or a KVER with an image
#                           in /boot; sets VM_KNAME VM_KVER VM_IMAGE
#                           VM_MODROOT VM_MEM VM_SLOW
#   vm_initramfs            builds or reuses the initramfs; sets VM_INITRD
#   vm_stage_modules        stages build/KVER/*.ko with a host-side depmod;
#                           sets VM_MODSTAGE (vm_start passes it on); call
#                           it right before booting, with the lock held
#   vm_lock [SLOTS] / vm_unlock
#                           take (and give back) SLOTS of the machine's
#                           CPU slots before starting QEMU (see below)
#   vm_start BOOTDIR TOPO ROLE [CMDLINE...]
#                           starts one VM in the background with $VM_SMP
#                           vCPUs (default 1); its pid is appended to
#                           VM_PIDS; $SROCE_VM_APPEND is added to every
#                           kernel command line
#   vm_start_topo BOOTDIR TOPO
#                           starts the VMs of a topology (netns: a;
#                           twovm: a and b joined by one virtio-net link)
#   vm_link_state BOOTDIR   prints both QEMUs' side of a twovm link
#   vm_alive                true while any started VM runs
#   vm_kill                 kills every VM this shell started
#   vm_splat_grep FILE...   prints the lines that show a kernel splat

SROCE_VM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SROCE_REPO=$(cd "$SROCE_VM_DIR/../.." && pwd)
SROCE_CACHE=${SROCE_CACHE:-/var/cache/sroce}
SROCE_VM_LOCK=${SROCE_VM_LOCK:-/var/tmp/sroce-vm.lock}
# CPU slots: one per host CPU, and one more, because TCG guests leave a
# share of their CPU idle (tests/vm/README.md). Every vCPU of every test VM
# on this machine, whoever started it, holds one (a flock on
# SROCE_VM_LOCK.slotN), so the concurrent QEMU load stays within that
# however many runners there are.
SROCE_VM_SLOTS=${SROCE_VM_SLOTS:-$(($(nproc) + 1))}
SROCE_QEMU=${SROCE_QEMU:-qemu-system-x86_64}

# MACs of the two VMs on their shared link; guest.sh derives the same.
VM_MAC_a=52:54:00:12:34:01
VM_MAC_b=52:54:00:12:34:02
# The netns guest's NIC with no peer (see vm_start_topo).
VM_MAC_lone=52:54:00:12:34:09
# The fd on which each twovm QEMU finds its end of the link.
VM_LINK_FD=100

# Modules the initramfs needs to reach the 9p root; each one that is built
# into the kernel is skipped, dependencies come from modules.dep.
VM_INITRAMFS_MODULES=(virtio_pci 9pnet_virtio 9p overlay)

VM_PIDS=()
VM_SLOT_FDS=()

vm_log() { echo "vm: $*" >&2; }
vm_die() { vm_log "error: $*"; return 1; }

# vm_kernel NAME: resolve a kernel name into image, version and modules.
vm_kernel() {
	local name=$1 line dir

	VM_KNAME=$name
	VM_MODROOT=
	VM_MEM=2048
	VM_SLOW=1
	VM_NICE=0
	case $name in
	debug | debug-6.12)
		local script=$SROCE_REPO/tests/kernel/debug-kernel.sh series=6.1
		[ "$name" = debug ] || series=${name#debug-}
		[ -x "$script" ] || vm_die "$script missing: no debug kernel" || return
		dir=$("$script" "$series" | tail -n1) || vm_die "$script $series failed" || return
		[ -f "$dir/kver" ] && [ -f "$dir/vmlinuz" ] ||
			vm_die "debug kernel dir '$dir' lacks kver or vmlinuz" || return
		VM_KVER=$(cat "$dir/kver")
		VM_IMAGE=$dir/vmlinuz
		VM_MODROOT=$dir/modules
		VM_MEM=3072
		VM_SLOW=5
		# The longest job of a run: beside other guests on the extra
		# CPU slot it keeps its CPU, they share what is left.
		VM_NICE=-5
		;;
	*)
		line=$("$SROCE_REPO/scripts/kernels.sh" | awk -v n="$name" '$1 == n')
		if [ -n "$line" ]; then
			read -r _ VM_KVER _ VM_IMAGE <<<"$line"
		elif [ -f "/boot/vmlinuz-$name" ]; then
			VM_KVER=$name
			VM_IMAGE=/boot/vmlinuz-$name
		else
			vm_die "unknown kernel '$name' (known: $("$SROCE_REPO/scripts/kernels.sh" | awk '{printf "%s ", $1}')debug debug-6.12)"
			return
		fi
		;;
	esac
	[ -d "$(vm_moddir)" ] || vm_die "no modules for $VM_KVER in $(vm_moddir)"
}

# The kernel's module directory on the host.
vm_moddir() { echo "${VM_MODROOT}/lib/modules/$VM_KVER"; }

# vm_modules_closure NAME...: print the module files (relative to the
# module directory) to load, dependencies first; built-in ones are skipped.
vm_modules_closure() {
	local moddir line m n d
	local -A path deps seen
	moddir=$(vm_moddir)

	while IFS= read -r line; do
		m=${line%%:*}
		n=${m##*/}
		n=${n%%.ko*}
		path[${n//-/_}]=$m
		deps[${n//-/_}]=${line#*:}
	done <"$moddir/modules.dep"

	_vm_visit() {
		local n=$1 d dn
		[ -n "${seen[$n]:-}" ] && return 0
		seen[$n]=1
		for d in ${deps[$n]}; do
			dn=${d##*/}
			dn=${dn%%.ko*}
			_vm_visit "${dn//-/_}"
		done
		echo "${path[$n]}"
	}
	for n; do
		n=${n//-/_}
		if [ -n "${path[$n]:-}" ]; then
			_vm_visit "$n"
		elif ! grep -qE "/${n//_/[-_]}\.ko" "$moddir/modules.builtin"; then
			vm_die "module $n neither built in nor in $moddir" || return
		fi
	done
}

# vm_initramfs: the initramfs for $VM_KVER, cached under
# $SROCE_CACHE/initramfs by kernel version and a hash of what goes in.
vm_initramfs() {
	local init=$SROCE_VM_DIR/initramfs-init moddir mods key out tmp m f busybox

	moddir=$(vm_moddir)
	busybox=$(command -v busybox) || vm_die "busybox missing (apt-get install busybox-static)" || return
	file -L "$busybox" | grep -q 'statically linked' ||
		vm_die "$busybox is not static (apt-get install busybox-static)" || return
	mods=$(vm_modules_closure "${VM_INITRAMFS_MODULES[@]}") || return
	key=$({
		cat "$init"
		echo "$mods"
		stat -Lc '%s %Y' "$busybox" "$moddir/modules.dep"
	} | sha256sum | cut -c1-16)
	out=$SROCE_CACHE/initramfs/$VM_KVER-$key.cpio
	VM_INITRD=$out
	[ -s "$out" ] && return 0

	vm_log "building initramfs $out"
	mkdir -p "$SROCE_CACHE/initramfs"
	tmp=$(mktemp -d "$SROCE_CACHE/initramfs/.tmp-XXXXXX")
	mkdir -p "$tmp/root/bin" "$tmp/root/dev" "$tmp/root/modules"
	cp "$busybox" "$tmp/root/bin/busybox"
	cp "$init" "$tmp/root/init"
	chmod 755 "$tmp/root/init"
	mknod -m 600 "$tmp/root/dev/console" c 5 1
	for m in $mods; do
		f=${m##*/}
		case $f in
		*.ko.xz) xz -dc "$moddir/$m" >"$tmp/root/modules/${f%.xz}" ;;
		*.ko.zst) zstd -qdc "$moddir/$m" >"$tmp/root/modules/${f%.zst}" ;;
		*.ko.gz) gzip -dc "$moddir/$m" >"$tmp/root/modules/${f%.gz}" ;;
		*.ko) cp "$moddir/$m" "$tmp/root/modules/$f" ;;
		*) rm -rf "$tmp"; vm_die "unexpected module file $m"; return ;;
		esac
		echo "${f%.ko*}.ko" >>"$tmp/root/modules/order"
	done
	touch "$tmp/root/modules/order"
	(cd "$tmp/root" && find . | LC_ALL=C sort | cpio --quiet -o -H newc) >"$tmp/out.cpio" ||
		{ rm -rf "$tmp"; vm_die "cpio failed"; return; }
	mv "$tmp/out.cpio" "$out"
	rm -rf "$tmp"
	# Old images of this kernel are useless once the key changed.
	find "$SROCE_CACHE/initramfs" -name "$VM_KVER-*.cpio" ! -path "$out" -delete
}

# vm_stage_modules: the modules of build/$VM_KVER/ with the kernel's
# module index regenerated around them (depmod on the host: in a TCG guest
# over 9p it takes minutes). Sets VM_MODSTAGE to a cached directory
# holding lib/modules/KVER/{extra/*.ko,modules.*} and a manifest, or to ""
# when nothing is built for this kernel.
vm_stage_modules() {
	local src=$SROCE_REPO/build/$VM_KVER moddir key stage tmp lm f
	local -a kos

	VM_MODSTAGE=
	shopt -s nullglob
	kos=("$src"/*.ko)
	shopt -u nullglob
	[ ${#kos[@]} -gt 0 ] || return 0
	moddir=$(vm_moddir)
	key=$({
		sha256sum "${kos[@]}" | sed 's|  .*/|  |'
		stat -Lc '%s %Y' "$moddir/modules.dep"
	} | sha256sum | cut -c1-16)
	stage=$SROCE_CACHE/modstage/$VM_KVER-$key
	VM_MODSTAGE=$stage
	[ -f "$stage/manifest" ] && { touch "$stage"; return 0; }

	mkdir -p "$SROCE_CACHE/modstage"
	tmp=$(mktemp -d "$SROCE_CACHE/modstage/.tmp-XXXXXX")
	lm=$tmp/lib/modules/$VM_KVER
	mkdir -p "$lm/extra"
	ln -s "$moddir/kernel" "$lm/kernel"
	for f in modules.order modules.builtin modules.builtin.modinfo; do
		[ -f "$moddir/$f" ] && cp "$moddir/$f" "$lm/"
	done
	cp "${kos[@]}" "$lm/extra/"
	if ! depmod -b "$tmp" "$VM_KVER" 2>"$tmp/depmod.err"; then
		cat "$tmp/depmod.err" >&2
		rm -rf "$tmp"
		vm_die "depmod for $VM_KVER failed"
		return
	fi
	rm "$lm/kernel"
	for f in "$lm"/extra/*.ko; do
		echo "staged: ${f##*/} $(sha256sum <"$f" | cut -c1-16) $(modinfo -F vermagic "$f")"
	done >"$tmp/manifest"
	mv -T "$tmp" "$stage" 2>/dev/null || rm -rf "$tmp"
	# Each use touches its stage: drop those unused for a day, but never
	# the three most recent of a kernel.
	find "$SROCE_CACHE/modstage" -mindepth 1 -maxdepth 1 -name "$VM_KVER-*" -printf '%T@ %p\n' |
		sort -rn | tail -n +4 | cut -d' ' -f2- |
		while read -r f; do
			[ -n "$(find "$f" -maxdepth 0 -mmin +1440)" ] && rm -rf "$f"
		done
	return 0
}

# vm_lock [SLOTS]: hold SLOTS CPU slots (default 1, at most
# SROCE_VM_SLOTS): one per vCPU the caller is about to boot.
#
#   SROCE_VM_LOCK         taken shared by every slot holder; whoever needs
#                         the whole machine (a benchmark) takes it
#                         exclusively, with flock(1) around its command,
#                         and exports SROCE_VM_LOCK_HELD=1
#   SROCE_VM_LOCK.queue   held by the one runner waiting for slots, so
#                         waiters are served in turn and one that needs
#                         two slots is not overtaken forever
#   SROCE_VM_LOCK.slotN   N = 0 .. SROCE_VM_SLOTS-1, one per slot
#
# Nobody else may set SROCE_VM_LOCK_HELD.
vm_lock() {
	local want=${1:-1} i fd said=0
	local -a got

	[ "${SROCE_VM_LOCK_HELD:-0}" = 1 ] && return 0
	[ "$want" -le "$SROCE_VM_SLOTS" ] || want=$SROCE_VM_SLOTS
	# Polled, never a blocking flock: a signal must stop a waiting
	# runner (bash runs traps only between commands).
	exec {VM_LOCK_FD}>>"$SROCE_VM_LOCK"
	until flock -n -s "$VM_LOCK_FD"; do
		[ $said = 1 ] || vm_log "waiting for $SROCE_VM_LOCK (held for the whole machine)"
		said=1
		sleep 0.5
	done
	said=0
	exec {VM_QUEUE_FD}>>"$SROCE_VM_LOCK.queue"
	until flock -n "$VM_QUEUE_FD"; do
		[ $said = 1 ] || vm_log "waiting for $want CPU slot(s) (other VM users)"
		said=1
		sleep 0.5
	done
	while :; do
		got=()
		for ((i = 0; i < SROCE_VM_SLOTS && ${#got[@]} < want; i++)); do
			exec {fd}>>"$SROCE_VM_LOCK.slot$i"
			if flock -n "$fd"; then
				got+=("$fd")
			else
				exec {fd}>&-
			fi
		done
		[ ${#got[@]} -ge "$want" ] && break
		for fd in "${got[@]}"; do exec {fd}>&-; done
		[ $said = 1 ] || vm_log "waiting for $want CPU slot(s) (other VM users)"
		said=1
		sleep 0.5
	done
	VM_SLOT_FDS=("${got[@]}")
	exec {VM_QUEUE_FD}>&-
	VM_QUEUE_FD=
}

vm_unlock() {
	local fd
	for fd in "${VM_SLOT_FDS[@]}"; do
		exec {fd}>&-
	done
	VM_SLOT_FDS=()
	[ -n "${VM_LOCK_FD:-}" ] || return 0
	exec {VM_LOCK_FD}>&-
	VM_LOCK_FD=
}

# vm_slots_free: how many CPU slots nobody holds at this moment (a hint:
# another runner may take one right after).
vm_slots_free() {
	local i fd n=0
	if [ "${SROCE_VM_LOCK_HELD:-0}" = 1 ]; then
		echo "$SROCE_VM_SLOTS"
		return
	fi
	exec {fd}>>"$SROCE_VM_LOCK"
	if ! flock -n -s "$fd"; then
		exec {fd}>&-
		echo 0
		return
	fi
	exec {fd}>&-
	for ((i = 0; i < SROCE_VM_SLOTS; i++)); do
		exec {fd}>>"$SROCE_VM_LOCK.slot$i"
		flock -n "$fd" && n=$((n + 1))
		exec {fd}>&-
	done
	echo "$n"
}

# vm_topo_slots TOPO: the CPU slots a topology's boot takes: one per vCPU
# of each VM of a pair, one per two vCPUs of a netns VM. TCG guests wait
# much of the time, but a pair's guests wait for each other, and a pair
# beside another VM ran 1.6 to 2 times slower than alone when packed: a
# pair keeps a slot per vCPU. A two-vCPU netns guest used 0.9 to 1.1 host
# CPUs over its whole boot (the SMP scenarios: one process races another
# on two vCPUs, then both wait), so it takes one slot. SROCE_VM_PACK=1
# also packs pairs (as many slots as one of its VMs has vCPUs).
vm_topo_slots() {
	local n=${VM_SMP:-1}
	if [ "$1" != twovm ]; then
		n=$(((n + 1) / 2))
	elif [ "${SROCE_VM_PACK:-0}" != 1 ]; then
		n=$((2 * n))
	fi
	[ "$n" -le "$SROCE_VM_SLOTS" ] || n=$SROCE_VM_SLOTS
	echo "$n"
}

# vm_start BOOTDIR TOPO ROLE [EXTRA CMDLINE WORDS...]
# Extra QEMU arguments come from the array VM_QEMU_EXTRA.
vm_start() {
	local bootdir=$1 topo=$2 role=$3 cmdline
	shift 3

	cmdline="console=ttyS0,115200 panic=-1 oops=panic loglevel=6 log_buf_len=8M"
	# acpi=noirq: PCI interrupt routing from the BIOS table; evaluating
	# the ACPI _PRT method takes a minute on the debug kernel under TCG.
	# norandmaps: without it, every exec loads libraries at new addresses
	# and TCG translates their code again (exec is four times slower).
	cmdline+=" mitigations=off nokaslr norandmaps acpi=noirq tsc=reliable no_timer_check"
	cmdline+=" rcupdate.rcu_cpu_stall_timeout=60 random.trust_cpu=on"
	cmdline+=" srocevm.guest=$SROCE_VM_DIR/guest.sh srocevm.repo=$SROCE_REPO"
	cmdline+=" srocevm.role=$role srocevm.topo=$topo srocevm.kname=$VM_KNAME"
	cmdline+=" srocevm.slow=$VM_SLOW srocevm.kmemleak=${SROCE_KMEMLEAK:-boot}"
	[ -n "$VM_MODROOT" ] && cmdline+=" srocevm.modroot=$VM_MODROOT"
	[ -n "${VM_MODSTAGE:-}" ] && cmdline+=" srocevm.modstage=$VM_MODSTAGE"
	[[ $VM_KNAME == debug* ]] && cmdline+=" kmemleak=on kasan_multi_shot"
	[ $# -gt 0 ] && cmdline+=" $*"
	[ -n "${SROCE_VM_APPEND:-}" ] && cmdline+=" $SROCE_VM_APPEND"

	mkdir -p "$bootdir/$role"
	# A QMP socket, to read the emulated devices' state from the host
	# (tests/vm/nicstate.py), where its path fits a unix address.
	local qmp=() sock=$bootdir/qmp-$role.sock
	[ ${#sock} -lt 100 ] && qmp=(-qmp "unix:$sock,server=on,wait=off")
	# Two features of "max" that TCG makes expensive: with ERMS/FSRM the
	# guest's memcpy, copy_to_user and clear_page use "rep movsb", which
	# TCG emulates a byte at a time (copies were three to seven times
	# slower, a 1 MiB ibv_rc_pingpong took twice as long); with LA57 the
	# guest pages with five levels, and every miss of TCG's software TLB
	# walks them all (fork and exec were 2.8 times slower).
	${VM_QEMU_WRAP[@]+"${VM_QEMU_WRAP[@]}"} nice -n "${VM_NICE:-0}" "$SROCE_QEMU" -accel tcg -machine pc -cpu "${SROCE_QEMU_CPU:-max,-erms,-fsrm,-la57}" -smp "${VM_SMP:-1}" -m "$VM_MEM" \
		-nodefaults -no-user-config -display none -no-reboot \
		-kernel "$VM_IMAGE" -initrd "$VM_INITRD" -append "$cmdline" \
		-serial "file:$bootdir/console-$role.log" \
		${qmp[@]+"${qmp[@]}"} \
		-virtfs local,path=/,mount_tag=host,security_model=none,readonly=on,multidevs=remap \
		-virtfs "local,path=$bootdir,mount_tag=out,security_model=none,multidevs=remap" \
		"${VM_QEMU_EXTRA[@]}" \
		</dev/null >"$bootdir/qemu-$role.log" 2>&1 &
	VM_PIDS+=($!)
}

# vm_start_topo BOOTDIR TOPO: start the VMs a topology needs.
vm_start_topo() {
	local bootdir=$1 topo=$2 sock

	case $topo in
	netns)
		# A NIC whose link has no peer: a hub with no other port. QEMU
		# never completes its transmissions, as a dead link's NIC may.
		# shellcheck disable=SC2054 # QEMU's option syntax: commas
		VM_QEMU_EXTRA=(-netdev hubport,id=n0,hubid=0
			-device "virtio-net-pci,netdev=n0,mac=$VM_MAC_lone")
		vm_start "$bootdir" "$topo" a
		;;
	twovm)
		# One unix datagram socket per VM, the two connected to each
		# other (tests/vm/linkend.py opens them): one frame per
		# datagram, and as many frames in flight as the sender's socket
		# buffer holds (VM_LINK_SNDBUF, 512 KiB: 456 frames of 1514
		# bytes, 125 of 4214); a sender waits for room, so no frame is
		# lost. QEMU 7.2's stream netdev stopped a VM's transmit queue
		# for good under load (rdma_rxe's ib_send_bw stalled it within
		# minutes; performance.rst); sockets that only send to each
		# other's address hold ten frames (net.unix.max_dgram_qlen),
		# which halved every stack's rate. This link has stalled too
		# (once in CI, in interop_rxe; guest.sh then stops the boot and
		# the runner retries the scenario once). A unix socket path must
		# stay short (108 bytes). VM_LINK_DEVOPTS adds virtio-net-pci
		# properties to both NICs (event_idx=off...), for experiments.
		sock=$(mktemp -u /var/tmp/sroce-vm-link.XXXXXX)
		VM_QEMU_WRAP=(python3 "$SROCE_VM_DIR/linkend.py" --bind "$sock.a"
			--peer "$sock.b" --fd "$VM_LINK_FD"
			--sndbuf "${VM_LINK_SNDBUF:-524288}" --)
		VM_QEMU_EXTRA=(-netdev "dgram,id=n0,local.type=fd,local.str=$VM_LINK_FD"
			-device "virtio-net-pci,netdev=n0,mac=$VM_MAC_a${VM_LINK_DEVOPTS:+,$VM_LINK_DEVOPTS}")
		vm_start "$bootdir" "$topo" a
		VM_QEMU_WRAP=(python3 "$SROCE_VM_DIR/linkend.py" --bind "$sock.b"
			--peer "$sock.a" --fd "$VM_LINK_FD"
			--sndbuf "${VM_LINK_SNDBUF:-524288}" --)
		VM_QEMU_EXTRA=(-netdev "dgram,id=n0,local.type=fd,local.str=$VM_LINK_FD"
			-device "virtio-net-pci,netdev=n0,mac=$VM_MAC_b${VM_LINK_DEVOPTS:+,$VM_LINK_DEVOPTS}")
		vm_start "$bootdir" "$topo" b
		VM_QEMU_WRAP=()
		VM_SOCK=$sock
		echo "$sock.a $sock.b" >"$bootdir/link.sock"
		;;
	*)
		vm_die "unknown topology '$topo'"
		return
		;;
	esac
}

# vm_link_state BOOTDIR: the host's side of a twovm link: both QEMUs'
# virtio-net queues (nicstate.py, over their QMP sockets) and both link
# sockets (ss: Send-Q is what the sender has queued at its peer, unread).
vm_link_state() {
	local bootdir=$1 a b
	python3 "$SROCE_VM_DIR/nicstate.py" "$bootdir"/qmp-[ab].sock 2>&1 || true
	{ read -r a b <"$bootdir/link.sock"; } 2>/dev/null || return 0
	ss -x -a -m src "$a" or src "$b" 2>&1 || true
}

vm_alive() {
	local p
	for p in "${VM_PIDS[@]}"; do
		kill -0 "$p" 2>/dev/null && return 0
	done
	return 1
}

# Number of started VMs still running.
vm_alive_count() {
	local p n=0
	for p in "${VM_PIDS[@]}"; do
		kill -0 "$p" 2>/dev/null && n=$((n + 1))
	done
	echo $n
}

vm_kill() {
	local p
	for p in "${VM_PIDS[@]}"; do
		kill -9 "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	VM_PIDS=()
	[ -n "${VM_SOCK:-}" ] && rm -f "$VM_SOCK.a" "$VM_SOCK.b"
	VM_SOCK=
}

# vm_wait_exit SECONDS: wait for every VM to exit, kill them after SECONDS.
vm_wait_exit() {
	local deadline=$((SECONDS + $1))
	while vm_alive && [ $SECONDS -lt "$deadline" ]; do
		sleep 0.2
	done
	vm_kill
}

# Lines of kernel log that fail a test. The patterns live in one file that
# guest.sh uses too.
vm_splat_grep() {
	grep -aE -f "$SROCE_VM_DIR/splat.re" "$@" | grep -avE 'srocevm: (begin|end) '
}
