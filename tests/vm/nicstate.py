#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Print what QEMU's virtio-net of a test VM holds, from its QMP socket.

usage: nicstate.py QMP_SOCKET...

For each virtqueue of each virtio-net device: the avail index as QEMU last
read it (buffers offered), QEMU's last_avail_idx (buffers taken), the used
index (buffers given back), and both indices and their flags as they are
in guest memory. A link that stopped
moving frames shows there which side waits: buffers offered but not taken
is the emulator not processing a queue; buffers given back but not seen by
the guest (its driver's counters) is the guest not polling.
"""

import json
import socket
import sys


class Qmp:
    """A minimal QMP client: one command at a time, events skipped."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(10)
        self.sock.connect(path)
        self.buf = b""
        self.read()  # the greeting
        self.cmd("qmp_capabilities")

    def read(self):
        while b"\n" not in self.buf:
            data = self.sock.recv(65536)
            if not data:
                raise ConnectionError("QMP socket closed")
            self.buf += data
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def cmd(self, name, **args):
        msg = {"execute": name}
        if args:
            msg["arguments"] = args
        self.sock.sendall(json.dumps(msg).encode() + b"\n")
        while True:
            reply = self.read()
            if "return" in reply:
                return reply["return"]
            if "error" in reply:
                raise RuntimeError(f"{name}: {reply['error'].get('desc')}")


def nic_state(path):
    """Print the virtio-net queues behind one QMP socket."""
    q = Qmp(path)
    for dev in q.cmd("x-query-virtio"):
        if dev.get("name") != "virtio-net":
            continue
        status = q.cmd("x-query-virtio-status", path=dev["path"])
        nvq = status.get("num-vqs", 3)
        print(f"{path}: {dev['path']}, {nvq} queues (0: receive, 1: transmit)")
        for i in range(nvq):
            try:
                s = q.cmd("x-query-virtio-queue-status", path=dev["path"],
                          queue=i)
            except RuntimeError as e:
                print(f"  queue {i}: {e}")
                continue
            ring = ""
            try:
                # The rings as they are in guest memory: what the guest
                # offered since QEMU last looked, what it was given back.
                e = q.cmd("x-query-virtio-queue-element", path=dev["path"],
                          queue=i)
                ring = (f" | in guest memory: avail {e['avail']['idx']}"
                        f" (flags {e['avail']['flags']})"
                        f" used {e['used']['idx']} (flags {e['used']['flags']})")
            except (RuntimeError, KeyError):
                pass
            print(f"  queue {i}: avail {s.get('shadow-avail-idx')}"
                  f" taken {s.get('last-avail-idx')} used {s.get('used-idx')}"
                  f" signalled {s.get('signalled-used')}"
                  f" inuse {s.get('inuse')} of {s.get('vring-num')}{ring}")


def main():
    rc = 0
    for path in sys.argv[1:]:
        try:
            nic_state(path)
        except (OSError, RuntimeError, ValueError) as e:
            print(f"{path}: {e}")
            rc = 1
    return rc


if __name__ == "__main__":
    sys.exit(main())
