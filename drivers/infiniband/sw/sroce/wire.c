// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RoCEv2 wire format: the opcode table and header packing (the ICRC is
 * icrc.c's).
 */

#include <linux/cache.h>
#include <linux/export.h>
#include <linux/init.h>
#include <linux/kernel.h>
#include <kunit/visibility.h>

#include <sroce/wire.h>

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

#define OPINFO(_name, _qpts, _flags, _hdrs)				\
	{								\
		.name = _name,						\
		.flags = _flags,					\
		.hdrs = _hdrs,						\
		.qpts = _qpts,						\
	}
#define OP(_opcode, _name, _qpts, _flags, _hdrs)			\
	[_opcode] = OPINFO(_name, _qpts, _flags, _hdrs)

#define F_REQ		SROCE_OPF_REQ
#define F_RESP		SROCE_OPF_RESP
#define F_PAYLOAD	SROCE_OPF_PAYLOAD
#define F_SEND		(SROCE_OPF_SEND | F_REQ | F_PAYLOAD)
#define F_WRITE		(SROCE_OPF_WRITE | F_REQ | F_PAYLOAD)
#define F_READ_RESP	(SROCE_OPF_READ_RESP | F_RESP | F_PAYLOAD)
#define F_FIRST		SROCE_OPF_FIRST
#define F_MIDDLE	SROCE_OPF_MIDDLE
#define F_LAST		SROCE_OPF_LAST
#define F_ONLY		SROCE_OPF_ONLY
#define F_IMM		SROCE_OPF_IMM
#define F_INV		SROCE_OPF_INV

#define RC		SROCE_QPT_RC
#define UC		SROCE_QPT_UC
#define UD		SROCE_QPT_UD

/*
 * The SEND and RDMA WRITE opcodes, alike in RC and UC: the transport @_t
 * (RC or UC) gives the opcode's upper bits and the name's prefix.
 */
#define SEND_WRITE_OPS(_t)						\
	[SROCE_OP_##_t | SROCE_OP_SEND_FIRST] =				\
		OPINFO(#_t "_SEND_FIRST", SROCE_QPT_##_t,		\
		       F_SEND | F_FIRST, 0),				\
	[SROCE_OP_##_t | SROCE_OP_SEND_MIDDLE] =			\
		OPINFO(#_t "_SEND_MIDDLE", SROCE_QPT_##_t,		\
		       F_SEND | F_MIDDLE, 0),				\
	[SROCE_OP_##_t | SROCE_OP_SEND_LAST] =				\
		OPINFO(#_t "_SEND_LAST", SROCE_QPT_##_t,		\
		       F_SEND | F_LAST, 0),				\
	[SROCE_OP_##_t | SROCE_OP_SEND_LAST_IMM] =			\
		OPINFO(#_t "_SEND_LAST_WITH_IMMEDIATE", SROCE_QPT_##_t,	\
		       F_SEND | F_LAST | F_IMM, IMMDT),			\
	[SROCE_OP_##_t | SROCE_OP_SEND_ONLY] =				\
		OPINFO(#_t "_SEND_ONLY", SROCE_QPT_##_t,		\
		       F_SEND | F_ONLY, 0),				\
	[SROCE_OP_##_t | SROCE_OP_SEND_ONLY_IMM] =			\
		OPINFO(#_t "_SEND_ONLY_WITH_IMMEDIATE", SROCE_QPT_##_t,	\
		       F_SEND | F_ONLY | F_IMM, IMMDT),			\
	[SROCE_OP_##_t | SROCE_OP_WRITE_FIRST] =			\
		OPINFO(#_t "_RDMA_WRITE_FIRST", SROCE_QPT_##_t,		\
		       F_WRITE | F_FIRST, RETH),			\
	[SROCE_OP_##_t | SROCE_OP_WRITE_MIDDLE] =			\
		OPINFO(#_t "_RDMA_WRITE_MIDDLE", SROCE_QPT_##_t,	\
		       F_WRITE | F_MIDDLE, 0),				\
	[SROCE_OP_##_t | SROCE_OP_WRITE_LAST] =				\
		OPINFO(#_t "_RDMA_WRITE_LAST", SROCE_QPT_##_t,		\
		       F_WRITE | F_LAST, 0),				\
	[SROCE_OP_##_t | SROCE_OP_WRITE_LAST_IMM] =			\
		OPINFO(#_t "_RDMA_WRITE_LAST_WITH_IMMEDIATE", SROCE_QPT_##_t, \
		       F_WRITE | F_LAST | F_IMM, IMMDT),		\
	[SROCE_OP_##_t | SROCE_OP_WRITE_ONLY] =				\
		OPINFO(#_t "_RDMA_WRITE_ONLY", SROCE_QPT_##_t,		\
		       F_WRITE | F_ONLY, RETH),				\
	[SROCE_OP_##_t | SROCE_OP_WRITE_ONLY_IMM] =			\
		OPINFO(#_t "_RDMA_WRITE_ONLY_WITH_IMMEDIATE", SROCE_QPT_##_t, \
		       F_WRITE | F_ONLY | F_IMM, RETH | IMMDT)

/*
 * The name, class, headers and QP types of each opcode; sroce_wire_init()
 * derives the header offsets from the header set.
 */
struct sroce_opcode_info sroce_opcodes[256] __ro_after_init = {
	SEND_WRITE_OPS(RC),
	OP(0x0c, "RC_RDMA_READ_REQUEST", RC, SROCE_OPF_READ | F_REQ | F_ONLY,
	   RETH),
	OP(0x0d, "RC_RDMA_READ_RESPONSE_FIRST", RC, F_READ_RESP | F_FIRST,
	   AETH),
	OP(0x0e, "RC_RDMA_READ_RESPONSE_MIDDLE", RC, F_READ_RESP | F_MIDDLE, 0),
	OP(0x0f, "RC_RDMA_READ_RESPONSE_LAST", RC, F_READ_RESP | F_LAST, AETH),
	OP(0x10, "RC_RDMA_READ_RESPONSE_ONLY", RC, F_READ_RESP | F_ONLY, AETH),
	OP(0x11, "RC_ACKNOWLEDGE", RC, SROCE_OPF_ACK | F_RESP | F_ONLY, AETH),
	OP(0x12, "RC_ATOMIC_ACKNOWLEDGE", RC, SROCE_OPF_ACK | F_RESP | F_ONLY,
	   AETH | ATMACK),
	OP(0x13, "RC_CMP_SWAP", RC, SROCE_OPF_ATOMIC | F_REQ | F_ONLY, ATMETH),
	OP(0x14, "RC_FETCH_ADD", RC, SROCE_OPF_ATOMIC | F_REQ | F_ONLY, ATMETH),
	OP(0x16, "RC_SEND_LAST_WITH_INVALIDATE", RC, F_SEND | F_LAST | F_INV,
	   IETH),
	OP(0x17, "RC_SEND_ONLY_WITH_INVALIDATE", RC, F_SEND | F_ONLY | F_INV,
	   IETH),
	OP(0x1c, "RC_FLUSH", RC, SROCE_OPF_FLUSH | F_REQ | F_ONLY, FETH | RETH),
	OP(0x1d, "RC_ATOMIC_WRITE", RC,
	   SROCE_OPF_ATOMIC_WRITE | F_REQ | F_PAYLOAD | F_ONLY, RETH),

	SEND_WRITE_OPS(UC),

	OP(0x64, "UD_SEND_ONLY", UD, F_SEND | F_ONLY, DETH),
	OP(0x65, "UD_SEND_ONLY_WITH_IMMEDIATE", UD, F_SEND | F_ONLY | F_IMM,
	   DETH | IMMDT),
};
EXPORT_SYMBOL_IF_KUNIT(sroce_opcodes);

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
EXPORT_SYMBOL_IF_KUNIT(sroce_hdr_len);

/**
 * sroce_wire_init() - derive the header offsets of the opcode table
 *
 * Context: module init, before any packet is built or parsed.
 */
void __init sroce_wire_init(void)
{
	unsigned int op, hdr;

	sroce_wire_layout_checks();
	for (op = 0; op < ARRAY_SIZE(sroce_opcodes); op++) {
		struct sroce_opcode_info *info = &sroce_opcodes[op];
		unsigned int off = sizeof(struct sroce_bth);

		if (!info->name)
			continue;
		for (hdr = 0; hdr < SROCE_HDR_COUNT; hdr++) {
			if (!(info->hdrs & BIT(hdr)))
				continue;
			info->offset[hdr] = off;
			off += sroce_hdr_lens[hdr];
		}
		info->hdr_len = off;
	}
}

void sroce_bth_pack(struct sroce_bth *bth, const struct sroce_bth_fields *f)
{
	u32 dqpn = f->dqpn & SROCE_QPN_MASK;
	u32 apsn = f->psn & SROCE_PSN_MASK;

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
EXPORT_SYMBOL_IF_KUNIT(sroce_bth_pack);

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
EXPORT_SYMBOL_IF_KUNIT(sroce_bth_unpack);
