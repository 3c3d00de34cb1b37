// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RoCEv2 wire format: the opcode table, header packing and the ICRC.
 */

#include <linux/crc32.h>
#include <linux/export.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/string.h>
#include <linux/udp.h>

#include <sroce/wire.h>
#include "compat.h"

#define BTH_LEN		sizeof(struct sroce_bth)
#define DETH_LEN	sizeof(struct sroce_deth)
#define RETH_LEN	sizeof(struct sroce_reth)
#define FETH_LEN	sizeof(struct sroce_feth)
#define ATMETH_LEN	sizeof(struct sroce_atmeth)
#define AETH_LEN	sizeof(struct sroce_aeth)
#define ATMACK_LEN	sizeof(struct sroce_atmack)
#define IMMDT_LEN	sizeof(struct sroce_immdt)
#define IETH_LEN	sizeof(struct sroce_ieth)

#define DETH	BIT(SROCE_HDR_DETH)
#define RETH	BIT(SROCE_HDR_RETH)
#define FETH	BIT(SROCE_HDR_FETH)
#define ATMETH	BIT(SROCE_HDR_ATMETH)
#define AETH	BIT(SROCE_HDR_AETH)
#define ATMACK	BIT(SROCE_HDR_ATMACK)
#define IMMDT	BIT(SROCE_HDR_IMMDT)
#define IETH	BIT(SROCE_HDR_IETH)

/* Bytes the headers before header @n take, given the header set @h. */
#define LEN_IF(h, bit, len)	(((h) & (bit)) ? (len) : 0)
#define BEFORE_RETH(h)		(BTH_LEN + LEN_IF(h, DETH, DETH_LEN))
#define BEFORE_FETH(h)		(BEFORE_RETH(h) + LEN_IF(h, RETH, RETH_LEN))
#define BEFORE_ATMETH(h)	(BEFORE_FETH(h) + LEN_IF(h, FETH, FETH_LEN))
#define BEFORE_AETH(h)		(BEFORE_ATMETH(h) + LEN_IF(h, ATMETH, ATMETH_LEN))
#define BEFORE_ATMACK(h)	(BEFORE_AETH(h) + LEN_IF(h, AETH, AETH_LEN))
#define BEFORE_IMMDT(h)		(BEFORE_ATMACK(h) + LEN_IF(h, ATMACK, ATMACK_LEN))
#define BEFORE_IETH(h)		(BEFORE_IMMDT(h) + LEN_IF(h, IMMDT, IMMDT_LEN))
#define HDRS_LEN(h)		(BEFORE_IETH(h) + LEN_IF(h, IETH, IETH_LEN))

#define OP(_opcode, _name, _qpts, _flags, _hdrs)			\
	[_opcode] = {							\
		.name = _name,						\
		.flags = _flags,					\
		.hdrs = _hdrs,						\
		.qpts = _qpts,						\
		.hdr_len = HDRS_LEN(_hdrs),				\
		.offset = {						\
			[SROCE_HDR_DETH] = LEN_IF(_hdrs, DETH, BTH_LEN), \
			[SROCE_HDR_RETH] = LEN_IF(_hdrs, RETH, BEFORE_RETH(_hdrs)), \
			[SROCE_HDR_FETH] = LEN_IF(_hdrs, FETH, BEFORE_FETH(_hdrs)), \
			[SROCE_HDR_ATMETH] = LEN_IF(_hdrs, ATMETH, BEFORE_ATMETH(_hdrs)), \
			[SROCE_HDR_AETH] = LEN_IF(_hdrs, AETH, BEFORE_AETH(_hdrs)), \
			[SROCE_HDR_ATMACK] = LEN_IF(_hdrs, ATMACK, BEFORE_ATMACK(_hdrs)), \
			[SROCE_HDR_IMMDT] = LEN_IF(_hdrs, IMMDT, BEFORE_IMMDT(_hdrs)), \
			[SROCE_HDR_IETH] = LEN_IF(_hdrs, IETH, BEFORE_IETH(_hdrs)), \
		},							\
	}

#define F_REQ		SROCE_OPF_REQ
#define F_RESP		SROCE_OPF_RESP
#define F_PAYLOAD		SROCE_OPF_PAYLOAD
#define F_SEND		(SROCE_OPF_SEND | F_REQ | F_PAYLOAD)
#define F_WRITE		(SROCE_OPF_WRITE | F_REQ | F_PAYLOAD)
#define F_READ_RESP	(SROCE_OPF_READ_RESP | F_RESP | F_PAYLOAD)
#define F_FIRST		SROCE_OPF_FIRST
#define F_MIDDLE		SROCE_OPF_MIDDLE
#define F_LAST		SROCE_OPF_LAST
#define F_ONLY		SROCE_OPF_ONLY
#define F_IMM		SROCE_OPF_IMM
#define F_INV		SROCE_OPF_INV

#define RC		SROCE_QPT_RC
#define UC		SROCE_QPT_UC
#define UD		SROCE_QPT_UD

/* F_SEND and RDMA F_WRITE: the same operations for RC (0x00) and UC (0x20). */
#define SEND_WRITE_OPS(t, qpt, pfx)					\
	OP(t | SROCE_OP_SEND_FIRST, pfx "_SEND_FIRST", qpt, F_SEND | F_FIRST, 0), \
	OP(t | SROCE_OP_SEND_MIDDLE, pfx "_SEND_MIDDLE", qpt, F_SEND | F_MIDDLE, 0), \
	OP(t | SROCE_OP_SEND_LAST, pfx "_SEND_LAST", qpt, F_SEND | F_LAST, 0), \
	OP(t | SROCE_OP_SEND_LAST_IMM, pfx "_SEND_LAST_WITH_IMMEDIATE", qpt, \
	   F_SEND | F_LAST | F_IMM, IMMDT),					\
	OP(t | SROCE_OP_SEND_ONLY, pfx "_SEND_ONLY", qpt, F_SEND | F_ONLY, 0), \
	OP(t | SROCE_OP_SEND_ONLY_IMM, pfx "_SEND_ONLY_WITH_IMMEDIATE", qpt, \
	   F_SEND | F_ONLY | F_IMM, IMMDT),					\
	OP(t | SROCE_OP_WRITE_FIRST, pfx "_RDMA_WRITE_FIRST", qpt,	\
	   F_WRITE | F_FIRST, RETH),					\
	OP(t | SROCE_OP_WRITE_MIDDLE, pfx "_RDMA_WRITE_MIDDLE", qpt,	\
	   F_WRITE | F_MIDDLE, 0),						\
	OP(t | SROCE_OP_WRITE_LAST, pfx "_RDMA_WRITE_LAST", qpt,	\
	   F_WRITE | F_LAST, 0),						\
	OP(t | SROCE_OP_WRITE_LAST_IMM, pfx "_RDMA_WRITE_LAST_WITH_IMMEDIATE", \
	   qpt, F_WRITE | F_LAST | F_IMM, IMMDT),				\
	OP(t | SROCE_OP_WRITE_ONLY, pfx "_RDMA_WRITE_ONLY", qpt,	\
	   F_WRITE | F_ONLY, RETH),						\
	OP(t | SROCE_OP_WRITE_ONLY_IMM, pfx "_RDMA_WRITE_ONLY_WITH_IMMEDIATE", \
	   qpt, F_WRITE | F_ONLY | F_IMM, RETH | IMMDT)

const struct sroce_opcode_info sroce_opcodes[256] = {
	SEND_WRITE_OPS(SROCE_OP_RC, RC, "RC"),
	OP(SROCE_OP_READ_REQ, "RC_RDMA_READ_REQUEST", RC,
	   SROCE_OPF_READ | F_REQ | F_ONLY, RETH),
	OP(SROCE_OP_READ_RESP_FIRST, "RC_RDMA_READ_RESPONSE_FIRST", RC,
	   F_READ_RESP | F_FIRST, AETH),
	OP(SROCE_OP_READ_RESP_MIDDLE, "RC_RDMA_READ_RESPONSE_MIDDLE", RC,
	   F_READ_RESP | F_MIDDLE, 0),
	OP(SROCE_OP_READ_RESP_LAST, "RC_RDMA_READ_RESPONSE_LAST", RC,
	   F_READ_RESP | F_LAST, AETH),
	OP(SROCE_OP_READ_RESP_ONLY, "RC_RDMA_READ_RESPONSE_ONLY", RC,
	   F_READ_RESP | F_ONLY, AETH),
	OP(SROCE_OP_ACK, "RC_ACKNOWLEDGE", RC,
	   SROCE_OPF_ACK | F_RESP | F_ONLY, AETH),
	OP(SROCE_OP_ATOMIC_ACK, "RC_ATOMIC_ACKNOWLEDGE", RC,
	   SROCE_OPF_ACK | F_RESP | F_ONLY, AETH | ATMACK),
	OP(SROCE_OP_CMP_SWAP, "RC_CMP_SWAP", RC,
	   SROCE_OPF_ATOMIC | F_REQ | F_ONLY, ATMETH),
	OP(SROCE_OP_FETCH_ADD, "RC_FETCH_ADD", RC,
	   SROCE_OPF_ATOMIC | F_REQ | F_ONLY, ATMETH),
	OP(SROCE_OP_SEND_LAST_INV, "RC_SEND_LAST_WITH_INVALIDATE", RC,
	   F_SEND | F_LAST | F_INV, IETH),
	OP(SROCE_OP_SEND_ONLY_INV, "RC_SEND_ONLY_WITH_INVALIDATE", RC,
	   F_SEND | F_ONLY | F_INV, IETH),
	OP(SROCE_OP_FLUSH, "RC_FLUSH", RC,
	   SROCE_OPF_FLUSH | F_REQ | F_ONLY, FETH | RETH),
	OP(SROCE_OP_ATOMIC_WRITE, "RC_ATOMIC_WRITE", RC,
	   SROCE_OPF_ATOMIC_WRITE | F_REQ | F_PAYLOAD | F_ONLY, RETH),

	SEND_WRITE_OPS(SROCE_OP_UC, UC, "UC"),

	OP(SROCE_OP_UD | SROCE_OP_SEND_ONLY, "UD_SEND_ONLY", UD,
	   F_SEND | F_ONLY, DETH),
	OP(SROCE_OP_UD | SROCE_OP_SEND_ONLY_IMM, "UD_SEND_ONLY_WITH_IMMEDIATE",
	   UD, F_SEND | F_ONLY | F_IMM, DETH | IMMDT),
};
SROCE_EXPORT_FOR_KUNIT(sroce_opcodes);

static const u8 sroce_hdr_lens[SROCE_HDR_COUNT] = {
	[SROCE_HDR_DETH] = DETH_LEN,
	[SROCE_HDR_RETH] = RETH_LEN,
	[SROCE_HDR_FETH] = FETH_LEN,
	[SROCE_HDR_ATMETH] = ATMETH_LEN,
	[SROCE_HDR_AETH] = AETH_LEN,
	[SROCE_HDR_ATMACK] = ATMACK_LEN,
	[SROCE_HDR_IMMDT] = IMMDT_LEN,
	[SROCE_HDR_IETH] = IETH_LEN,
};

unsigned int sroce_hdr_len(enum sroce_hdr hdr)
{
	return hdr < SROCE_HDR_COUNT ? sroce_hdr_lens[hdr] : 0;
}
SROCE_EXPORT_FOR_KUNIT(sroce_hdr_len);

void sroce_bth_pack(struct sroce_bth *bth, const struct sroce_bth_fields *f)
{
	u32 dqpn = f->dqpn & SROCE_QPN_MASK;
	u32 apsn = f->psn & SROCE_PSN_MASK;

	sroce_wire_layout_checks();

	bth->opcode = f->opcode;
	bth->flags = (f->se ? SROCE_BTH_SE : 0) |
		     (f->mig ? SROCE_BTH_MIG : 0) |
		     ((f->pad << SROCE_BTH_PAD_SHIFT) & SROCE_BTH_PAD_MASK) |
		     (f->tver & SROCE_BTH_TVER_MASK);
	bth->pkey = cpu_to_be16(f->pkey);
	if (f->fecn)
		dqpn |= SROCE_BTH_FECN;
	if (f->becn)
		dqpn |= SROCE_BTH_BECN;
	bth->dqpn = cpu_to_be32(dqpn);
	if (f->ackreq)
		apsn |= SROCE_BTH_ACKREQ;
	bth->apsn = cpu_to_be32(apsn);
}
SROCE_EXPORT_FOR_KUNIT(sroce_bth_pack);

void sroce_bth_unpack(const struct sroce_bth *bth, struct sroce_bth_fields *f)
{
	u32 dqpn = be32_to_cpu(bth->dqpn);
	u32 apsn = be32_to_cpu(bth->apsn);

	f->opcode = bth->opcode;
	f->se = bth->flags & SROCE_BTH_SE;
	f->mig = bth->flags & SROCE_BTH_MIG;
	f->pad = sroce_bth_pad(bth);
	f->tver = bth->flags & SROCE_BTH_TVER_MASK;
	f->pkey = be16_to_cpu(bth->pkey);
	f->fecn = dqpn & SROCE_BTH_FECN;
	f->becn = dqpn & SROCE_BTH_BECN;
	f->dqpn = dqpn & SROCE_QPN_MASK;
	f->ackreq = apsn & SROCE_BTH_ACKREQ;
	f->psn = apsn & SROCE_PSN_MASK;
}
SROCE_EXPORT_FOR_KUNIT(sroce_bth_unpack);

/* The ICRC's seed after the eight 0xff bytes that replace the LRH. */
static u32 sroce_icrc_seed(void)
{
	static const u8 masked_lrh[8] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff
	};

	return crc32_le(~0U, masked_lrh, sizeof(masked_lrh));
}

u32 sroce_icrc_hdr(const void *l3, bool ipv6)
{
	u8 buf[sizeof(struct ipv6hdr) + sizeof(struct udphdr) +
	       sizeof(struct sroce_bth)];
	size_t iplen = ipv6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr);
	size_t len = iplen + sizeof(struct udphdr) + sizeof(struct sroce_bth);
	struct udphdr *udp = (struct udphdr *)(buf + iplen);
	struct sroce_bth *bth = (struct sroce_bth *)(udp + 1);

	memcpy(buf, l3, len);
	if (ipv6) {
		struct ipv6hdr *ip6 = (struct ipv6hdr *)buf;

		/* Traffic class and flow label: all but the version nibble. */
		ip6->priority = 0xf;
		memset(ip6->flow_lbl, 0xff, sizeof(ip6->flow_lbl));
		ip6->hop_limit = 0xff;
	} else {
		struct iphdr *ip4 = (struct iphdr *)buf;

		ip4->tos = 0xff;
		ip4->ttl = 0xff;
		ip4->check = (__force __sum16)0xffff;
	}
	udp->check = (__force __sum16)0xffff;
	bth->dqpn |= cpu_to_be32(~SROCE_QPN_MASK);

	return crc32_le(sroce_icrc_seed(), buf, len);
}
SROCE_EXPORT_FOR_KUNIT(sroce_icrc_hdr);

u32 sroce_icrc_update(u32 crc, const void *data, size_t len)
{
	return crc32_le(crc, data, len);
}
SROCE_EXPORT_FOR_KUNIT(sroce_icrc_update);

__le32 sroce_icrc_packet(const void *l3, bool ipv6, size_t len)
{
	size_t hdrs = (ipv6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr)) +
		      sizeof(struct udphdr) + sizeof(struct sroce_bth);
	u32 crc = sroce_icrc_hdr(l3, ipv6);

	crc = sroce_icrc_update(crc, (const u8 *)l3 + hdrs, len - hdrs);
	return sroce_icrc_final(crc);
}
SROCE_EXPORT_FOR_KUNIT(sroce_icrc_packet);
