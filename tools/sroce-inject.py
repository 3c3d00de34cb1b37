#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Send hand-made RoCEv2 request packets, as a hostile host on the path
would: UDP datagrams to port 4791 from an ordinary UDP socket bound to a
chosen source address, with a correct ICRC (or, on request, a wrong one).
Python 3 standard library only.

  sroce-inject.py --src ADDR --dst ADDR --qpn QPN --psn PSN --op OP [...]

OP is one of send-only, send-first, send-only-inv, write-only, read, flush,
cmp-swap, fetch-add; --uc makes it the UC opcode (send and write only).

The ICRC covers the IP header, so it can be computed in advance only when
every unmasked IP header field is known: over IPv6 they are (traffic class,
flow label and hop limit are masked), over IPv4 the kernel picks the
identification field. The tool therefore sends over IPv6 only.

  --selftest checks the ICRC code against a captured packet and exits.
"""

import argparse
import socket
import struct
import sys
import zlib

ROCE_PORT = 4791

OPCODES = {
    "send-first": 0x00,
    "send-only": 0x04,
    "write-only": 0x0a,
    "read": 0x0c,
    "cmp-swap": 0x13,
    "fetch-add": 0x14,
    "send-only-inv": 0x17,
    "flush": 0x1c,
}
UC_OPS = ("send-first", "send-only", "write-only")
UC_BASE = 0x20


def icrc(l3, ipv6):
    """The ICRC of a packet given from its IP header (without options) to
    the end of its pad: CRC-32 over eight 0xff bytes standing for the LRH,
    the IP, UDP and BTH headers with their variant fields set to ones, and
    everything after the BTH; stored little-endian."""
    iplen = 40 if ipv6 else 20
    hdr = bytearray(l3[:iplen + 8 + 12])
    if ipv6:
        # Traffic class and flow label (all but the version nibble), hop
        # limit.
        hdr[0] |= 0x0f
        hdr[1:4] = b"\xff\xff\xff"
        hdr[7] = 0xff
    else:
        hdr[1] = 0xff                   # TOS
        hdr[8] = 0xff                   # TTL
        hdr[10:12] = b"\xff\xff"        # header checksum
    hdr[iplen + 6:iplen + 8] = b"\xff\xff"      # UDP checksum
    hdr[iplen + 8 + 4] = 0xff           # BTH: FECN, BECN, reserved
    crc = zlib.crc32(b"\xff" * 8 + bytes(hdr) + bytes(l3[len(hdr):]))
    return struct.pack("<I", crc & 0xffffffff)


def build(args):
    """The UDP payload: BTH, extension headers, payload, pad, ICRC."""
    opcode = OPCODES[args.op]
    if args.uc:
        if args.op not in UC_OPS:
            sys.exit("sroce-inject: %s has no UC opcode" % args.op)
        opcode |= UC_BASE
    payload = bytes.fromhex(args.payload) if args.payload else \
        bytes((args.fill + i) & 0xff for i in range(args.payload_len))
    if args.op in ("read", "flush", "cmp-swap", "fetch-add"):
        payload = b""
    pad = -len(payload) % 4
    flags = (pad << 4) | (0x80 if args.se else 0)
    ext = b""
    if args.op == "flush":
        ext += struct.pack(">I", args.flush_bits)
    if args.op in ("write-only", "read", "flush"):
        length = args.length if args.length is not None else len(payload)
        ext += struct.pack(">QII", args.va, args.rkey, length)
    if args.op in ("cmp-swap", "fetch-add"):
        ext += struct.pack(">QIQQ", args.va, args.rkey, args.swap_add,
                           args.cmp)
    if args.op == "send-only-inv":
        ext += struct.pack(">I", args.rkey)
    bth = struct.pack(">BBHII", opcode, flags, args.pkey,
                      args.qpn & 0xffffff,
                      (0x80000000 if args.ackreq else 0) |
                      (args.psn & 0xffffff))
    return bth + ext + payload + b"\0" * pad


def ipv6_image(src, dst, sport, udp_payload_len):
    """The IPv6 and UDP headers the kernel will put in front, as far as
    the ICRC sees them (masked fields left at zero here)."""
    udp_len = 8 + udp_payload_len
    ip = struct.pack(">IHBB", 6 << 28, udp_len, socket.IPPROTO_UDP, 0)
    ip += socket.inet_pton(socket.AF_INET6, src)
    ip += socket.inet_pton(socket.AF_INET6, dst)
    udp = struct.pack(">HHHH", sport, ROCE_PORT, udp_len, 0)
    return ip + udp


def selftest():
    """Check icrc() on an IPv4 RC SEND_ONLY that rdma_rxe sent."""
    pkt = bytes.fromhex(
        "450000642371400040118af0c6120001c6120002df9412b7005000006530ffff"
        "00000123000000000123456700000011d4c3b2a1030a11181f262d343b424950"
        "575e656c737a81888f969da4abb2b9c0c7ced5dce3eaf1f8ff060d141b000000"
        "212f9d0d")
    ok = icrc(pkt[:-4], False) == pkt[-4:]
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

    sock = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    sock.bind((args.src, 0))
    sport = sock.getsockname()[1]
    first = args.psn
    for i in range(args.count):
        args.psn = (first + i) & 0xffffff
        body = build(args)
        crc = icrc(ipv6_image(args.src, args.dst, sport, len(body) + 4) +
                   body, True)
        if args.bad_icrc:
            crc = bytes(b ^ 0x5a for b in crc)
        sock.sendto(body + crc, (args.dst, ROCE_PORT))
    sock.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
