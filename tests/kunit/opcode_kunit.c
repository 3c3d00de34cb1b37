// SPDX-License-Identifier: GPL-2.0
/*
 * sroce_opcode: the opcode table against one written here from the IBTA
 * specification (IBA Table 38, the packet formats of IBA 9.2-9.3 and the
 * FLUSH and ATOMIC WRITE additions of IBA 1.5). Every one of the 256 opcode
 * values is a case: those sroce speaks must match in header set, header
 * offsets and length, payload presence, QP types, direction and position;
 * all others must be unknown to sroce.
 */

#include <kunit/test.h>
#include <linux/kernel.h>

#include <sroce/wire.h>

#include "sroce_kunit.h"

#define BTH_BYTES	12

/* Extension headers in the order IBA places them after the BTH. */
enum spec_hdr {
	S_DETH, S_FETH, S_RETH, S_ATMETH, S_AETH, S_ATMACK, S_IMMDT, S_IETH,
	S_COUNT,
};

static const struct {
	const char *name;
	unsigned int len;
	enum sroce_hdr sroce;
} spec_hdrs[S_COUNT] = {
	[S_DETH] = { "DETH", 8, SROCE_HDR_DETH },
	[S_FETH] = { "FETH", 4, SROCE_HDR_FETH },
	[S_RETH] = { "RETH", 16, SROCE_HDR_RETH },
	[S_ATMETH] = { "AtomicETH", 28, SROCE_HDR_ATMETH },
	[S_AETH] = { "AETH", 4, SROCE_HDR_AETH },
	[S_ATMACK] = { "AtomicAckETH", 8, SROCE_HDR_ATMACK },
	[S_IMMDT] = { "ImmDt", 4, SROCE_HDR_IMMDT },
	[S_IETH] = { "IETH", 4, SROCE_HDR_IETH },
};

#define H(x)		BIT(S_##x)

enum spec_pos { P_FIRST = 1, P_MIDDLE, P_LAST, P_ONLY };
enum spec_dir { D_REQ = 1, D_RESP };

struct spec_op {
	const char *name;
	u8 hdrs;		/* H() bits */
	bool payload;
	u8 qpts;		/* SROCE_QPT_* */
	enum spec_dir dir;
	enum spec_pos pos;
};

#define OP(code, _name, _qpts, _dir, _pos, _payload, _hdrs)		\
	[code] = { .name = _name, .hdrs = _hdrs, .payload = _payload,	\
		   .qpts = _qpts, .dir = _dir, .pos = _pos }

#define RC	SROCE_QPT_RC
#define UC	SROCE_QPT_UC
#define UD	SROCE_QPT_UD

static const struct spec_op spec_ops[256] = {
	/* Reliable Connection */
	OP(0x00, "RC SEND First", RC, D_REQ, P_FIRST, true, 0),
	OP(0x01, "RC SEND Middle", RC, D_REQ, P_MIDDLE, true, 0),
	OP(0x02, "RC SEND Last", RC, D_REQ, P_LAST, true, 0),
	OP(0x03, "RC SEND Last with Immediate", RC, D_REQ,
	   P_LAST, true, H(IMMDT)),
	OP(0x04, "RC SEND Only", RC, D_REQ, P_ONLY, true, 0),
	OP(0x05, "RC SEND Only with Immediate", RC, D_REQ,
	   P_ONLY, true, H(IMMDT)),
	OP(0x06, "RC RDMA WRITE First", RC, D_REQ, P_FIRST, true, H(RETH)),
	OP(0x07, "RC RDMA WRITE Middle", RC, D_REQ, P_MIDDLE, true, 0),
	OP(0x08, "RC RDMA WRITE Last", RC, D_REQ, P_LAST, true, 0),
	OP(0x09, "RC RDMA WRITE Last with Immediate", RC, D_REQ,
	   P_LAST, true, H(IMMDT)),
	OP(0x0a, "RC RDMA WRITE Only", RC, D_REQ, P_ONLY, true, H(RETH)),
	OP(0x0b, "RC RDMA WRITE Only with Immediate", RC, D_REQ,
	   P_ONLY, true, H(RETH) | H(IMMDT)),
	OP(0x0c, "RC RDMA READ Request", RC, D_REQ, P_ONLY, false, H(RETH)),
	OP(0x0d, "RC RDMA READ response First", RC, D_RESP, P_FIRST, true,
	   H(AETH)),
	OP(0x0e, "RC RDMA READ response Middle", RC, D_RESP, P_MIDDLE, true, 0),
	OP(0x0f, "RC RDMA READ response Last", RC, D_RESP, P_LAST, true,
	   H(AETH)),
	OP(0x10, "RC RDMA READ response Only", RC, D_RESP, P_ONLY, true,
	   H(AETH)),
	OP(0x11, "RC Acknowledge", RC, D_RESP, P_ONLY, false, H(AETH)),
	OP(0x12, "RC ATOMIC Acknowledge", RC, D_RESP, P_ONLY, false,
	   H(AETH) | H(ATMACK)),
	OP(0x13, "RC CmpSwap", RC, D_REQ, P_ONLY, false, H(ATMETH)),
	OP(0x14, "RC FetchAdd", RC, D_REQ, P_ONLY, false, H(ATMETH)),
	OP(0x16, "RC SEND Last with Invalidate", RC, D_REQ, P_LAST, true,
	   H(IETH)),
	OP(0x17, "RC SEND Only with Invalidate", RC, D_REQ, P_ONLY, true,
	   H(IETH)),
	OP(0x1c, "RC FLUSH", RC, D_REQ, P_ONLY, false, H(FETH) | H(RETH)),
	/* The 8 bytes to write travel as payload. */
	OP(0x1d, "RC ATOMIC WRITE", RC, D_REQ, P_ONLY, true, H(RETH)),

	/* Unreliable Connection: no READ, atomics or invalidation */
	OP(0x20, "UC SEND First", UC, D_REQ, P_FIRST, true, 0),
	OP(0x21, "UC SEND Middle", UC, D_REQ, P_MIDDLE, true, 0),
	OP(0x22, "UC SEND Last", UC, D_REQ, P_LAST, true, 0),
	OP(0x23, "UC SEND Last with Immediate", UC, D_REQ,
	   P_LAST, true, H(IMMDT)),
	OP(0x24, "UC SEND Only", UC, D_REQ, P_ONLY, true, 0),
	OP(0x25, "UC SEND Only with Immediate", UC, D_REQ,
	   P_ONLY, true, H(IMMDT)),
	OP(0x26, "UC RDMA WRITE First", UC, D_REQ, P_FIRST, true, H(RETH)),
	OP(0x27, "UC RDMA WRITE Middle", UC, D_REQ, P_MIDDLE, true, 0),
	OP(0x28, "UC RDMA WRITE Last", UC, D_REQ, P_LAST, true, 0),
	OP(0x29, "UC RDMA WRITE Last with Immediate", UC, D_REQ,
	   P_LAST, true, H(IMMDT)),
	OP(0x2a, "UC RDMA WRITE Only", UC, D_REQ, P_ONLY, true, H(RETH)),
	OP(0x2b, "UC RDMA WRITE Only with Immediate", UC, D_REQ,
	   P_ONLY, true, H(RETH) | H(IMMDT)),

	/*
	 * Reliable Datagram (0x40) and XRC (0xa0) are not sroce's; neither
	 * is the RoCEv2 CNP (0x81), which an RoCE NIC consumes below the
	 * transport.
	 */

	/* Unreliable Datagram: SEND only */
	OP(0x64, "UD SEND Only", UD, D_REQ, P_ONLY, true, H(DETH)),
	OP(0x65, "UD SEND Only with Immediate", UD, D_REQ, P_ONLY, true,
	   H(DETH) | H(IMMDT)),
};

static void opcode_desc(const struct spec_op *op, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "0x%02x %s",
		 (unsigned int)(op - spec_ops),
		 op->name ?: "(not sroce's)");
}

KUNIT_ARRAY_PARAM(opcode, spec_ops, opcode_desc);

static void expect_flag(struct kunit *test, u32 flags, u32 flag, bool want,
			const char *what)
{
	KUNIT_EXPECT_EQ_MSG(test, !!(flags & flag), want, "%s", what);
}

static void opcode_entry(struct kunit *test)
{
	const struct spec_op *op = test->param_value;
	unsigned int code = op - spec_ops, off = BTH_BYTES;
	const struct sroce_opcode_info *info = sroce_opcode_get(code);
	int h;

	if (!op->name) {
		KUNIT_EXPECT_NULL_MSG(test, info, "0x%02x must be unknown", code);
		return;
	}
	KUNIT_ASSERT_NOT_NULL_MSG(test, info, "0x%02x %s is missing",
				  code, op->name);

	/* Each header is there or not, and where the order puts it. */
	for (h = 0; h < S_COUNT; h++) {
		bool want = op->hdrs & BIT(h);
		enum sroce_hdr sh = spec_hdrs[h].sroce;

		KUNIT_EXPECT_EQ_MSG(test, !!(info->hdrs & BIT(sh)), want,
				    "%s %s", spec_hdrs[h].name,
				    want ? "missing" : "must be absent");
		if (!want)
			continue;
		KUNIT_EXPECT_EQ_MSG(test, info->offset[sh], off,
				    "offset of the %s", spec_hdrs[h].name);
		off += spec_hdrs[h].len;
	}
	KUNIT_EXPECT_EQ_MSG(test, info->hdr_len, off,
			    "bytes from the BTH to the payload");

	expect_flag(test, info->flags, SROCE_OPF_PAYLOAD, op->payload,
		    "payload");
	KUNIT_EXPECT_EQ_MSG(test, info->qpts, op->qpts, "QP types");
	expect_flag(test, info->flags, SROCE_OPF_REQ, op->dir == D_REQ,
		    "sent by a requester");
	expect_flag(test, info->flags, SROCE_OPF_RESP, op->dir == D_RESP,
		    "sent by a responder");
	expect_flag(test, info->flags, SROCE_OPF_FIRST, op->pos == P_FIRST,
		    "first");
	expect_flag(test, info->flags, SROCE_OPF_MIDDLE, op->pos == P_MIDDLE,
		    "middle");
	expect_flag(test, info->flags, SROCE_OPF_LAST, op->pos == P_LAST,
		    "last");
	expect_flag(test, info->flags, SROCE_OPF_ONLY, op->pos == P_ONLY,
		    "only");
	expect_flag(test, info->flags, SROCE_OPF_IMM, op->hdrs & H(IMMDT),
		    "immediate data");
	expect_flag(test, info->flags, SROCE_OPF_INV, op->hdrs & H(IETH),
		    "invalidate");
	/* The transport in the top three bits agrees with the QP type. */
	KUNIT_EXPECT_EQ_MSG(test, code & SROCE_OP_TRANSPORT_MASK,
			    op->qpts == UD ? SROCE_OP_UD :
			    op->qpts == UC ? SROCE_OP_UC : SROCE_OP_RC,
			    "transport bits");
}

/* The enum's opcode values are those of IBA Table 38. */
static void opcode_values(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, SROCE_OP_RC, 0x00);
	KUNIT_EXPECT_EQ(test, SROCE_OP_UC, 0x20);
	KUNIT_EXPECT_EQ(test, SROCE_OP_UD, 0x60);
	KUNIT_EXPECT_EQ(test, SROCE_OP_SEND_FIRST, 0x00);
	KUNIT_EXPECT_EQ(test, SROCE_OP_SEND_MIDDLE, 0x01);
	KUNIT_EXPECT_EQ(test, SROCE_OP_SEND_LAST, 0x02);
	KUNIT_EXPECT_EQ(test, SROCE_OP_SEND_LAST_IMM, 0x03);
	KUNIT_EXPECT_EQ(test, SROCE_OP_SEND_ONLY, 0x04);
	KUNIT_EXPECT_EQ(test, SROCE_OP_SEND_ONLY_IMM, 0x05);
	KUNIT_EXPECT_EQ(test, SROCE_OP_WRITE_FIRST, 0x06);
	KUNIT_EXPECT_EQ(test, SROCE_OP_WRITE_MIDDLE, 0x07);
	KUNIT_EXPECT_EQ(test, SROCE_OP_WRITE_LAST, 0x08);
	KUNIT_EXPECT_EQ(test, SROCE_OP_WRITE_LAST_IMM, 0x09);
	KUNIT_EXPECT_EQ(test, SROCE_OP_WRITE_ONLY, 0x0a);
	KUNIT_EXPECT_EQ(test, SROCE_OP_WRITE_ONLY_IMM, 0x0b);
	KUNIT_EXPECT_EQ(test, SROCE_OP_READ_REQ, 0x0c);
	KUNIT_EXPECT_EQ(test, SROCE_OP_READ_RESP_FIRST, 0x0d);
	KUNIT_EXPECT_EQ(test, SROCE_OP_READ_RESP_MIDDLE, 0x0e);
	KUNIT_EXPECT_EQ(test, SROCE_OP_READ_RESP_LAST, 0x0f);
	KUNIT_EXPECT_EQ(test, SROCE_OP_READ_RESP_ONLY, 0x10);
	KUNIT_EXPECT_EQ(test, SROCE_OP_ACK, 0x11);
	KUNIT_EXPECT_EQ(test, SROCE_OP_ATOMIC_ACK, 0x12);
	KUNIT_EXPECT_EQ(test, SROCE_OP_CMP_SWAP, 0x13);
	KUNIT_EXPECT_EQ(test, SROCE_OP_FETCH_ADD, 0x14);
	KUNIT_EXPECT_EQ(test, SROCE_OP_SEND_LAST_INV, 0x16);
	KUNIT_EXPECT_EQ(test, SROCE_OP_SEND_ONLY_INV, 0x17);
	KUNIT_EXPECT_EQ(test, SROCE_OP_FLUSH, 0x1c);
	KUNIT_EXPECT_EQ(test, SROCE_OP_ATOMIC_WRITE, 0x1d);
}

static void opcode_hdr_lengths(struct kunit *test)
{
	int h;

	for (h = 0; h < S_COUNT; h++)
		KUNIT_EXPECT_EQ_MSG(test, sroce_hdr_len(spec_hdrs[h].sroce),
				    spec_hdrs[h].len, "%s", spec_hdrs[h].name);
	KUNIT_EXPECT_EQ(test, SROCE_HDR_COUNT, S_COUNT);
	/* A header number beyond the table has no length. */
	KUNIT_EXPECT_EQ(test, sroce_hdr_len(SROCE_HDR_COUNT), 0);
}

/* Names identify opcodes in logs and traces: no two may share one. */
static void opcode_names_unique(struct kunit *test)
{
	int a, b;

	for (a = 0; a < 256; a++) {
		const struct sroce_opcode_info *x = sroce_opcode_get(a);

		if (!x)
			continue;
		for (b = a + 1; b < 256; b++) {
			const struct sroce_opcode_info *y = sroce_opcode_get(b);

			if (y)
				KUNIT_EXPECT_STRNEQ_MSG(test, x->name, y->name,
							"0x%02x and 0x%02x", a, b);
		}
	}
}

static struct kunit_case sroce_opcode_cases[] = {
	KUNIT_CASE(opcode_values),
	KUNIT_CASE(opcode_hdr_lengths),
	KUNIT_CASE(opcode_names_unique),
	KUNIT_CASE_PARAM(opcode_entry, opcode_gen_params),
	{}
};

static struct kunit_suite sroce_opcode_suite = {
	.name = "sroce_opcode",
	.test_cases = sroce_opcode_cases,
};

kunit_test_suite(sroce_opcode_suite);
