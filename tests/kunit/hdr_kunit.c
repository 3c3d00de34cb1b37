// SPDX-License-Identifier: GPL-2.0
/*
 * sroce_hdr: the transport headers' wire images and their round trips.
 * Expected bytes are laid out here from the IBTA header diagrams (IBA 9.2,
 * 9.3), independently of the structures in include/sroce/wire.h.
 */

#include <kunit/test.h>
#include <linux/prandom.h>
#include <linux/string.h>

#include <sroce/wire.h>

#include "sroce_kunit.h"

#define ROUNDS	1000

static u32 rnd_bits(struct rnd_state *rnd, unsigned int bits)
{
	return prandom_u32_state(rnd) & (bits >= 32 ? ~0U : BIT(bits) - 1);
}

static u64 rnd_u64(struct rnd_state *rnd)
{
	return (u64)prandom_u32_state(rnd) << 32 | prandom_u32_state(rnd);
}

/* The BTH from host-order fields, bit by bit as IBA 9.2 draws it. */
static void ref_bth(u8 *b, const struct sroce_bth_fields *f)
{
	b[0] = f->opcode;
	b[1] = f->se << 7 | f->mig << 6 | (f->pad & 3) << 4 | (f->tver & 0xf);
	sroce_put_be(b + 2, f->pkey, 2);
	b[4] = f->fecn << 7 | f->becn << 6;	/* resv6 is zero */
	sroce_put_be(b + 5, f->dqpn, 3);
	b[8] = f->ackreq << 7;			/* resv7 is zero */
	sroce_put_be(b + 9, f->psn, 3);
}

static void random_bth_fields(struct rnd_state *rnd, struct sroce_bth_fields *f)
{
	f->opcode = rnd_bits(rnd, 8);
	f->se = rnd_bits(rnd, 1);
	f->mig = rnd_bits(rnd, 1);
	f->pad = rnd_bits(rnd, 2);
	f->tver = rnd_bits(rnd, 4);
	f->pkey = rnd_bits(rnd, 16);
	f->fecn = rnd_bits(rnd, 1);
	f->becn = rnd_bits(rnd, 1);
	f->dqpn = rnd_bits(rnd, 24);
	f->ackreq = rnd_bits(rnd, 1);
	f->psn = rnd_bits(rnd, 24);
}

static void expect_bth_fields_eq(struct kunit *test,
				 const struct sroce_bth_fields *got,
				 const struct sroce_bth_fields *want)
{
	KUNIT_EXPECT_EQ(test, got->opcode, want->opcode);
	KUNIT_EXPECT_EQ(test, got->se, want->se);
	KUNIT_EXPECT_EQ(test, got->mig, want->mig);
	KUNIT_EXPECT_EQ(test, got->pad, want->pad);
	KUNIT_EXPECT_EQ(test, got->tver, want->tver);
	KUNIT_EXPECT_EQ(test, got->pkey, want->pkey);
	KUNIT_EXPECT_EQ(test, got->fecn, want->fecn);
	KUNIT_EXPECT_EQ(test, got->becn, want->becn);
	KUNIT_EXPECT_EQ(test, got->dqpn, want->dqpn);
	KUNIT_EXPECT_EQ(test, got->ackreq, want->ackreq);
	KUNIT_EXPECT_EQ(test, got->psn, want->psn);
}

static void hdr_sizes(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sizeof(struct sroce_bth), 12);
	KUNIT_EXPECT_EQ(test, sizeof(struct sroce_reth), 16);
	KUNIT_EXPECT_EQ(test, sizeof(struct sroce_aeth), 4);
	KUNIT_EXPECT_EQ(test, sizeof(struct sroce_deth), 8);
	KUNIT_EXPECT_EQ(test, sizeof(struct sroce_atmeth), 28);
	KUNIT_EXPECT_EQ(test, sizeof(struct sroce_atmack), 8);
	KUNIT_EXPECT_EQ(test, sizeof(struct sroce_immdt), 4);
	KUNIT_EXPECT_EQ(test, sizeof(struct sroce_ieth), 4);
	KUNIT_EXPECT_EQ(test, sizeof(struct sroce_feth), 4);
}

/* One BTH with every field distinct, checked byte by byte. */
static void hdr_bth_layout(struct kunit *test)
{
	static const u8 want[12] = {
		0x64, 0xb0, 0x80, 0x01, 0xc0, 0x12, 0x34, 0x56,
		0x80, 0xab, 0xcd, 0xef,
	};
	struct sroce_bth_fields f = {
		.opcode = SROCE_OP_UD | SROCE_OP_SEND_ONLY, .se = true,
		.pad = 3, .tver = 0, .pkey = 0x8001, .fecn = true,
		.becn = true, .dqpn = 0x123456, .ackreq = true, .psn = 0xabcdef,
	};
	struct sroce_bth bth;
	u8 ref[12];

	ref_bth(ref, &f);
	SROCE_EXPECT_BYTES(test, ref, want, sizeof(want), "reference BTH");
	sroce_bth_pack(&bth, &f);
	SROCE_EXPECT_BYTES(test, &bth, want, sizeof(want), "packed BTH");

	KUNIT_EXPECT_EQ(test, sroce_bth_pad(&bth), 3);
	KUNIT_EXPECT_EQ(test, sroce_bth_qpn(&bth), 0x123456);
	KUNIT_EXPECT_EQ(test, sroce_bth_psn(&bth), 0xabcdef);
	KUNIT_EXPECT_TRUE(test, sroce_bth_ackreq(&bth));
}

/* Random fields: pack matches the reference image, unpack gives them back. */
static void hdr_bth_round_trip(struct kunit *test)
{
	struct sroce_bth_fields f, back;
	struct rnd_state rnd;
	struct sroce_bth bth;
	u8 ref[12];
	int i;

	prandom_seed_state(&rnd, SROCE_KUNIT_SEED);
	for (i = 0; i < ROUNDS; i++) {
		random_bth_fields(&rnd, &f);
		ref_bth(ref, &f);
		sroce_bth_pack(&bth, &f);
		SROCE_EXPECT_BYTES(test, &bth, ref, sizeof(ref), "packed BTH");
		memset(&back, 0x5a, sizeof(back));
		sroce_bth_unpack(&bth, &back);
		expect_bth_fields_eq(test, &back, &f);
		KUNIT_EXPECT_EQ(test, sroce_bth_pad(&bth), f.pad);
		KUNIT_EXPECT_EQ(test, sroce_bth_qpn(&bth), f.dqpn);
		KUNIT_EXPECT_EQ(test, sroce_bth_psn(&bth), f.psn);
		KUNIT_EXPECT_EQ(test, sroce_bth_ackreq(&bth), f.ackreq);
		if (test->status == KUNIT_FAILURE) {
			kunit_info(test, "first failure at round %d", i);
			return;
		}
	}
}

/*
 * Random bytes from the wire: unpacking ignores the reserved bits, and
 * packing what was unpacked gives the bytes back with them cleared.
 */
static void hdr_bth_reserved_bits(struct kunit *test)
{
	struct sroce_bth_fields f;
	struct rnd_state rnd;
	struct sroce_bth bth, again;
	u8 want[12];
	int i;

	prandom_seed_state(&rnd, SROCE_KUNIT_SEED + 1);
	for (i = 0; i < ROUNDS; i++) {
		prandom_bytes_state(&rnd, &bth, sizeof(bth));
		memcpy(want, &bth, sizeof(want));
		want[4] &= 0xc0;
		want[8] &= 0x80;
		sroce_bth_unpack(&bth, &f);
		sroce_bth_pack(&again, &f);
		SROCE_EXPECT_BYTES(test, &again, want, sizeof(want),
				   "BTH repacked");
		if (test->status == KUNIT_FAILURE)
			return;
	}
}

/* Out-of-range host values never spill into neighbouring wire fields. */
static void hdr_bth_field_overflow(struct kunit *test)
{
	struct sroce_bth_fields f = {
		.pad = 0xff, .tver = 0xff, .dqpn = 0xffffffff,
		.psn = 0xffffffff,
	};
	struct sroce_bth bth;
	u8 *b = (u8 *)&bth;

	sroce_bth_pack(&bth, &f);
	KUNIT_EXPECT_EQ_MSG(test, b[1], 0x3f, "SE and MigReq stay clear");
	KUNIT_EXPECT_EQ_MSG(test, b[4], 0, "FECN, BECN, resv6 stay clear");
	KUNIT_EXPECT_EQ_MSG(test, b[8], 0, "AckReq, resv7 stay clear");
	KUNIT_EXPECT_EQ(test, sroce_get_be(b + 5, 3), 0xffffff);
	KUNIT_EXPECT_EQ(test, sroce_get_be(b + 9, 3), 0xffffff);
}

static void hdr_reth(struct kunit *test)
{
	static const u8 want[16] = {
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
		0x11, 0x22, 0x33, 0x44, 0x80, 0x00, 0x00, 0x01,
	};
	struct sroce_reth reth;
	struct rnd_state rnd;
	u8 ref[16];
	int i;

	sroce_reth_pack(&reth, 0x0102030405060708ULL, 0x11223344, 0x80000001);
	SROCE_EXPECT_BYTES(test, &reth, want, sizeof(want), "RETH");

	prandom_seed_state(&rnd, SROCE_KUNIT_SEED + 2);
	for (i = 0; i < ROUNDS; i++) {
		u64 va = rnd_u64(&rnd);
		u32 rkey = prandom_u32_state(&rnd), len = prandom_u32_state(&rnd);

		sroce_put_be(ref, va, 8);
		sroce_put_be(ref + 8, rkey, 4);
		sroce_put_be(ref + 12, len, 4);
		sroce_reth_pack(&reth, va, rkey, len);
		SROCE_EXPECT_BYTES(test, &reth, ref, sizeof(ref), "RETH");
		KUNIT_EXPECT_EQ(test, be64_to_cpu(reth.va), va);
		KUNIT_EXPECT_EQ(test, be32_to_cpu(reth.rkey), rkey);
		KUNIT_EXPECT_EQ(test, be32_to_cpu(reth.len), len);
		if (test->status == KUNIT_FAILURE)
			return;
	}
}

static void hdr_aeth(struct kunit *test)
{
	static const u8 want[4] = { 0x61, 0xfe, 0xdc, 0xba };
	struct sroce_aeth aeth;
	struct rnd_state rnd;
	u8 ref[4];
	int i;

	sroce_aeth_pack(&aeth, SROCE_AETH_NAK | SROCE_NAK_INVALID_REQ, 0xfedcba);
	SROCE_EXPECT_BYTES(test, &aeth, want, sizeof(want), "AETH");
	KUNIT_EXPECT_EQ(test, sroce_aeth_syndrome(&aeth), 0x61);
	KUNIT_EXPECT_EQ(test, sroce_aeth_msn(&aeth), 0xfedcba);

	/* An MSN wider than 24 bits must not change the syndrome. */
	sroce_aeth_pack(&aeth, SROCE_AETH_ACK | SROCE_AETH_CREDIT_INVALID,
			0xff000001);
	KUNIT_EXPECT_EQ(test, sroce_aeth_syndrome(&aeth), 0x1f);
	KUNIT_EXPECT_EQ(test, sroce_aeth_msn(&aeth), 1);

	prandom_seed_state(&rnd, SROCE_KUNIT_SEED + 3);
	for (i = 0; i < ROUNDS; i++) {
		u8 syndrome = rnd_bits(&rnd, 8);
		u32 msn = rnd_bits(&rnd, 24);

		ref[0] = syndrome;
		sroce_put_be(ref + 1, msn, 3);
		sroce_aeth_pack(&aeth, syndrome, msn);
		SROCE_EXPECT_BYTES(test, &aeth, ref, sizeof(ref), "AETH");
		KUNIT_EXPECT_EQ(test, sroce_aeth_syndrome(&aeth), syndrome);
		KUNIT_EXPECT_EQ(test, sroce_aeth_msn(&aeth), msn);
		if (test->status == KUNIT_FAILURE)
			return;
	}
}

static void hdr_aeth_syndromes(struct kunit *test)
{
	/* IBA 9.7.5.1.1: bits 7-5 of the syndrome say what kind of AETH. */
	KUNIT_EXPECT_EQ(test, SROCE_AETH_ACK, 0x00);
	KUNIT_EXPECT_EQ(test, SROCE_AETH_RNR_NAK, 0x20);
	KUNIT_EXPECT_EQ(test, SROCE_AETH_NAK, 0x60);
	KUNIT_EXPECT_EQ(test, SROCE_AETH_KIND_MASK, 0xe0);
	KUNIT_EXPECT_EQ(test, SROCE_AETH_VALUE_MASK, 0x1f);
	KUNIT_EXPECT_EQ(test, SROCE_NAK_PSN_SEQ_ERR, 0);
	KUNIT_EXPECT_EQ(test, SROCE_NAK_INVALID_REQ, 1);
	KUNIT_EXPECT_EQ(test, SROCE_NAK_REM_ACCESS, 2);
	KUNIT_EXPECT_EQ(test, SROCE_NAK_REM_OP_ERR, 3);
	KUNIT_EXPECT_EQ(test, SROCE_NAK_INV_RD_REQ, 4);
	KUNIT_EXPECT_EQ(test, SROCE_AETH_CREDIT_INVALID, 0x1f);
}

static void hdr_deth(struct kunit *test)
{
	static const u8 want[8] = {
		0x80, 0x01, 0x02, 0x03, 0x00, 0xab, 0xcd, 0xef,
	};
	struct sroce_deth deth;
	struct rnd_state rnd;
	u8 ref[8];
	int i;

	/* The reserved byte stays zero even for a QPN wider than 24 bits. */
	sroce_deth_pack(&deth, 0x80010203, 0xffabcdef);
	SROCE_EXPECT_BYTES(test, &deth, want, sizeof(want), "DETH");
	KUNIT_EXPECT_EQ(test, sroce_deth_sqpn(&deth), 0xabcdef);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(deth.qkey), 0x80010203);

	/* A receiver ignores whatever the reserved byte holds. */
	((u8 *)&deth)[4] = 0xff;
	KUNIT_EXPECT_EQ(test, sroce_deth_sqpn(&deth), 0xabcdef);

	prandom_seed_state(&rnd, SROCE_KUNIT_SEED + 4);
	for (i = 0; i < ROUNDS; i++) {
		u32 qkey = prandom_u32_state(&rnd), sqpn = rnd_bits(&rnd, 24);

		sroce_put_be(ref, qkey, 4);
		ref[4] = 0;
		sroce_put_be(ref + 5, sqpn, 3);
		sroce_deth_pack(&deth, qkey, sqpn);
		SROCE_EXPECT_BYTES(test, &deth, ref, sizeof(ref), "DETH");
		KUNIT_EXPECT_EQ(test, sroce_deth_sqpn(&deth), sqpn);
		if (test->status == KUNIT_FAILURE)
			return;
	}
}

static void hdr_atmeth(struct kunit *test)
{
	static const u8 want[28] = {
		0x00, 0x00, 0x7f, 0xff, 0x12, 0x34, 0x56, 0x78,	/* VA */
		0xde, 0xad, 0xbe, 0xef,				/* R_Key */
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,	/* swap/add */
		0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8,	/* compare */
	};
	struct sroce_atmeth atm;
	struct rnd_state rnd;
	u8 ref[28];
	int i;

	sroce_atmeth_pack(&atm, 0x00007fff12345678ULL, 0xdeadbeef,
			  0x0102030405060708ULL, 0xf1f2f3f4f5f6f7f8ULL);
	SROCE_EXPECT_BYTES(test, &atm, want, sizeof(want), "AtomicETH");

	prandom_seed_state(&rnd, SROCE_KUNIT_SEED + 5);
	for (i = 0; i < ROUNDS; i++) {
		u64 va = rnd_u64(&rnd), swap = rnd_u64(&rnd), cmp = rnd_u64(&rnd);
		u32 rkey = prandom_u32_state(&rnd);

		sroce_put_be(ref, va, 8);
		sroce_put_be(ref + 8, rkey, 4);
		sroce_put_be(ref + 12, swap, 8);
		sroce_put_be(ref + 20, cmp, 8);
		sroce_atmeth_pack(&atm, va, rkey, swap, cmp);
		SROCE_EXPECT_BYTES(test, &atm, ref, sizeof(ref), "AtomicETH");
		KUNIT_EXPECT_EQ(test, be64_to_cpu(atm.va), va);
		KUNIT_EXPECT_EQ(test, be32_to_cpu(atm.rkey), rkey);
		KUNIT_EXPECT_EQ(test, be64_to_cpu(atm.swap_add), swap);
		KUNIT_EXPECT_EQ(test, be64_to_cpu(atm.cmp), cmp);
		if (test->status == KUNIT_FAILURE)
			return;
	}
}

/* The headers without pack helpers: one big-endian field each. */
static void hdr_single_field(struct kunit *test)
{
	static const u8 orig[8] = {
		0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,
	};
	static const u8 word[4] = { 0xca, 0xfe, 0xf0, 0x0d };
	struct sroce_atmack ack = { .orig = cpu_to_be64(0x8877665544332211ULL) };
	struct sroce_immdt imm = { .imm = cpu_to_be32(0xcafef00d) };
	struct sroce_ieth ieth = { .rkey = cpu_to_be32(0xcafef00d) };
	struct sroce_immdt imm_in;
	struct sroce_ieth ieth_in;
	struct sroce_atmack ack_in;

	SROCE_EXPECT_BYTES(test, &ack, orig, sizeof(orig), "AtomicAckETH");
	SROCE_EXPECT_BYTES(test, &imm, word, sizeof(word), "ImmDt");
	SROCE_EXPECT_BYTES(test, &ieth, word, sizeof(word), "IETH");

	memcpy(&ack_in, orig, sizeof(orig));
	memcpy(&imm_in, word, sizeof(word));
	memcpy(&ieth_in, word, sizeof(word));
	KUNIT_EXPECT_EQ(test, be64_to_cpu(ack_in.orig), 0x8877665544332211ULL);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(imm_in.imm), 0xcafef00d);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(ieth_in.rkey), 0xcafef00d);
}

/* Headers sit at any offset in a packet: the structures must not pad. */
static void hdr_unaligned(struct kunit *test)
{
	u8 buf[1 + sizeof(struct sroce_atmeth)] __aligned(8);
	struct sroce_atmeth *atm = (struct sroce_atmeth *)(buf + 1);
	struct sroce_reth *reth = (struct sroce_reth *)(buf + 1);
	u8 ref[28];

	memset(buf, 0, sizeof(buf));
	sroce_atmeth_pack(atm, 0x1122334455667788ULL, 0x99aabbcc,
			  0x0123456789abcdefULL, 0xfedcba9876543210ULL);
	sroce_put_be(ref, 0x1122334455667788ULL, 8);
	sroce_put_be(ref + 8, 0x99aabbcc, 4);
	sroce_put_be(ref + 12, 0x0123456789abcdefULL, 8);
	sroce_put_be(ref + 20, 0xfedcba9876543210ULL, 8);
	SROCE_EXPECT_BYTES(test, buf + 1, ref, sizeof(ref), "AtomicETH at +1");
	KUNIT_EXPECT_EQ(test, buf[0], 0);

	sroce_reth_pack(reth, 0x1122334455667788ULL, 0x99aabbcc, 0x1000);
	KUNIT_EXPECT_EQ(test, sroce_get_be(buf + 13, 4), 0x1000);
}

static struct kunit_case sroce_hdr_cases[] = {
	KUNIT_CASE(hdr_sizes),
	KUNIT_CASE(hdr_bth_layout),
	KUNIT_CASE(hdr_bth_round_trip),
	KUNIT_CASE(hdr_bth_reserved_bits),
	KUNIT_CASE(hdr_bth_field_overflow),
	KUNIT_CASE(hdr_reth),
	KUNIT_CASE(hdr_aeth),
	KUNIT_CASE(hdr_aeth_syndromes),
	KUNIT_CASE(hdr_deth),
	KUNIT_CASE(hdr_atmeth),
	KUNIT_CASE(hdr_single_field),
	KUNIT_CASE(hdr_unaligned),
	{}
};

static struct kunit_suite sroce_hdr_suite = {
	.name = "sroce_hdr",
	.test_cases = sroce_hdr_cases,
};

kunit_test_suite(sroce_hdr_suite);
