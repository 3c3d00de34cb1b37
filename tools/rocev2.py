# SPDX-License-Identifier: GPL-2.0
"""RoCEv2 packets for sroce's user-space tools (sroce-inject.py,
sroce-pktfuzz.py): the IBTA opcode table, header packing, the ICRC and a
sender of UDP datagrams to port 4791. Python 3 standard library only.

The ICRC covers the IP header, so it can be computed in advance only when
every unmasked IP header field is known: over IPv6 they are (traffic class,
flow label and hop limit are masked), over IPv4 the kernel picks the
identification field. The sender therefore takes IPv6 addresses only.
"""

import socket
import struct
import zlib

ROCE_PORT = 4791
BTH_LEN = 12
ICRC_LEN = 4
PSN_MASK = 0xffffff
QPN_MASK = 0xffffff
# The Q_Key of the GSI QP (QP1), IBTA 13.4.7.
GSI_QKEY = 0x80010000
DEFAULT_PKEY = 0xffff

# Extension headers in the order they follow the BTH, with their lengths
# (IBTA 9.3; FETH as IBTA 1.5 places it, before the RETH).
HDR_LEN = {"DETH": 8, "FETH": 4, "RETH": 16, "AtomicETH": 28, "AETH": 4,
           "AtomicAckETH": 8, "ImmDt": 4, "IETH": 4}
HDR_ORDER = ("DETH", "FETH", "RETH", "AtomicETH", "AETH", "AtomicAckETH",
             "ImmDt", "IETH")


class Opcode:
    """One opcode of the table: name, the QP types that use it ("RC",
    "UC", "UD"), its extension headers, whether it carries payload, whether
    a responder sends it, and its place in a message."""

    def __init__(self, code, name, qpt, hdrs, payload, resp=False,
                 place="only"):
        self.code = code
        self.name = name
        self.qpt = qpt
        self.hdrs = tuple(h for h in HDR_ORDER if h in hdrs)
        self.payload = payload
        self.resp = resp
        self.place = place
        self.hdr_len = BTH_LEN + sum(HDR_LEN[h] for h in self.hdrs)

    def offset(self, hdr):
        """Offset of extension header hdr from the start of the BTH."""
        off = BTH_LEN
        for h in self.hdrs:
            if h == hdr:
                return off
            off += HDR_LEN[h]
        raise KeyError(hdr)


def _opcode_table():
    """The opcodes of IBTA 9.2.1 (and 1.5's FLUSH and ATOMIC WRITE) that
    RoCEv2 carries for RC, UC and UD."""
    ops = {}

    def add(code, *args, **kw):
        ops[code] = Opcode(code, *args, **kw)

    for base, t in ((0x00, "RC"), (0x20, "UC")):
        add(base | 0x00, t + "_SEND_FIRST", t, (), True, place="first")
        add(base | 0x01, t + "_SEND_MIDDLE", t, (), True, place="middle")
        add(base | 0x02, t + "_SEND_LAST", t, (), True, place="last")
        add(base | 0x03, t + "_SEND_LAST_IMM", t, ("ImmDt",), True,
            place="last")
        add(base | 0x04, t + "_SEND_ONLY", t, (), True)
        add(base | 0x05, t + "_SEND_ONLY_IMM", t, ("ImmDt",), True)
        add(base | 0x06, t + "_WRITE_FIRST", t, ("RETH",), True,
            place="first")
        add(base | 0x07, t + "_WRITE_MIDDLE", t, (), True, place="middle")
        add(base | 0x08, t + "_WRITE_LAST", t, (), True, place="last")
        add(base | 0x09, t + "_WRITE_LAST_IMM", t, ("ImmDt",), True,
            place="last")
        add(base | 0x0a, t + "_WRITE_ONLY", t, ("RETH",), True)
        add(base | 0x0b, t + "_WRITE_ONLY_IMM", t, ("RETH", "ImmDt"), True)
    add(0x0c, "RC_READ_REQUEST", "RC", ("RETH",), False)
    add(0x0d, "RC_READ_RESPONSE_FIRST", "RC", ("AETH",), True, True, "first")
    add(0x0e, "RC_READ_RESPONSE_MIDDLE", "RC", (), True, True, "middle")
    add(0x0f, "RC_READ_RESPONSE_LAST", "RC", ("AETH",), True, True, "last")
    add(0x10, "RC_READ_RESPONSE_ONLY", "RC", ("AETH",), True, True)
    add(0x11, "RC_ACKNOWLEDGE", "RC", ("AETH",), False, True)
    add(0x12, "RC_ATOMIC_ACKNOWLEDGE", "RC", ("AETH", "AtomicAckETH"), False,
        True)
    add(0x13, "RC_CMP_SWAP", "RC", ("AtomicETH",), False)
    add(0x14, "RC_FETCH_ADD", "RC", ("AtomicETH",), False)
    add(0x16, "RC_SEND_LAST_INV", "RC", ("IETH",), True, place="last")
    add(0x17, "RC_SEND_ONLY_INV", "RC", ("IETH",), True)
    add(0x1c, "RC_FLUSH", "RC", ("FETH", "RETH"), False)
    add(0x1d, "RC_ATOMIC_WRITE", "RC", ("RETH",), True)
    add(0x64, "UD_SEND_ONLY", "UD", ("DETH",), True)
    add(0x65, "UD_SEND_ONLY_IMM", "UD", ("DETH", "ImmDt"), True)
    return ops


OPCODES = _opcode_table()


def bth(opcode, qpn, psn, pad=0, pkey=DEFAULT_PKEY, ackreq=False, se=False,
        mig=False, tver=0, resv8=0):
    """A Base Transport Header (IBTA 9.2)."""
    flags = (0x80 if se else 0) | (0x40 if mig else 0) | \
        ((pad & 3) << 4) | (tver & 0x0f)
    return struct.pack(">BBHII", opcode & 0xff, flags, pkey & 0xffff,
                       ((resv8 & 0xff) << 24) | (qpn & QPN_MASK),
                       (0x80000000 if ackreq else 0) | (psn & PSN_MASK))


def deth(qkey, src_qpn):
    return struct.pack(">II", qkey & 0xffffffff, src_qpn & QPN_MASK)


def feth(bits):
    return struct.pack(">I", bits & 0xffffffff)


def reth(va, rkey, length):
    return struct.pack(">QII", va & (2**64 - 1), rkey & 0xffffffff,
                       length & 0xffffffff)


def atomiceth(va, rkey, swap_add, cmp):
    return struct.pack(">QIQQ", va & (2**64 - 1), rkey & 0xffffffff,
                       swap_add & (2**64 - 1), cmp & (2**64 - 1))


def aeth(syndrome, msn):
    return struct.pack(">I", ((syndrome & 0xff) << 24) | (msn & 0xffffff))


def atomicacketh(orig):
    return struct.pack(">Q", orig & (2**64 - 1))


def u32(value):
    """ImmDt or IETH."""
    return struct.pack(">I", value & 0xffffffff)


def icrc(l3, ipv6):
    """The ICRC of a packet given from its IP header (without options) to
    the end of its pad: CRC-32 over eight 0xff bytes standing for the LRH,
    the IP, UDP and BTH headers with their variant fields set to ones, and
    everything after the BTH; stored little-endian."""
    iplen = 40 if ipv6 else 20
    hdr = bytearray(l3[:iplen + 8 + BTH_LEN])
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
    # BTH: the reserved byte before the QPN (where FECN and BECN live).
    if len(hdr) > iplen + 8 + 4:
        hdr[iplen + 8 + 4] = 0xff
    crc = zlib.crc32(b"\xff" * 8 + bytes(hdr) + bytes(l3[len(hdr):]))
    return struct.pack("<I", crc & 0xffffffff)


def ipv6_image(src, dst, sport, udp_payload_len):
    """The IPv6 and UDP headers the kernel will put in front, as far as
    the ICRC sees them (masked fields left at zero here)."""
    udp_len = 8 + udp_payload_len
    ip = struct.pack(">IHBB", 6 << 28, udp_len, socket.IPPROTO_UDP, 0)
    ip += socket.inet_pton(socket.AF_INET6, src)
    ip += socket.inet_pton(socket.AF_INET6, dst)
    udp = struct.pack(">HHHH", sport, ROCE_PORT, udp_len, 0)
    return ip + udp


class Icrc:
    """ICRCs of packets between one pair of IPv6 addresses and ports,
    fast: the CRC of what comes before the BTH (the eight 0xff bytes and
    the masked IPv6 and UDP headers) depends only on the datagram's
    length, so it is computed once per length and continued over the
    packet. Gives what icrc() over ipv6_image() gives."""

    def __init__(self, src, dst, sport):
        self.src, self.dst, self.sport = src, dst, sport
        self.pre = {}

    def __call__(self, body):
        """The ICRC a packet whose UDP payload is body + ICRC needs."""
        n = len(body)
        pre = self.pre.get(n)
        if pre is None:
            hdr = bytearray(ipv6_image(self.src, self.dst, self.sport,
                                       n + ICRC_LEN))
            hdr[0] |= 0x0f
            hdr[1:4] = b"\xff\xff\xff"
            hdr[7] = 0xff
            hdr[46:48] = b"\xff\xff"
            pre = self.pre[n] = zlib.crc32(b"\xff" * 8 + bytes(hdr))
        if n > 4:
            # The BTH's reserved byte before the QPN counts as ones.
            crc = zlib.crc32(b"\xff", zlib.crc32(body[:4], pre))
            crc = zlib.crc32(memoryview(body)[5:], crc)
        else:
            crc = zlib.crc32(body, pre)
        return struct.pack("<I", crc)


class Sender:
    """An ordinary UDP socket bound to an IPv6 source address, sending
    RoCEv2 datagrams to one destination's port 4791."""

    def __init__(self, src, dst):
        self.src = src
        self.dst = dst
        self.sock = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
        self.sock.bind((src, 0))
        self.sport = self.sock.getsockname()[1]
        self.addr = (dst, ROCE_PORT)
        # The ICRC a packet whose UDP payload is body + ICRC needs.
        self.icrc_of = Icrc(src, dst, self.sport)

    def with_icrc(self, body):
        return body + self.icrc_of(body)

    def send(self, datagram):
        """Send a whole UDP payload, ICRC included (or not), as it is."""
        self.sock.sendto(datagram, self.addr)

    def close(self):
        self.sock.close()


def selftest():
    """Check icrc() on an IPv4 RC SEND_ONLY that rdma_rxe sent."""
    pkt = bytes.fromhex(
        "450000642371400040118af0c6120001c6120002df9412b7005000006530ffff"
        "00000123000000000123456700000011d4c3b2a1030a11181f262d343b424950"
        "575e656c737a81888f969da4abb2b9c0c7ced5dce3eaf1f8ff060d141b000000"
        "212f9d0d")
    return icrc(pkt[:-4], False) == pkt[-4:]
