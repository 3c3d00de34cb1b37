/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * RoCEv2 wire format: the InfiniBand transport headers as they travel in a
 * UDP datagram to port 4791, the opcode table and the invariant CRC.
 *
 * Everything here is a pure function of its arguments: no ib_core state,
 * so the KUnit suites can exercise it directly.
 *
 * Packet layout after the UDP header:
 *
 *	BTH | [DETH] [FETH] [RETH] [AtomicETH] [AETH] [AtomicAckETH] [ImmDt] [IETH]
 *	    | payload | pad (0-3 bytes) | ICRC (4 bytes)
 *
 * The extension headers present are a function of the opcode alone, and
 * always appear in the order listed above.
 */
#ifndef _SROCE_WIRE_H
#define _SROCE_WIRE_H

#include <linux/types.h>
#include <linux/bits.h>
#include <linux/build_bug.h>
#include <asm/byteorder.h>

#define SROCE_UDP_PORT		4791
/* RoCE v1: the GRH's next header value that announces a BTH (IBA 8.3). */
#define SROCE_GRH_NEXT_BTH	0x1b
#define SROCE_PSN_MASK		0xffffff
#define SROCE_QPN_MASK		0xffffff
#define SROCE_MSN_MASK		0xffffff
#define SROCE_ICRC_LEN		4
#define SROCE_DEFAULT_PKEY	0xffff
/* Transport header version: always 0 for the IBA 1.x transport. */
#define SROCE_TVER		0

/**
 * struct sroce_bth - Base Transport Header (IBA 9.2)
 * @opcode: transport service (high 3 bits) and operation (low 5 bits)
 * @flags: SE (bit 7), MigReq (bit 6), PadCnt (bits 5-4), TVer (bits 3-0)
 * @pkey: partition key
 * @dqpn: FECN (bit 31), BECN (bit 30), reserved, destination QP (bits 23-0)
 * @apsn: AckReq (bit 31), reserved, packet sequence number (bits 23-0)
 */
struct sroce_bth {
	u8	opcode;
	u8	flags;
	__be16	pkey;
	__be32	dqpn;
	__be32	apsn;
};

#define SROCE_BTH_SE		BIT(7)
#define SROCE_BTH_MIG		BIT(6)
#define SROCE_BTH_PAD_SHIFT	4
#define SROCE_BTH_PAD_MASK	(3 << SROCE_BTH_PAD_SHIFT)
#define SROCE_BTH_TVER_MASK	0x0f
#define SROCE_BTH_FECN		BIT(31)
#define SROCE_BTH_BECN		BIT(30)
#define SROCE_BTH_ACKREQ	BIT(31)

/**
 * struct sroce_reth - RDMA Extended Transport Header (IBA 9.3.3)
 * @va: remote virtual address
 * @rkey: remote key
 * @len: DMA length of the whole message
 */
struct sroce_reth {
	__be64	va;
	__be32	rkey;
	__be32	len;
} __packed;

/**
 * struct sroce_aeth - ACK Extended Transport Header (IBA 9.3.5)
 * @smsn: syndrome (bits 31-24) and message sequence number (bits 23-0)
 */
struct sroce_aeth {
	__be32	smsn;
};

/**
 * struct sroce_deth - Datagram Extended Transport Header (IBA 9.3.2)
 * @qkey: queue key
 * @sqpn: reserved (bits 31-24) and source QP number (bits 23-0)
 */
struct sroce_deth {
	__be32	qkey;
	__be32	sqpn;
};

/**
 * struct sroce_atmeth - Atomic Extended Transport Header (IBA 9.3.4)
 * @va: remote virtual address, 8-byte aligned
 * @rkey: remote key
 * @swap_add: swap value (CmpSwap) or addend (FetchAdd)
 * @cmp: compare value (CmpSwap only)
 */
struct sroce_atmeth {
	__be64	va;
	__be32	rkey;
	__be64	swap_add;
	__be64	cmp;
} __packed;

/**
 * struct sroce_atmack - Atomic Acknowledge Extended Transport Header
 * @orig: the value at the target address before the atomic operation
 */
struct sroce_atmack {
	__be64	orig;
} __packed;

/**
 * struct sroce_immdt - Immediate Data Extended Transport Header
 * @imm: immediate data, opaque to the transport
 */
struct sroce_immdt {
	__be32	imm;
};

/**
 * struct sroce_ieth - Invalidate Extended Transport Header
 * @rkey: the remote key the responder invalidates
 */
struct sroce_ieth {
	__be32	rkey;
};

/**
 * struct sroce_feth - FLUSH Extended Transport Header (IBA 1.5, 9.3.6)
 * @bits: reserved (bits 31-6), selectivity level (bits 5-4), placement
 *	type (bits 3-0)
 */
struct sroce_feth {
	__be32	bits;
};

#define SROCE_FETH_PLT_MASK	0x0f
#define SROCE_FETH_SEL_SHIFT	4
#define SROCE_FETH_SEL_MASK	0x30
/* Placement types, a mask: where the data must have reached. */
#define SROCE_FLUSH_GLOBAL	0x1	/* globally visible */
#define SROCE_FLUSH_PERSISTENT	0x2	/* persistent memory */
/* Selectivity levels: what the FLUSH covers. */
#define SROCE_FLUSH_RANGE	0	/* the RETH's range of the region */
#define SROCE_FLUSH_MR		1	/* the whole region or window */

static inline void sroce_wire_layout_checks(void)
{
	BUILD_BUG_ON(sizeof(struct sroce_bth) != 12);
	BUILD_BUG_ON(sizeof(struct sroce_reth) != 16);
	BUILD_BUG_ON(sizeof(struct sroce_aeth) != 4);
	BUILD_BUG_ON(sizeof(struct sroce_deth) != 8);
	BUILD_BUG_ON(sizeof(struct sroce_atmeth) != 28);
	BUILD_BUG_ON(sizeof(struct sroce_atmack) != 8);
	BUILD_BUG_ON(sizeof(struct sroce_immdt) != 4);
	BUILD_BUG_ON(sizeof(struct sroce_ieth) != 4);
	BUILD_BUG_ON(sizeof(struct sroce_feth) != 4);
}

/* AETH syndromes (IBA 9.7.5.1.1): the top three bits select the kind. */
#define SROCE_AETH_KIND_MASK	0xe0
#define SROCE_AETH_ACK		0x00	/* low 5 bits: credit count */
#define SROCE_AETH_RNR_NAK	0x20	/* low 5 bits: RNR timer code */
#define SROCE_AETH_NAK		0x60	/* low 5 bits: NAK code below */
#define SROCE_AETH_VALUE_MASK	0x1f

#define SROCE_NAK_PSN_SEQ_ERR	0
#define SROCE_NAK_INVALID_REQ	1
#define SROCE_NAK_REM_ACCESS	2
#define SROCE_NAK_REM_OP_ERR	3
#define SROCE_NAK_INV_RD_REQ	4

/* Credit count meaning "no credits advertised" (end-to-end flow control off). */
#define SROCE_AETH_CREDIT_INVALID	0x1f

/* Base transport opcodes (IBA Table 38), with the transport in bits 7-5. */
enum sroce_opcode {
	SROCE_OP_RC			= 0x00,
	SROCE_OP_UC			= 0x20,
	SROCE_OP_UD			= 0x60,

	SROCE_OP_SEND_FIRST		= 0x00,
	SROCE_OP_SEND_MIDDLE		= 0x01,
	SROCE_OP_SEND_LAST		= 0x02,
	SROCE_OP_SEND_LAST_IMM		= 0x03,
	SROCE_OP_SEND_ONLY		= 0x04,
	SROCE_OP_SEND_ONLY_IMM		= 0x05,
	SROCE_OP_WRITE_FIRST		= 0x06,
	SROCE_OP_WRITE_MIDDLE		= 0x07,
	SROCE_OP_WRITE_LAST		= 0x08,
	SROCE_OP_WRITE_LAST_IMM		= 0x09,
	SROCE_OP_WRITE_ONLY		= 0x0a,
	SROCE_OP_WRITE_ONLY_IMM		= 0x0b,
	SROCE_OP_READ_REQ		= 0x0c,
	SROCE_OP_READ_RESP_FIRST	= 0x0d,
	SROCE_OP_READ_RESP_MIDDLE	= 0x0e,
	SROCE_OP_READ_RESP_LAST		= 0x0f,
	SROCE_OP_READ_RESP_ONLY		= 0x10,
	SROCE_OP_ACK			= 0x11,
	SROCE_OP_ATOMIC_ACK		= 0x12,
	SROCE_OP_CMP_SWAP		= 0x13,
	SROCE_OP_FETCH_ADD		= 0x14,
	SROCE_OP_SEND_LAST_INV		= 0x16,
	SROCE_OP_SEND_ONLY_INV		= 0x17,
	SROCE_OP_FLUSH			= 0x1c,
	SROCE_OP_ATOMIC_WRITE		= 0x1d,

	/*
	 * RoCEv2 Congestion Notification Packet (IBTA Annex A17.9): a BTH,
	 * 16 reserved bytes and the ICRC, outside the opcode table since
	 * no transport service carries it.
	 */
	SROCE_OP_CNP			= 0x81,
};

#define SROCE_OP_TRANSPORT_MASK	0xe0
#define SROCE_OP_OPERATION_MASK	0x1f

/* Header bits in struct sroce_opcode_info.hdrs, in their wire order. */
enum sroce_hdr {
	SROCE_HDR_DETH,
	SROCE_HDR_FETH,
	SROCE_HDR_RETH,
	SROCE_HDR_ATMETH,
	SROCE_HDR_AETH,
	SROCE_HDR_ATMACK,
	SROCE_HDR_IMMDT,
	SROCE_HDR_IETH,
	SROCE_HDR_COUNT,
};

/* Classification bits in struct sroce_opcode_info.flags. */
#define SROCE_OPF_REQ		BIT(0)	/* sent by a requester */
#define SROCE_OPF_RESP		BIT(1)	/* sent by a responder */
#define SROCE_OPF_PAYLOAD	BIT(2)	/* may carry payload */
#define SROCE_OPF_FIRST		BIT(3)	/* first packet of a multi-packet message */
#define SROCE_OPF_MIDDLE	BIT(4)
#define SROCE_OPF_LAST		BIT(5)
#define SROCE_OPF_ONLY		BIT(6)	/* the whole message in one packet */
#define SROCE_OPF_SEND		BIT(7)	/* consumes a receive WQE */
#define SROCE_OPF_WRITE		BIT(8)
#define SROCE_OPF_READ		BIT(9)	/* READ request */
#define SROCE_OPF_ATOMIC	BIT(10)	/* CmpSwap or FetchAdd request */
#define SROCE_OPF_IMM		BIT(11)	/* carries ImmDt */
#define SROCE_OPF_INV		BIT(12)	/* carries IETH */
#define SROCE_OPF_READ_RESP	BIT(13)
#define SROCE_OPF_ACK		BIT(14)	/* ACK or atomic ACK */
#define SROCE_OPF_FLUSH		BIT(15)
#define SROCE_OPF_ATOMIC_WRITE	BIT(16)

/* QP types an opcode is valid for, in struct sroce_opcode_info.qpts. */
#define SROCE_QPT_RC		BIT(0)
#define SROCE_QPT_UC		BIT(1)
#define SROCE_QPT_UD		BIT(2)

/**
 * struct sroce_opcode_info - what the wire layer knows about one opcode
 * @name: printable name, NULL for an opcode sroce does not speak
 * @flags: SROCE_OPF_* classification
 * @hdrs: bit n set when header n of enum sroce_hdr follows the BTH
 * @qpts: SROCE_QPT_* types the opcode belongs to
 * @hdr_len: bytes from the start of the BTH to the payload
 * @offset: byte offset from the start of the BTH of each present header,
 *	0 for an absent one
 *
 * @hdr_len and @offset are derived by sroce_wire_init().
 */
struct sroce_opcode_info {
	const char	*name;
	u32		flags;
	u8		hdrs;
	u8		qpts;
	u8		hdr_len;
	u8		offset[SROCE_HDR_COUNT];
};

extern struct sroce_opcode_info sroce_opcodes[256];

void sroce_wire_init(void);

/**
 * sroce_opcode_get() - look up an opcode
 * @opcode: the BTH opcode byte, untrusted
 *
 * Return: the opcode's description, or NULL when sroce does not speak it.
 */
static inline const struct sroce_opcode_info *sroce_opcode_get(u8 opcode)
{
	const struct sroce_opcode_info *info = &sroce_opcodes[opcode];

	return info->name ? info : NULL;
}

/**
 * sroce_hdr_len() - length of one extension header
 * @hdr: the header
 *
 * Return: its length on the wire in bytes.
 */
unsigned int sroce_hdr_len(enum sroce_hdr hdr);

/* 24-bit sequence arithmetic (IBA 9.7.1): PSN and MSN wrap at 2^24. */
static inline u32 sroce_psn_add(u32 psn, u32 n)
{
	return (psn + n) & SROCE_PSN_MASK;
}

/**
 * sroce_psn_diff() - signed distance from @b to @a in the 24-bit PSN space
 * @a: a PSN
 * @b: another PSN
 *
 * Return: a - b as a value in [-2^23, 2^23): negative when @a is before @b.
 */
static inline s32 sroce_psn_diff(u32 a, u32 b)
{
	return (s32)((a - b) << 8) >> 8;
}

/* BTH field accessors: packing is the only place byte order is handled. */

/**
 * struct sroce_bth_fields - the BTH in host order
 * @opcode: opcode byte
 * @se: solicited event
 * @mig: migration request
 * @pad: pad count, 0-3
 * @tver: transport header version
 * @pkey: partition key
 * @fecn: forward explicit congestion notification
 * @becn: backward explicit congestion notification
 * @dqpn: destination QP number, 24 bits
 * @ackreq: acknowledge request
 * @psn: packet sequence number, 24 bits
 */
struct sroce_bth_fields {
	u8	opcode;
	bool	se;
	bool	mig;
	u8	pad;
	u8	tver;
	u16	pkey;
	bool	fecn;
	bool	becn;
	u32	dqpn;
	bool	ackreq;
	u32	psn;
};

void sroce_bth_pack(struct sroce_bth *bth, const struct sroce_bth_fields *f);
void sroce_bth_unpack(const struct sroce_bth *bth, struct sroce_bth_fields *f);

static inline u8 sroce_bth_pad(const struct sroce_bth *bth)
{
	return (bth->flags & SROCE_BTH_PAD_MASK) >> SROCE_BTH_PAD_SHIFT;
}

static inline u32 sroce_bth_qpn(const struct sroce_bth *bth)
{
	return be32_to_cpu(bth->dqpn) & SROCE_QPN_MASK;
}

static inline u32 sroce_bth_psn(const struct sroce_bth *bth)
{
	return be32_to_cpu(bth->apsn) & SROCE_PSN_MASK;
}

static inline bool sroce_bth_ackreq(const struct sroce_bth *bth)
{
	return be32_to_cpu(bth->apsn) & SROCE_BTH_ACKREQ;
}

static inline void sroce_aeth_pack(struct sroce_aeth *aeth, u8 syndrome, u32 msn)
{
	aeth->smsn = cpu_to_be32((u32)syndrome << 24 | (msn & SROCE_MSN_MASK));
}

static inline u8 sroce_aeth_syndrome(const struct sroce_aeth *aeth)
{
	return be32_to_cpu(aeth->smsn) >> 24;
}

static inline u32 sroce_aeth_msn(const struct sroce_aeth *aeth)
{
	return be32_to_cpu(aeth->smsn) & SROCE_MSN_MASK;
}

static inline void sroce_deth_pack(struct sroce_deth *deth, u32 qkey, u32 sqpn)
{
	deth->qkey = cpu_to_be32(qkey);
	deth->sqpn = cpu_to_be32(sqpn & SROCE_QPN_MASK);
}

static inline u32 sroce_deth_sqpn(const struct sroce_deth *deth)
{
	return be32_to_cpu(deth->sqpn) & SROCE_QPN_MASK;
}

static inline void sroce_reth_pack(struct sroce_reth *reth, u64 va, u32 rkey,
				   u32 len)
{
	reth->va = cpu_to_be64(va);
	reth->rkey = cpu_to_be32(rkey);
	reth->len = cpu_to_be32(len);
}

static inline void sroce_feth_pack(struct sroce_feth *feth, u8 type, u8 level)
{
	feth->bits = cpu_to_be32(((level << SROCE_FETH_SEL_SHIFT) &
				  SROCE_FETH_SEL_MASK) |
				 (type & SROCE_FETH_PLT_MASK));
}

static inline void sroce_atmeth_pack(struct sroce_atmeth *atm, u64 va, u32 rkey,
				     u64 swap_add, u64 cmp)
{
	atm->va = cpu_to_be64(va);
	atm->rkey = cpu_to_be32(rkey);
	atm->swap_add = cpu_to_be64(swap_add);
	atm->cmp = cpu_to_be64(cmp);
}

/*
 * Invariant CRC (IBTA Annex A17.3.3): CRC-32 (IEEE 802.3, reflected) seeded
 * with all ones, run over
 *
 *	8 bytes of 0xff standing in for the masked LRH,
 *	the IP header with IPv4 TOS, TTL and header checksum, or IPv6 traffic
 *	    class, flow label and hop limit, replaced by all ones,
 *	the UDP header with its checksum replaced by all ones,
 *	the BTH with its FECN/BECN/reserved byte (byte 4) replaced by all ones,
 *	the extension headers, payload and pad, unmasked,
 *
 * then inverted. The result travels in little-endian byte order, the order
 * every RoCEv2 implementation puts it on the wire.
 */

/**
 * sroce_icrc_hdr() - start an ICRC over the masked network headers
 * @l3: the IPv4 (without options) or IPv6 header; the UDP header and the
 *	BTH follow it contiguously
 * @ipv6: true when @l3 is an IPv6 header
 *
 * Return: the running CRC, to be continued by sroce_icrc_update() over the
 * bytes after the BTH and finished by sroce_icrc_final().
 */
u32 sroce_icrc_hdr(const void *l3, bool ipv6);

/**
 * sroce_icrc_hdr_grh() - start an ICRC over a RoCE v1 packet's GRH and BTH
 * @grh: the GRH (laid out as an IPv6 header); the BTH follows it
 *
 * RoCE v1 carries the BTH right after the GRH, with no IP or UDP header;
 * the GRH's traffic class, flow label and hop limit are masked as an IPv6
 * header's are.
 *
 * Return: as sroce_icrc_hdr().
 */
u32 sroce_icrc_hdr_grh(const void *grh);

/**
 * sroce_icrc_update() - continue an ICRC over unmasked bytes
 * @crc: the running CRC
 * @data: the bytes
 * @len: their count
 *
 * Return: the running CRC.
 */
u32 sroce_icrc_update(u32 crc, const void *data, size_t len);

/**
 * sroce_icrc_copy() - copy bytes and continue an ICRC over them
 * @crc: the running CRC
 * @dst: where the bytes go
 * @src: the bytes; must not overlap @dst
 * @len: their count
 *
 * One pass over the bytes where the CRC is table-driven; a copy, then
 * sroce_icrc_update() over it, where the crypto API's driver is in use.
 *
 * Return: the running CRC, as sroce_icrc_update() over @src would give.
 */
u32 sroce_icrc_copy(u32 crc, void *dst, const void *src, size_t len);

/**
 * sroce_icrc_combine() - continue an ICRC over bytes whose CRC is known
 * @crc: the running CRC before the bytes
 * @part_crc: the bytes' CRC, sroce_icrc_update() or sroce_icrc_copy()
 *	started from 0
 * @part_len: their count
 *
 * Lets a sender compute a payload's CRC as it copies the payload in,
 * before the headers in front of it are final.
 *
 * Return: the running CRC, as sroce_icrc_update(@crc) over the bytes would
 * give.
 */
u32 sroce_icrc_combine(u32 crc, u32 part_crc, u32 part_len);

struct sk_buff;
u32 sroce_icrc_skb(u32 crc, struct sk_buff *skb, unsigned int offset,
		   unsigned int len);
u32 sroce_icrc_copy_skb(u32 crc, void *dst, struct sk_buff *skb,
			unsigned int offset, unsigned int len);

#if IS_ENABLED(CONFIG_KUNIT)
/* Each software CRC alone, whichever sroce_icrc_init() chose: for tests. */
u32 sroce_crc_tables(u32 crc, const u8 *p, size_t len);
u32 sroce_crc_tables_copy(u32 crc, u8 *d, const u8 *p, size_t len);
u32 sroce_crc_fold_update(u32 crc, const void *p, size_t len);
u32 sroce_crc_fold_copy(u32 crc, void *d, const void *p, size_t len);
#endif

/**
 * sroce_icrc_init() - choose how sroce_icrc_update() computes the CRC
 *
 * Chooses sroce's software CRC, the fold or the tables, and whether the
 * crypto API's "crc32" replaces it, that only where it computes the same
 * CRC as crc32_le(). Each choice goes to the faster in a timed test unless
 * the icrc_fold or icrc_accel module parameter sets it.
 *
 * Context: module init, before any packet is built or checked.
 */
void sroce_icrc_init(void);

/**
 * sroce_icrc_exit() - release what sroce_icrc_init() took
 *
 * Context: module exit, after the last packet.
 */
void sroce_icrc_exit(void);

/**
 * sroce_icrc_final() - finish an ICRC
 * @crc: the running CRC
 *
 * Return: the ICRC as it is stored in the packet.
 */
static inline __le32 sroce_icrc_final(u32 crc)
{
	return cpu_to_le32(~crc);
}

/**
 * sroce_icrc_packet() - ICRC of a contiguous packet
 * @l3: the IPv4 (without options) or IPv6 header
 * @ipv6: true when @l3 is an IPv6 header
 * @len: bytes from @l3 to the end of the pad, the ICRC excluded
 *
 * Return: the ICRC as it is stored in the packet.
 */
__le32 sroce_icrc_packet(const void *l3, bool ipv6, size_t len);

/**
 * sroce_icrc_packet_grh() - ICRC of a contiguous RoCE v1 packet
 * @grh: the GRH
 * @len: bytes from @grh to the end of the pad, the ICRC excluded
 *
 * Return: the ICRC as it is stored in the packet.
 */
__le32 sroce_icrc_packet_grh(const void *grh, size_t len);

#endif /* _SROCE_WIRE_H */
