#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Send hand-made RoCEv2 request packets, as a hostile host on the path
would: UDP datagrams to port 4791 from an ordinary UDP socket bound to a
chosen source address, with a correct ICRC (or, on request, a wrong one).
Python 3 standard library only.

  sroce-inject.py --src ADDR --dst ADDR --qpn QPN --psn PSN --op OP [...]

OP is one of send-only, send-first, send-only-inv, write-only, write-first,
write-middle, read, flush, cmp-swap, fetch-add, cnp (a congestion
notification, BTH opcode 0x81 and its 16 reserved bytes); --uc makes it
the UC opcode (send and write only).

The ICRC covers the IP header, so it can be computed in advance only over
IPv6 (rocev2.py says why): the tool sends over IPv6 only.

  --selftest checks the ICRC code against a captured packet and exits.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
import rocev2  # noqa: E402

OPCODES = {
    "send-first": 0x00,
    "send-only": 0x04,
    "write-first": 0x06,
    "write-middle": 0x07,
    "write-only": 0x0a,
    "read": 0x0c,
    "cmp-swap": 0x13,
    "fetch-add": 0x14,
    "send-only-inv": 0x17,
    "flush": 0x1c,
    "cnp": 0x81,
}
UC_OPS = ("send-first", "send-only", "write-first", "write-middle",
          "write-only")
UC_BASE = 0x20


def build(args):
    """The UDP payload: BTH, extension headers, payload, pad, ICRC."""
    opcode = OPCODES[args.op]
    if args.uc:
        if args.op not in UC_OPS:
            sys.exit("sroce-inject: %s has no UC opcode" % args.op)
        opcode |= UC_BASE
    payload = bytes.fromhex(args.payload) if args.payload else \
        bytes((args.fill + i) & 0xff for i in range(args.payload_len))
    if args.op in ("read", "flush", "cmp-swap", "fetch-add", "cnp"):
        payload = b""
    pad = -len(payload) % 4
    ext = b""
    if args.op == "flush":
        ext += rocev2.feth(args.flush_bits)
    if args.op in ("write-only", "write-first", "read", "flush"):
        length = args.length if args.length is not None else len(payload)
        ext += rocev2.reth(args.va, args.rkey, length)
    if args.op in ("cmp-swap", "fetch-add"):
        ext += rocev2.atomiceth(args.va, args.rkey, args.swap_add, args.cmp)
    if args.op == "send-only-inv":
        ext += rocev2.u32(args.rkey)
    if args.op == "cnp":
        ext += bytes(16)
    bth = rocev2.bth(opcode, args.qpn, args.psn, pad=pad, pkey=args.pkey,
                     ackreq=args.ackreq, se=args.se)
    return bth + ext + payload + b"\0" * pad


def selftest():
    """Check the ICRC code against a captured packet."""
    ok = rocev2.selftest()
    print("ICRC self-test: %s" % ("ok" if ok else "FAILED"))
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    num = lambda s: int(s, 0)   # noqa: E731
    ap.add_argument("--selftest", action="store_true")
    ap.add_argument("--src", help="source IPv6 address, bound")
    ap.add_argument("--dst", help="destination IPv6 address")
    ap.add_argument("--qpn", type=num, default=0)
    ap.add_argument("--psn", type=num, default=0)
    ap.add_argument("--op", choices=sorted(OPCODES), default="send-only")
    ap.add_argument("--uc", action="store_true", help="UC opcode")
    ap.add_argument("--pkey", type=num, default=0xffff)
    ap.add_argument("--rkey", type=num, default=0,
                    help="RETH/AtomicETH rkey, or IETH key")
    ap.add_argument("--va", type=num, default=0)
    ap.add_argument("--length", type=num, default=None,
                    help="RETH length (default: the payload's)")
    ap.add_argument("--payload", help="payload bytes, in hex")
    ap.add_argument("--payload-len", type=num, default=0)
    ap.add_argument("--fill", type=num, default=0xa5,
                    help="first byte of a generated payload")
    ap.add_argument("--swap-add", type=num, default=1)
    ap.add_argument("--cmp", type=num, default=0)
    ap.add_argument("--flush-bits", type=num, default=0x11,
                    help="FETH: selectivity << 4 | placement type")
    ap.add_argument("--ackreq", action="store_true")
    ap.add_argument("--se", action="store_true")
    ap.add_argument("--bad-icrc", action="store_true")
    ap.add_argument("--count", type=num, default=1,
                    help="packets to send, the PSN going up by one")
    args = ap.parse_args()
    if args.selftest:
        return selftest()
    if not args.src or not args.dst:
        ap.error("--src and --dst are needed")

    sender = rocev2.Sender(args.src, args.dst)
    first = args.psn
    for i in range(args.count):
        args.psn = (first + i) & rocev2.PSN_MASK
        body = build(args)
        crc = sender.icrc_of(body)
        if args.bad_icrc:
            crc = bytes(b ^ 0x5a for b in crc)
        sender.send(body + crc)
    sender.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
