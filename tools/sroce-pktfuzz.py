#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Fuzz a RoCEv2 receiver with packets a hostile host could send: UDP
datagrams to port 4791 from an ordinary UDP socket bound to a chosen IPv6
source address. Python 3 standard library only.

  sroce-pktfuzz.py --src ADDR --dst ADDR [--seed S] [--count N]
                   [--qpn SPEC]... [--rdma-dev DEV] [--peer-mode] [...]

Classes of packets, picked by a PRNG seeded with --seed: realistic packets
of every opcode with one BTH or extension header field mutated, payload
and pad lengths that disagree with the headers, truncations at and inside
every header, trailing garbage, PSNs around the receiver's window, replayed
READ, FLUSH and atomic requests with bad rkeys, QPNs 0, 1, 0xffffff, live
and random, bad ICRCs, and fully random datagrams.

--peer-mode is for a source address that is the peer of the live QPs: a
packet from there that the receiver would take in sequence may
legitimately change the connection, so in that mode no packet that could
reach a live QP's transport in sequence is sent. A live RC QP gets only
PSNs at least 2^22 + --psn-margin away from the PSNs it had when last
looked at, or duplicates of READ, FLUSH and atomic requests behind them;
UC QPs, QPs not yet connected and QPNs not known to be dead get only
packets the receiver drops before its transport layer (bad header, opcode,
ICRC or P_Key, or an opcode the QP's type does not take). Such packets
are "made safe" from what was drawn: the QPN of a dead QP, a spoiled ICRC
or a foreign P_Key.

--selftest checks the verdicts on hand-made packets, that one seed gives
one packet stream, and that peer mode keeps out of a live QP's window.

Every datagram that reaches a device is dropped there and counted by a
reason. The totals at the end ("# sent N CLASS" lines, "# expect COUNTER
N" lines for the drops decided by the packet alone, with sroce's order of
checks, and a last line "sent N") let a caller match the receiver's
counters against what was sent.
"""

import argparse
import json
import os
import random
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
import rocev2 as w  # noqa: E402

WINDOW = 1 << 22
# sroce gives QPN 1 to the GSI QP and allocates others from 16: these are
# never a QP. 0xffffff is the multicast QPN.
DEAD_QPNS = (0,) + tuple(range(2, 16))
MCAST_QPN = 0xffffff
# QP states in which a QP's PSNs are set and stay where they are going.
CONNECTED = ("RTR", "RTS", "SQD", "SQE", "ERR")
# What a packet becomes at the receiver, decided by the packet alone
# (sroce's order of checks in net.c), and the counter that shows it.
STAGE_COUNTER = {
    "header": "rx_bad_header",
    "opcode": "rx_bad_opcode",
    "icrc": "rx_bad_icrc",
    "pkey": "rx_bad_pkey",
    "no-qp": "rx_no_qp",
}
CLASSES = ("mutate-bth", "mutate-ext", "length", "truncate", "trailing",
           "psn", "replay", "qpn", "bad-icrc", "random")
REPLAYABLE = (0x0c, 0x13, 0x14, 0x1c)
OPCODE_LIST = sorted(w.OPCODES)
# A RoCEv2 CNP (IBTA Annex A17.9): no opcode of the table, but sroce takes
# it for an RC QP, from the QP's peer, and slows the QP down; anything
# after the BTH is its reserved bytes.
CNP = w.Opcode(0x81, "CNP", "RC", (), True)


class LiveQP:
    """A QP of the device under test, as far as the fuzzer knows it."""

    def __init__(self, qpn, qpt=None, state="RTS", rq_psn=None,
                 sq_psn=None):
        self.qpn = qpn
        self.qpt = qpt
        self.state = state
        self.rq_psn = rq_psn
        self.sq_psn = sq_psn

    def takes(self, op):
        """Whether the QP's type takes the opcode (unknown: maybe)."""
        if self.qpt is None:
            return True
        return op.qpt == ("UD" if self.qpt in ("UD", "GSI") else self.qpt)


def parse_qpn(spec):
    """--qpn QPN[:TYPE[:RQ_PSN:SQ_PSN]], TYPE rc, uc or ud."""
    parts = spec.split(":")
    qp = LiveQP(int(parts[0], 0) & w.QPN_MASK)
    if len(parts) > 1:
        qp.qpt = parts[1].upper()
    if len(parts) > 3:
        qp.rq_psn = int(parts[2], 0) & w.PSN_MASK
        qp.sq_psn = int(parts[3], 0) & w.PSN_MASK
    return qp


def rdma_qps(dev, qp_file=None):
    """The QPs of DEV that "rdma -j resource show qp" lists now, or that
    its output in qp_file lists (None while the file is missing or being
    written)."""
    try:
        if qp_file:
            with open(qp_file) as f:
                out = f.read()
        else:
            out = subprocess.run(["rdma", "-j", "resource", "show", "qp"],
                                 capture_output=True, text=True, timeout=30,
                                 check=True).stdout
        if not out.strip():
            return None
        # One JSON array, or one per device with some versions.
        entries, pos, dec = [], 0, json.JSONDecoder()
        while out[pos:].strip():
            pos += len(out[pos:]) - len(out[pos:].lstrip())
            part, pos = dec.raw_decode(out, pos)
            entries += part if isinstance(part, list) else [part]
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    qps = {}
    for e in entries:
        if e.get("ifname") != dev or "lqpn" not in e:
            continue
        qps[e["lqpn"]] = LiveQP(e["lqpn"], e.get("type"),
                                e.get("state", "RESET"), e.get("rq-psn"),
                                e.get("sq-psn"))
    return qps


class Targets:
    """Live QPs: those given, and those of --rdma-dev, looked at again
    every --refresh seconds."""

    def __init__(self, args):
        self.given = {qp.qpn: qp for qp in args.qpn}
        self.dev = args.rdma_dev
        self.qp_file = getattr(args, "qp_file", None)
        self.refresh = args.refresh
        self.qps = dict(self.given)
        self.live = self.live_list()
        self.seen = 0
        self.looked = None
        self.lookups = 0
        self.update()

    def update(self):
        if not self.dev:
            return
        now = time.monotonic()
        if self.looked is not None and now - self.looked < self.refresh:
            return
        self.looked = now
        found = rdma_qps(self.dev, self.qp_file)
        if found is None:
            return
        self.lookups += 1
        self.qps = dict(self.given)
        self.qps.update(found)
        self.live = self.live_list()
        if found:
            self.seen = max(self.seen, max(found))

    def live_list(self):
        """The live QPs but the GSI QP, by QPN."""
        return [self.qps[n] for n in sorted(self.qps) if n != 1]

    def get(self, qpn):
        return self.qps.get(qpn)

    def pick(self, rng):
        """A live QP other than the GSI QP, or None. Short-lived QPs are
        the rule (a test case's), so the newest are the likeliest to be
        there still: most picks are among the last three."""
        live = self.live
        if not live:
            return None
        if rng.random() < 0.7:
            live = live[-3:]
        return rng.choice(live)


def psn_delta(psn, base):
    return (psn - base) & w.PSN_MASK


class Fuzzer:
    """Draws packets of each class; keeps the totals."""

    def __init__(self, args, sender, targets):
        self.args = args
        self.rng = random.Random(args.seed)
        self.sender = sender
        self.targets = targets
        self.mtu = args.mtu
        self.sent = {c: 0 for c in CLASSES}
        self.stages = {}
        self.made_safe = 0
        self.to_live = 0
        self.opcode_turn = 0
        self.log = open(args.log, "w") if args.log else None
        self.makers = [getattr(self, c.replace("-", "_")) for c in CLASSES]

    # --- Drawing the parts of a packet -------------------------------

    def draw_qpn(self):
        rng = self.rng
        r = rng.random()
        live = self.targets.pick(rng)
        if live and r < 0.6:
            return live.qpn
        if r < 0.7:
            return rng.choice((0, 1, MCAST_QPN))
        if r < 0.8 and self.targets.seen:
            # Where the next QPs will be, or are already.
            return (self.targets.seen + rng.randint(1, 3)) & w.QPN_MASK
        if r < 0.9:
            return rng.choice(DEAD_QPNS)
        return rng.getrandbits(24)

    def draw_psn(self, qpn, op, replay=False):
        """A PSN around the receiver's window when it is known."""
        rng = self.rng
        qp = self.targets.get(qpn)
        base = None
        if qp is not None:
            base = qp.sq_psn if op is not None and op.resp else qp.rq_psn
        if base is None:
            return rng.choice((0, 1, w.PSN_MASK, 0x800000, 0x7fffff,
                               rng.getrandbits(24)))
        if replay:
            return (base - rng.randint(1, 64)) & w.PSN_MASK
        margin = self.args.psn_margin
        if self.args.peer_mode:
            d = rng.choice((WINDOW + margin + rng.randint(0, 3),
                            -WINDOW - margin - rng.randint(0, 3),
                            1 << 23,
                            rng.randint(WINDOW + margin,
                                        (1 << 24) - WINDOW - margin)))
        else:
            d = rng.choice((rng.randint(-3, 3), -1, WINDOW - 1, WINDOW,
                            WINDOW + 1, -WINDOW + 1, -WINDOW, -WINDOW - 1,
                            1 << 23, rng.getrandbits(24)))
            if d == 1 << 23:
                return base ^ 0x800000
        return (base + d) & w.PSN_MASK

    def draw_payload_len(self, op):
        rng = self.rng
        if not op.payload:
            return 0
        if op.place in ("first", "middle"):
            return self.mtu
        if op.code == 0x1d:
            return 8
        return rng.choice((0, 1, 3, 4, 8, 64, self.mtu - 1, self.mtu,
                           rng.randint(0, self.mtu)))

    def draw_qkey(self):
        return self.rng.choice((0, 0x11111111, 0x80010001, 0xffffffff,
                                self.rng.getrandbits(32)))

    def ext(self, op, hdr, plen):
        """A plausible extension header of op."""
        rng = self.rng
        if hdr in ("RETH", "AtomicETH"):
            va = rng.choice((0, 0x1000, rng.getrandbits(48) & ~7,
                             rng.getrandbits(64)))
            rkey = rng.getrandbits(32)
        if hdr == "DETH":
            return w.deth(self.draw_qkey(), rng.getrandbits(24))
        if hdr == "FETH":
            return w.feth(rng.choice((0x11, 0x01, 0x10, 0x21, 0x12, 0,
                                      rng.getrandbits(32))))
        if hdr == "RETH":
            if op.code in (0x0c, 0x1c):
                length = rng.choice((0, 1, 64, 4096, 1 << 20,
                                     rng.getrandbits(32)))
            elif op.place == "first":
                length = plen + rng.choice((self.mtu, 2 * self.mtu, 1))
            else:
                length = plen
            return w.reth(va, rkey, length)
        if hdr == "AtomicETH":
            return w.atomiceth(va, rkey, rng.getrandbits(64),
                               rng.getrandbits(64))
        if hdr == "AETH":
            syndrome = rng.choice((0x1f, 0x00, 0x20 | rng.randrange(32),
                                   0x60 | rng.randrange(5),
                                   rng.randrange(256)))
            return w.aeth(syndrome, rng.getrandbits(24))
        if hdr == "AtomicAckETH":
            return w.atomicacketh(rng.getrandbits(64))
        return w.u32(rng.getrandbits(32))

    def realistic(self, op=None, qpn=None, psn=None, replay=False):
        """A well-formed packet without its ICRC, and its opcode."""
        rng = self.rng
        if op is None:
            op = w.OPCODES[rng.choice(OPCODE_LIST)]
        if qpn is None:
            qpn = self.draw_qpn()
        if psn is None:
            psn = self.draw_psn(qpn, op, replay)
        plen = self.draw_payload_len(op)
        pad = -plen % 4
        pkey = rng.choice((0xffff, 0xffff, 0x7fff))
        body = w.bth(op.code, qpn, psn, pad=pad, pkey=pkey,
                     ackreq=rng.random() < 0.3, se=rng.random() < 0.2)
        for hdr in op.hdrs:
            body += self.ext(op, hdr, plen)
        body = bytearray(body)
        body += rng.randbytes(min(plen, 16))
        body += bytes(max(plen - 16, 0) + pad)
        return body, op

    # --- The classes ------------------------------------------------

    def with_icrc(self, body, good):
        crc = self.sender.icrc_of(body)
        if not good:
            how = self.rng.randrange(3)
            crc = bytes((crc[0] ^ (1 << self.rng.randrange(8)),)) + \
                crc[1:] if how == 0 else \
                bytes(4) if how == 1 else \
                self.rng.randbytes(4)
        return bytearray(body) + crc

    def icrc_good(self):
        return self.rng.random() < 0.85

    def mutate_bth(self):
        rng = self.rng
        body, op = self.realistic()
        field = rng.randrange(8)
        if field == 0:
            # Every opcode value in turn.
            body[0] = self.opcode_turn & 0xff
            self.opcode_turn += 1
        elif field == 1:
            body[1] = rng.randrange(256)
        elif field == 2:
            body[1] = (body[1] & 0xf0) | rng.randint(1, 15)     # TVer
        elif field == 3:
            body[2:4] = rng.choice((0, 0x7fff, 0x8000, 0xfffe, 0x1234,
                                    rng.getrandbits(16))).to_bytes(2, "big")
        elif field == 4:
            body[4] = rng.randrange(256)        # FECN, BECN, reserved
        elif field == 5:
            body[5:8] = self.draw_qpn().to_bytes(3, "big")
        elif field == 6:
            body[8] ^= 0x80 if rng.random() < 0.5 else rng.randint(1, 0x7f)
        else:
            body[1] = (body[1] & ~0x30) | (rng.randrange(4) << 4)   # pad
        return self.with_icrc(body, self.icrc_good())

    def mutate_ext(self):
        rng = self.rng
        body, op = self.realistic()
        if len(body) <= w.BTH_LEN:
            body[w.BTH_LEN:] = rng.randbytes(4)
        else:
            end = op.hdr_len if op.hdr_len > w.BTH_LEN else len(body)
            off = rng.randrange(w.BTH_LEN, end)
            if rng.random() < 0.5:
                body[off] ^= 1 << rng.randrange(8)
            else:
                off &= ~3
                n = min(4, len(body) - off)
                body[off:off + n] = rng.choice(
                    (b"\0" * n, b"\xff" * n, b"\x80" + b"\0" * (n - 1),
                     rng.randbytes(n)))
        return self.with_icrc(body, self.icrc_good())

    def length(self):
        rng = self.rng
        body, op = self.realistic()
        how = rng.randrange(4)
        if how == 0 and "RETH" in op.hdrs:
            off = op.offset("RETH") + 12
            body[off:off + 4] = rng.choice(
                (0, 1, self.mtu + 1, 1 << 31, 0xffffffff,
                 rng.getrandbits(32))).to_bytes(4, "big")
        elif how == 1:
            # Payload where none belongs, or more than the MTU.
            extra = rng.choice((1, 4, self.mtu + 4, rng.randint(1, 4096)))
            body += rng.randbytes(extra)
        elif how == 2:
            body[1] = (body[1] & ~0x30) | (rng.randrange(4) << 4)
        else:
            # A payload one byte off the MTU in a FIRST or MIDDLE.
            body += bytes(rng.choice((1, 2, 3, 4)))
        return self.with_icrc(body, self.icrc_good())

    def truncate(self):
        rng = self.rng
        body, op = self.realistic()
        pkt = self.with_icrc(body, True)
        cuts = {0, 1, w.BTH_LEN - 1, w.BTH_LEN, op.hdr_len, op.hdr_len - 1,
                op.hdr_len + 1, len(pkt) - 1, len(pkt) - w.ICRC_LEN,
                rng.randrange(len(pkt))}
        off = w.BTH_LEN
        for hdr in op.hdrs:
            cuts.add(off + rng.randrange(w.HDR_LEN[hdr]))
            off += w.HDR_LEN[hdr]
            cuts.add(off)
        cut = rng.choice(sorted(c for c in cuts if 0 <= c < len(pkt)))
        if rng.random() < 0.3 and cut >= w.BTH_LEN:
            # Cut, then given a good ICRC over what is left.
            return self.with_icrc(pkt[:cut], True)
        return pkt[:cut]

    def trailing(self):
        rng = self.rng
        body, op = self.realistic()
        junk = rng.randbytes(rng.randint(1, 64))
        if rng.random() < 0.5:
            return self.with_icrc(body, True) + junk
        return self.with_icrc(body + junk, True)

    def psn(self):
        live = self.targets.pick(self.rng)
        body, op = self.realistic(qpn=live.qpn if live else None)
        return self.with_icrc(body, self.icrc_good())

    def replay(self):
        rng = self.rng
        live = self.targets.pick(rng)
        op = w.OPCODES[rng.choice(REPLAYABLE)]
        body, op = self.realistic(op=op, qpn=live.qpn if live else None,
                                  replay=rng.random() < 0.7)
        return self.with_icrc(body, True)

    def qpn(self):
        rng = self.rng
        qpn = rng.choice((0, 1, MCAST_QPN, self.draw_qpn()))
        op = None
        if qpn == 1 and rng.random() < 0.5:
            op = w.OPCODES[rng.choice((0x64, 0x65))]
        body, op = self.realistic(op=op, qpn=qpn)
        return self.with_icrc(body, self.icrc_good())

    def bad_icrc(self):
        body, op = self.realistic()
        return self.with_icrc(body, False)

    def random(self):
        rng = self.rng
        n = rng.choice((rng.randint(0, 64), rng.randint(0, 256),
                        rng.randint(0, 1400)))
        body = bytearray(rng.randbytes(n))
        if n and rng.random() < 0.5:
            body[0] = rng.choice(OPCODE_LIST)
            if n > 1:
                body[1] &= 0xf0
        if rng.random() < 0.5:
            return self.with_icrc(body, True)
        return body

    # --- What the receiver will do ----------------------------------

    def classify(self, pkt):
        """The receiver's verdict from the packet alone: a stage of
        STAGE_COUNTER, or "qp" for a packet handed to a QP (or to the
        multicast QPN's groups) with its opcode."""
        if len(pkt) < w.BTH_LEN:
            return "header", None
        op = CNP if pkt[0] == CNP.code else w.OPCODES.get(pkt[0])
        if op is None:
            return "opcode", None
        if pkt[1] & 0x0f or len(pkt) < op.hdr_len:
            return "header", op
        plen = len(pkt) - op.hdr_len - ((pkt[1] >> 4) & 3) - w.ICRC_LEN
        if plen < 0 or (plen and not op.payload):
            return "header", op
        if self.sender.icrc_of(memoryview(pkt)[:-w.ICRC_LEN]) != \
                pkt[-w.ICRC_LEN:]:
            return "icrc", op
        if int.from_bytes(pkt[2:4], "big") & 0x7fff != 0x7fff:
            return "pkey", op
        qpn = int.from_bytes(pkt[5:8], "big")
        if qpn in DEAD_QPNS or qpn == MCAST_QPN:
            # The multicast QPN to a unicast address finds no group.
            return "no-qp", op
        return "qp", op

    def safe(self, pkt, op):
        """Whether a packet handed to a QP is one the mode allows."""
        qpn = int.from_bytes(pkt[5:8], "big")
        psn = int.from_bytes(pkt[9:12], "big")
        qp = self.targets.get(qpn)
        if op.qpt == "UD":
            # No UD QP may take it: the Q_Key must be wrong for all,
            # the GSI QP's included.
            off = op.offset("DETH")
            qkey = int.from_bytes(pkt[off:off + 4], "big")
            return qkey not in self.args.qkey
        if not self.args.peer_mode:
            return True
        if qp is None:
            return False
        if not qp.takes(op):
            return True
        if op is CNP:
            # The peer's CNP is taken, not dropped, whatever its PSN.
            return False
        if qp.qpt != "RC" or qp.state not in CONNECTED:
            return False
        if op.resp and qp.state == "RTR":
            # The send PSN is set on the way to RTS: not known yet.
            return False
        base = qp.sq_psn if op.resp else qp.rq_psn
        if base is None:
            return False
        d = psn_delta(psn, base)
        margin = self.args.psn_margin
        if WINDOW + margin <= d <= (1 << 24) - WINDOW - margin:
            return True
        # A duplicate of a READ, FLUSH or atomic request (bad rkey by
        # construction): behind the expected PSN it stays behind.
        return pkt[0] in REPLAYABLE and (1 << 24) - 64 <= d

    def make_safe(self, pkt, op):
        """Turn a packet the mode does not allow into one the receiver
        drops before its transport layer, keeping the rest of it."""
        rng = self.rng
        body = bytearray(pkt[:-w.ICRC_LEN])
        if op.qpt == "UD" and not self.args.peer_mode:
            off = op.offset("DETH")
            qkey = int.from_bytes(body[off:off + 4], "big")
            while qkey in self.args.qkey:
                qkey = (qkey + 1) & 0xffffffff
            body[off:off + 4] = qkey.to_bytes(4, "big")
            return self.with_icrc(body, True)
        self.made_safe += 1
        how = rng.randrange(3)
        if how == 0:
            body[5:8] = rng.choice(DEAD_QPNS + (MCAST_QPN,)).to_bytes(
                3, "big")
            return self.with_icrc(body, True)
        if how == 1:
            return self.with_icrc(body, False)
        body[2:4] = rng.choice((0x1234, 0x0000, 0x8001)).to_bytes(2, "big")
        return self.with_icrc(body, True)

    # --- Sending ---------------------------------------------------

    def one(self, i):
        self.targets.update()
        k = self.rng.randrange(len(CLASSES))
        cls = CLASSES[k]
        pkt = self.makers[k]()
        stage, op = self.classify(pkt)
        if stage == "qp" and not self.safe(pkt, op):
            pkt = self.make_safe(pkt, op)
            stage, op = self.classify(pkt)
            assert stage != "qp" or self.safe(pkt, op), pkt.hex()
        self.sender.send(pkt)
        self.sent[cls] += 1
        if len(pkt) >= w.BTH_LEN and \
                self.targets.get(int.from_bytes(pkt[5:8], "big")):
            self.to_live += 1
        self.stages[stage] = self.stages.get(stage, 0) + 1
        if self.log:
            self.log.write("%d %s %s %s\n" % (i, cls, stage, pkt.hex()))

    def run(self, count):
        for i in range(count):
            self.one(i)
        if self.log:
            self.log.close()

    def report(self):
        total = sum(self.sent.values())
        for cls in CLASSES:
            print("# sent %d %s" % (self.sent[cls], cls))
        for stage, counter in STAGE_COUNTER.items():
            print("# expect %s %d" % (counter, self.stages.get(stage, 0)))
        print("# handed to a QP %d" % self.stages.get("qp", 0))
        print("# to a live QPN %d" % self.to_live)
        if self.args.peer_mode:
            print("# peer mode: %d made safe, no packet in any live "
                  "QP's window" % self.made_safe)
        if self.targets.dev:
            print("# QP lists of %s read %d times" % (self.targets.dev,
                                                     self.targets.lookups))
        print("sent %d" % total)


class StubSender:
    """A sender that keeps what it is given, for --selftest."""

    def __init__(self):
        self.src, self.dst, self.sport = "2001:db8::3", "2001:db8::1", 4242
        self.packets = []
        self.icrc_of = w.Icrc(self.src, self.dst, self.sport)

    def send(self, datagram):
        self.packets.append(bytes(datagram))


def selftest():
    """Check the verdicts on hand-made packets, that a seed gives the same
    packets, and that peer mode keeps out of a live QP's window."""
    args = argparse.Namespace(seed=5, mtu=1024, log=None, peer_mode=False,
                              psn_margin=1 << 20, qkey=[w.GSI_QKEY],
                              qpn=[parse_qpn("17:rc:100:200")],
                              rdma_dev=None, refresh=1.0)
    bad = []
    fz = Fuzzer(args, StubSender(), Targets(args))
    for code, op in sorted(w.OPCODES.items()):
        body, _ = fz.realistic(op=op, qpn=17, psn=100)
        cases = (("valid", fz.with_icrc(body, True), "qp"),
                 ("bad ICRC", fz.with_icrc(body, False), "icrc"),
                 ("cut", fz.with_icrc(body, True)[:op.hdr_len - 1],
                  "header"))
        for what, pkt, want in cases:
            if fz.classify(pkt)[0] != want:
                bad.append("%s %s" % (op.name, what))
        for off, val, want in ((0, b"\x15", "opcode"), (1, b"\x01", "header"),
                               (2, b"\x12\x34", "pkey"),
                               (5, b"\0\0\0", "no-qp")):
            pkt = bytearray(body)
            pkt[off:off + len(val)] = val
            if off == 1:
                pkt[1] |= body[1] & 0xf0
            if fz.classify(fz.with_icrc(pkt, True))[0] != want:
                bad.append("%s %s" % (op.name, want))
    runs = []
    for _ in range(2):
        fz = Fuzzer(args, StubSender(), Targets(args))
        fz.run(500)
        runs.append(fz.sender.packets)
    if runs[0] != runs[1]:
        bad.append("one seed, two packet streams")
    args.peer_mode = True
    fz = Fuzzer(args, StubSender(), Targets(args))
    fz.run(3000)
    for pkt in fz.sender.packets:
        stage, op = fz.classify(pkt)
        if stage != "qp" or int.from_bytes(pkt[5:8], "big") != 17 or \
                op.qpt != "RC":
            continue
        d = psn_delta(int.from_bytes(pkt[9:12], "big"),
                      200 if op.resp else 100)
        if WINDOW + (1 << 20) <= d <= (1 << 24) - WINDOW - (1 << 20):
            continue
        if pkt[0] in REPLAYABLE and d >= (1 << 24) - 64:
            continue
        bad.append("peer mode sent PSN %+d from the expected" %
                   (d - (1 << 24) if d >= 1 << 23 else d))
    if not w.selftest():
        bad.append("ICRC of a captured packet")
    print("pktfuzz self-test: %s" % ("; ".join(bad[:10]) or "ok"))
    return 1 if bad else 0


def main():
    if sys.argv[1:] == ["--selftest"]:
        return selftest()
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    num = lambda s: int(s, 0)   # noqa: E731
    ap.add_argument("--selftest", action="store_true",
                    help="check the verdicts and the seeding, send nothing")
    ap.add_argument("--src", required=True, help="source IPv6 address")
    ap.add_argument("--dst", required=True, help="destination IPv6 address")
    ap.add_argument("--seed", type=num, default=1)
    ap.add_argument("--count", type=num, default=1000)
    ap.add_argument("--qpn", type=parse_qpn, action="append", default=[],
                    help="a live QP: QPN[:TYPE[:RQ_PSN:SQ_PSN]]")
    ap.add_argument("--rdma-dev", help="take the live QPs of this device "
                    "from 'rdma resource show qp'")
    ap.add_argument("--qp-file", help="with --rdma-dev: read the live QPs "
                    "from this file, which another process rewrites with "
                    "the output of 'rdma -j resource show qp' (one "
                    "process where several fuzzers would each run rdma)")
    ap.add_argument("--refresh", type=float, default=1.0,
                    help="seconds between looks at the live QPs")
    ap.add_argument("--peer-mode", action="store_true",
                    help="--src is the live QPs' peer: nothing in window")
    ap.add_argument("--psn-margin", type=num, default=1 << 20,
                    help="how far a QP's PSNs may move between looks")
    ap.add_argument("--qkey", type=num, action="append",
                    default=[w.GSI_QKEY],
                    help="a Q_Key of a live UD QP, never sent (the GSI "
                    "QP's always counts)")
    ap.add_argument("--mtu", type=num, default=1024)
    ap.add_argument("--log", help="write every packet, in hex, to this file")
    args = ap.parse_args()
    if args.peer_mode and not (args.rdma_dev or args.qpn):
        ap.error("--peer-mode needs the live QPs (--rdma-dev or --qpn)")
    if not 0 <= args.psn_margin < WINDOW:
        ap.error("--psn-margin must be below 2^22")

    sender = w.Sender(args.src, args.dst)
    fuzzer = Fuzzer(args, sender, Targets(args))
    try:
        fuzzer.run(args.count)
    finally:
        sender.close()
        fuzzer.report()
    return 0


if __name__ == "__main__":
    sys.exit(main())
