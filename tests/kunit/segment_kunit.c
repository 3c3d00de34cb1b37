// SPDX-License-Identifier: GPL-2.0
/*
 * sroce_segment: how the requester cuts a message into packets
 * (include/sroce/transport.h): the number of packets, and so of PSNs, for
 * a length and a path MTU, and the opcode of each packet. Opcodes are
 * written here as the numbers of IBTA Table 38, not with the wire layer's
 * names, so that a wrong name in wire.h shows up too.
 */

#include <kunit/test.h>
#include <linux/prandom.h>

#include <sroce/transport.h>

#include "sroce_kunit.h"

#define ROUNDS		10000

static const u32 mtus[] = { 256, 512, 1024, 2048, 4096 };

static void npkts_values(struct kunit *test)
{
	static const struct {
		u32 length, mtu, npkts;
	} cases[] = {
		{ 0, 1024, 1 },			/* an empty SEND is one packet */
		{ 1, 1024, 1 },
		{ 1023, 1024, 1 },
		{ 1024, 1024, 1 },
		{ 1025, 1024, 2 },
		{ 4096, 1024, 4 },
		{ 4097, 1024, 5 },
		{ 65536, 4096, 16 },
		{ 65537, 256, 257 },
		{ 0x80000000, 256, 0x800000 },	/* the largest message */
		{ 0x80000000, 4096, 0x80000 },
		/* Past any message sroce takes, still no wrapping sum. */
		{ 0xffffffff, 4096, 0x100000 },
		{ 0xffffffff, 256, 0x1000000 },
		{ 0xffffffff, 1, 0xffffffff },
		{ 0xffffffff, 0xffffffff, 1 },
	};
	int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++)
		KUNIT_EXPECT_EQ_MSG(test,
				    sroce_msg_npkts(cases[i].length,
						    cases[i].mtu),
				    cases[i].npkts, "%u bytes, MTU %u",
				    cases[i].length, cases[i].mtu);
}

/*
 * Random lengths up to 2^31: n packets of the MTU hold the message, n - 1
 * do not (except that an empty message still takes one packet).
 */
static void npkts_random(struct kunit *test)
{
	struct rnd_state rnd;
	int i;

	prandom_seed_state(&rnd, SROCE_KUNIT_SEED);
	for (i = 0; i < ROUNDS; i++) {
		u32 mtu = mtus[prandom_u32_state(&rnd) % ARRAY_SIZE(mtus)];
		u32 length = prandom_u32_state(&rnd) %
			     (i & 1 ? 0x80000001U : 8 * mtu + 1);
		u64 n = sroce_msg_npkts(length, mtu);

		KUNIT_EXPECT_GE(test, n, 1ULL);
		KUNIT_EXPECT_GE_MSG(test, n * mtu, (u64)length,
				    "%u bytes, MTU %u: %llu packets",
				    length, mtu, n);
		if (length)
			KUNIT_EXPECT_LT_MSG(test, (n - 1) * mtu, (u64)length,
					    "%u bytes, MTU %u: %llu packets",
					    length, mtu, n);
		if (test->status == KUNIT_FAILURE) {
			kunit_info(test, "first failure at round %d", i);
			return;
		}
	}
}

/* Positions of a packet in its message. */
enum { ONLY, FIRST, MIDDLE, LAST, NPOS };

static u8 opcode_at(u8 transport, u32 wr, int pos)
{
	return sroce_send_opcode(transport, wr, pos == ONLY || pos == FIRST,
				 pos == ONLY || pos == LAST);
}

static void opcode_rc_uc(struct kunit *test)
{
	/* IBTA Table 38, RC; UC is the same with 0x20 added. */
	static const struct {
		u32 wr;
		u8 op[NPOS];	/* ONLY, FIRST, MIDDLE, LAST */
	} cases[] = {
		{ IB_UVERBS_WR_SEND, { 0x04, 0x00, 0x01, 0x02 } },
		{ IB_UVERBS_WR_SEND_WITH_IMM, { 0x05, 0x00, 0x01, 0x03 } },
		{ IB_UVERBS_WR_RDMA_WRITE, { 0x0a, 0x06, 0x07, 0x08 } },
		{ IB_UVERBS_WR_RDMA_WRITE_WITH_IMM, { 0x0b, 0x06, 0x07, 0x09 } },
	};
	int i, pos;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		for (pos = 0; pos < NPOS; pos++) {
			KUNIT_EXPECT_EQ_MSG(test,
					    opcode_at(SROCE_OP_RC, cases[i].wr,
						      pos),
					    cases[i].op[pos],
					    "RC wr %u position %d",
					    cases[i].wr, pos);
			KUNIT_EXPECT_EQ_MSG(test,
					    opcode_at(SROCE_OP_UC, cases[i].wr,
						      pos),
					    cases[i].op[pos] + 0x20,
					    "UC wr %u position %d",
					    cases[i].wr, pos);
		}
	}
}

static void opcode_send_inv(struct kunit *test)
{
	/* SEND with Invalidate exists on RC only: 0x16 LAST, 0x17 ONLY. */
	KUNIT_EXPECT_EQ(test, opcode_at(SROCE_OP_RC, IB_UVERBS_WR_SEND_WITH_INV,
					ONLY), 0x17);
	KUNIT_EXPECT_EQ(test, opcode_at(SROCE_OP_RC, IB_UVERBS_WR_SEND_WITH_INV,
					FIRST), 0x00);
	KUNIT_EXPECT_EQ(test, opcode_at(SROCE_OP_RC, IB_UVERBS_WR_SEND_WITH_INV,
					MIDDLE), 0x01);
	KUNIT_EXPECT_EQ(test, opcode_at(SROCE_OP_RC, IB_UVERBS_WR_SEND_WITH_INV,
					LAST), 0x16);
}

/* UD sends one packet per message; ATOMIC WRITE is one RC packet. */
static void opcode_single_packet(struct kunit *test)
{
	int pos;

	for (pos = 0; pos < NPOS; pos++) {
		KUNIT_EXPECT_EQ(test, opcode_at(SROCE_OP_UD, IB_UVERBS_WR_SEND,
						pos), 0x64);
		KUNIT_EXPECT_EQ(test, opcode_at(SROCE_OP_UD,
						IB_UVERBS_WR_SEND_WITH_IMM,
						pos), 0x65);
		KUNIT_EXPECT_EQ(test, opcode_at(SROCE_OP_RC,
						SROCE_WR_ATOMIC_WRITE, pos),
				0x1d);
	}
}

/*
 * The opcodes of random messages, packet by packet: one ONLY, or a FIRST,
 * MIDDLEs and a LAST, all of the same operation; only the ONLY or LAST
 * one carries the immediate.
 */
static void opcode_messages_random(struct kunit *test)
{
	static const u32 wrs[] = {
		IB_UVERBS_WR_SEND, IB_UVERBS_WR_SEND_WITH_IMM,
		IB_UVERBS_WR_RDMA_WRITE, IB_UVERBS_WR_RDMA_WRITE_WITH_IMM,
	};
	struct rnd_state rnd;
	int i;

	prandom_seed_state(&rnd, SROCE_KUNIT_SEED + 2);
	for (i = 0; i < 1000; i++) {
		u8 transport = i & 1 ? SROCE_OP_UC : SROCE_OP_RC;
		u32 wr = wrs[prandom_u32_state(&rnd) % ARRAY_SIZE(wrs)];
		bool write = wr == IB_UVERBS_WR_RDMA_WRITE ||
			     wr == IB_UVERBS_WR_RDMA_WRITE_WITH_IMM;
		bool imm = wr == IB_UVERBS_WR_SEND_WITH_IMM ||
			   wr == IB_UVERBS_WR_RDMA_WRITE_WITH_IMM;
		u32 mtu = mtus[prandom_u32_state(&rnd) % ARRAY_SIZE(mtus)];
		u32 length = prandom_u32_state(&rnd) % (20 * mtu);
		u32 n = sroce_msg_npkts(length, mtu), k;

		for (k = 0; k < n; k++) {
			u8 op = sroce_send_opcode(transport, wr, k == 0,
						  k == n - 1);
			/* Table 38: SEND 0x00-0x05, WRITE 0x06-0x0b. */
			u8 base = write ? 0x06 : 0x00;
			u8 want;

			if (n == 1)
				want = base + (imm ? 5 : 4);
			else if (k == 0)
				want = base;
			else if (k < n - 1)
				want = base + 1;
			else
				want = base + (imm ? 3 : 2);
			KUNIT_EXPECT_EQ_MSG(test, op, transport | want,
					    "wr %u, packet %u of %u", wr, k, n);
		}
		if (test->status == KUNIT_FAILURE) {
			kunit_info(test, "first failure at round %d", i);
			return;
		}
	}
}

static struct kunit_case sroce_segment_cases[] = {
	KUNIT_CASE(npkts_values),
	KUNIT_CASE(npkts_random),
	KUNIT_CASE(opcode_rc_uc),
	KUNIT_CASE(opcode_send_inv),
	KUNIT_CASE(opcode_single_packet),
	KUNIT_CASE(opcode_messages_random),
	{}
};

static struct kunit_suite sroce_segment_suite = {
	.name = "sroce_segment",
	.test_cases = sroce_segment_cases,
};

kunit_test_suite(sroce_segment_suite);
