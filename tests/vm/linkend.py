#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Run a command (QEMU) with one end of the two-VM link open on a fixed fd.

The link is a pair of unix datagram sockets, one per VM, bound to paths and
connected to each other. Connected both ways, a sender is its receiver's
peer, and the kernel then bounds what it may queue by the sender's socket
buffer alone; a socket that merely sends to an address stops at
net.unix.max_dgram_qlen frames (10 by default), far less than a NIC's ring.
A full buffer makes the sender wait (QEMU polls for room), so the link
loses no frame.

usage: linkend.py --bind PATH --peer PATH --fd N [--sndbuf BYTES]
                  [--wait SECONDS] -- COMMAND...

The first end started waits for the second to be bound before connecting.
"""

import argparse
import os
import socket
import sys
import time

SO_SNDBUFFORCE = getattr(socket, "SO_SNDBUFFORCE", 32)


def open_end(bind, peer, sndbuf, wait):
    """Bind this end, size its send buffer, connect it to the peer's end."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    if sndbuf:
        try:
            # Root may go past net.core.wmem_max; others get what it allows.
            s.setsockopt(socket.SOL_SOCKET, SO_SNDBUFFORCE, sndbuf)
        except PermissionError:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, sndbuf)
    try:
        os.unlink(bind)
    except FileNotFoundError:
        pass
    s.bind(bind)
    deadline = time.monotonic() + wait
    while True:
        try:
            s.connect(peer)
            return s
        except (FileNotFoundError, ConnectionRefusedError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bind", required=True)
    ap.add_argument("--peer", required=True)
    ap.add_argument("--fd", type=int, required=True)
    ap.add_argument("--sndbuf", type=int, default=0)
    ap.add_argument("--wait", type=float, default=120)
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    cmd = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not cmd:
        ap.error("no command")
    try:
        s = open_end(args.bind, args.peer, args.sndbuf, args.wait)
    except OSError as e:
        print(f"linkend: {args.bind} -> {args.peer}: {e}", file=sys.stderr)
        return 1
    os.dup2(s.fileno(), args.fd, inheritable=True)
    s.close()
    os.execvp(cmd[0], cmd)
    return 1


if __name__ == "__main__":
    sys.exit(main())
