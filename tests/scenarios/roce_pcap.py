#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""RoCE frames of a capture, checked against the wire format: observe.sh
and roce_v1.sh capture sroce's traffic with tcpdump and ask this tool
whether every frame is what the IBTA's RoCE annexes say, whatever a
dissector makes of it.

  roce_pcap.py PCAP [--tshark FIELDS_FILE] [--expect OPS] [--kinds K]
               [--ecn]

For each Ethernet frame to or from UDP port 4791 (RoCEv2 over IPv4 or
IPv6) or of Ethertype 0x8915 (RoCE v1: a GRH, then the BTH), the tool
parses the BTH, recomputes the invariant CRC from the frame with its own
implementation of the annexes' masking (the variant fields of the IP
header or GRH and of the UDP header, and the BTH's reserved byte, set to
ones, 64 bits of ones in front for the absent LRH) and compares it with
the frame's last four bytes. With --tshark, FIELDS_FILE holds tshark's decoding of the same
capture (opcode, destination QP, PSN and invariant CRC per frame, tab
separated), which must agree with the tool's frame for frame. With --ecn,
the ECN field of RoCEv2 frames: every RC frame ECN-capable (ECT(0), or CE
where a queue marked it), some marked CE, and CNPs (opcode 0x81) present
and not ECN-capable. Prints TAP.
"""

import argparse
import struct
import sys
import zlib

from tap_lib import tap, tap_done

ROCE_PORT = 4791
ETH_P_IBOE = 0x8915
GRH_NEXT_BTH = 0x1b
BTH_LEN = 12
# The congestion notification packet's BTH opcode (Annex A17.9).
OP_CNP = 0x81
ICRC_LEN = 4
# Opcode classes by their low five bits (RC, UC and UD share them).
NAMES = {0x00: "SEND_FIRST", 0x01: "SEND_MIDDLE", 0x02: "SEND_LAST",
         0x04: "SEND_ONLY", 0x06: "WRITE_FIRST", 0x07: "WRITE_MIDDLE",
         0x08: "WRITE_LAST", 0x0a: "WRITE_ONLY", 0x0c: "READ_REQUEST",
         0x0d: "READ_RESPONSE_FIRST", 0x0e: "READ_RESPONSE_MIDDLE",
         0x0f: "READ_RESPONSE_LAST", 0x10: "READ_RESPONSE_ONLY",
         0x11: "ACKNOWLEDGE", 0x12: "ATOMIC_ACKNOWLEDGE",
         0x13: "COMPARE_SWAP", 0x14: "FETCH_ADD"}


def frames(path):
    """The captured frames of a classic pcap file (any byte order),
    Ethernet link type only."""
    with open(path, "rb") as f:
        data = f.read()
    magic = data[:4]
    if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"):
        end = "<"
    elif magic in (b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
        end = ">"
    else:
        raise ValueError("not a pcap file")
    linktype = struct.unpack(end + "I", data[20:24])[0]
    if linktype != 1:
        raise ValueError("link type %d, not Ethernet" % linktype)
    off = 24
    while off + 16 <= len(data):
        incl, orig = struct.unpack(end + "II", data[off + 8:off + 16])
        frame = data[off + 16:off + 16 + incl]
        off += 16 + incl
        yield frame, incl == orig


def roce(frame):
    """(network header, what follows it, kind) of a RoCE frame, kind being
    "v4" or "v6" (RoCEv2: UDP, then the BTH) or "v1" (Ethertype 0x8915: a
    GRH, then the BTH); None for any other frame."""
    eth_type = struct.unpack("!H", frame[12:14])[0]
    l3 = frame[14:]
    if eth_type == ETH_P_IBOE and len(l3) >= 40 and l3[6] == GRH_NEXT_BTH:
        plen = struct.unpack("!H", l3[4:6])[0]
        return l3[:40], l3[40:40 + plen], "v1"
    if eth_type == 0x0800 and len(l3) >= 20 and l3[9] == 17:
        ihl = (l3[0] & 0xf) * 4
        total = struct.unpack("!H", l3[2:4])[0]
        ip, rest, kind = l3[:ihl], l3[ihl:total], "v4"
    elif eth_type == 0x86dd and len(l3) >= 40 and l3[6] == 17:
        plen = struct.unpack("!H", l3[4:6])[0]
        ip, rest, kind = l3[:40], l3[40:40 + plen], "v6"
    else:
        return None
    if len(rest) < 8 or struct.unpack("!H", rest[2:4])[0] != ROCE_PORT:
        return None
    return ip, rest, kind


def icrc(ip, rest, kind):
    """The invariant CRC of a RoCE packet, computed from scratch."""
    ip = bytearray(ip)
    if kind in ("v6", "v1"):
        # Traffic class, flow label and hop limit vary on the way.
        ip[0] |= 0x0f
        ip[1:4] = b"\xff\xff\xff"
        ip[7] = 0xff
    else:
        ip[1] = 0xff            # type of service
        ip[8] = 0xff            # time to live
        ip[10:12] = b"\xff\xff"  # header checksum
    body = bytearray(rest[:-ICRC_LEN])
    bth = 0 if kind == "v1" else 8
    if bth:
        body[6:8] = b"\xff\xff"  # UDP checksum
    body[bth + 4] = 0xff        # BTH reserved byte before the QPN
    return zlib.crc32(b"\xff" * 8 + bytes(ip) + bytes(body)) & 0xffffffff


def parse(frame):
    """A dict describing a RoCEv2 frame, or None."""
    got = roce(frame)
    if not got:
        return None
    ip, rest, kind = got
    off = 0 if kind == "v1" else 8
    if len(rest) < off + BTH_LEN + ICRC_LEN:
        return {"bad": "too short for a BTH and an ICRC"}
    bth = rest[off:off + BTH_LEN]
    if kind == "v4":
        ecn = ip[1] & 3
    else:
        ecn = (struct.unpack("!I", ip[:4])[0] >> 20) & 3
    return {
        "kind": kind,
        "ecn": ecn,
        "opcode": bth[0],
        "pad": (bth[1] >> 4) & 3,
        "tver": bth[1] & 0xf,
        "dqpn": struct.unpack("!I", bth[4:8])[0] & 0xffffff,
        "psn": struct.unpack("!I", bth[8:12])[0] & 0xffffff,
        "icrc": struct.unpack("<I", rest[-ICRC_LEN:])[0],
        # tshark shows the field as its four bytes read in network order.
        "icrc_shown": struct.unpack("!I", rest[-ICRC_LEN:])[0],
        "want": icrc(ip, rest, kind),
    }


def opcode_name(opcode):
    """An opcode's name: its class for RC, UC and UD, or CNP."""
    if opcode == OP_CNP:
        return "CNP"
    return NAMES.get(opcode & 0x1f, "%#x" % opcode)


def check_ecn(pkts):
    """The ECN field of RC frames and of CNPs (RoCEv2 only)."""
    rc = [p for p in pkts if p["opcode"] >> 5 == 0 and p["kind"] != "v1"]
    by = {v: sum(p["ecn"] == v for p in rc) for v in range(4)}
    tap(rc and not by[0] and not by[1],
        "every RC frame ECN-capable: %d ECT(0), %d CE" % (by[2], by[3]),
        "%d Not-ECT, %d ECT(1)" % (by[0], by[1]))
    tap(by[3] > 0, "RC frames marked CE on the wire (%d)" % by[3])
    cnps = [p for p in pkts if p["opcode"] == OP_CNP]
    tap(cnps and all(p["ecn"] == 0 for p in cnps),
        "CNPs on the wire (%d), none ECN-capable" % len(cnps))


def check_tshark(pkts, path):
    """tshark's fields, one line per RoCEv2 frame, against the tool's."""
    with open(path) as f:
        rows = [line.rstrip("\n").split("\t") for line in f if line.strip()]
    bad = []
    if len(rows) != len(pkts):
        bad.append("tshark decoded %d frames, the tool %d" %
                   (len(rows), len(pkts)))
    for i, (row, p) in enumerate(zip(rows, pkts)):
        try:
            got = tuple(int(x, 16 if x.startswith("0x") else 10)
                        for x in row[:4])
        except ValueError:
            bad.append("frame %d: tshark printed %r" % (i + 1, row))
            continue
        want = (p["opcode"], p["dqpn"], p["psn"], p["icrc_shown"])
        if got != want:
            bad.append("frame %d: tshark %s, tool %s" % (i + 1, got, want))
    tap(not bad, "tshark decodes every frame's opcode, QPN, PSN and ICRC "
        "as the tool does (%d frames)" % len(rows), "; ".join(bad[:5]))


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("pcap")
    ap.add_argument("--tshark", help="tshark's fields of the capture")
    ap.add_argument("--expect", default="",
                    help="comma-separated opcode names that must appear")
    ap.add_argument("--ecn", action="store_true",
                    help="RC frames must be ECN-capable, CNPs not, and "
                    "some RC frames must be marked CE")
    ap.add_argument("--kinds", default="",
                    help="comma-separated framings (v4, v6, v1) that must "
                    "appear, and no other")
    args = ap.parse_args()

    pkts, truncated = [], 0
    for frame, whole in frames(args.pcap):
        if not whole:
            truncated += 1
            continue
        p = parse(frame)
        if p:
            pkts.append(p)
    tap(pkts and not truncated, "%d RoCE frames captured whole" % len(pkts),
        "%d truncated" % truncated)
    malformed = [p["bad"] for p in pkts if "bad" in p]
    pkts = [p for p in pkts if "bad" not in p]
    tap(not malformed, "every frame holds a BTH and an ICRC",
        "; ".join(malformed[:5]))
    wrong = [p for p in pkts if p["icrc"] != p["want"]]
    kinds = {k: sum(p["kind"] == k for p in pkts) for k in ("v4", "v6", "v1")}
    tap(not wrong, "the invariant CRC of every frame is right (%d frames: "
        "%d RoCEv2 over IPv4, %d over IPv6, %d RoCE v1)" %
        (len(pkts), kinds["v4"], kinds["v6"], kinds["v1"]),
        "; ".join("opcode %#x psn %d: %#010x, computed %#010x" %
                  (p["opcode"], p["psn"], p["icrc"], p["want"])
                  for p in wrong[:5]))
    tap(all(p["tver"] == 0 for p in pkts),
        "every BTH has transport header version 0")
    if args.kinds:
        want = set(args.kinds.split(","))
        have = {k for k, n in kinds.items() if n}
        tap(have == want, "framings seen: %s" % ", ".join(sorted(have)),
            "wanted %s" % ", ".join(sorted(want)))
    if args.ecn:
        check_ecn(pkts)
    seen = {opcode_name(p["opcode"]) for p in pkts}
    for name in filter(None, args.expect.split(",")):
        tap(name in seen, "%s frames seen" % name, "seen: %s" %
            ", ".join(sorted(seen)))
    if args.tshark:
        check_tshark(pkts, args.tshark)
    return tap_done()


if __name__ == "__main__":
    sys.exit(main())
