// SPDX-License-Identifier: GPL-2.0
/*
 * sroce_psn: 24-bit sequence number arithmetic (IBA 9.7.1). PSNs wrap at
 * 2^24; of two PSNs, the one less than 2^23 ahead of the other is later.
 */

#include <kunit/test.h>
#include <linux/prandom.h>

#include <sroce/wire.h>

#include "sroce_kunit.h"

#define PSN_SPACE	((s64)BIT(24))
#define PSN_HALF	((s32)BIT(23))
#define ROUNDS		10000

/* The reference distance: from b forward to a, folded into [-2^23, 2^23). */
static s32 ref_diff(u32 a, u32 b)
{
	s64 d = ((s64)(a % PSN_SPACE) - (s64)(b % PSN_SPACE) + PSN_SPACE) %
		PSN_SPACE;

	return d >= PSN_HALF ? (s32)(d - PSN_SPACE) : (s32)d;
}

static void psn_mask(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, SROCE_PSN_MASK, 0xffffff);
	KUNIT_EXPECT_EQ(test, SROCE_MSN_MASK, 0xffffff);
	KUNIT_EXPECT_EQ(test, SROCE_QPN_MASK, 0xffffff);
}

static void psn_add_wraps(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sroce_psn_add(0, 0), 0);
	KUNIT_EXPECT_EQ(test, sroce_psn_add(0, 1), 1);
	KUNIT_EXPECT_EQ(test, sroce_psn_add(0xfffffe, 1), 0xffffff);
	KUNIT_EXPECT_EQ(test, sroce_psn_add(0xffffff, 1), 0);
	KUNIT_EXPECT_EQ(test, sroce_psn_add(0xfffffe, 3), 1);
	KUNIT_EXPECT_EQ(test, sroce_psn_add(0x123456, PSN_SPACE), 0x123456);
	KUNIT_EXPECT_EQ(test, sroce_psn_add(0x000010, 0xfffff0), 0);
	/* Adding 2^24 - 1 steps back by one. */
	KUNIT_EXPECT_EQ(test, sroce_psn_add(0, 0xffffff), 0xffffff);
	KUNIT_EXPECT_EQ(test, sroce_psn_add(5, 0xffffff), 4);
}

static void psn_diff_values(struct kunit *test)
{
	static const struct {
		u32 a, b;
		s32 diff;
	} cases[] = {
		{ 0, 0, 0 },
		{ 5, 3, 2 },
		{ 3, 5, -2 },
		{ 0, 0xffffff, 1 },		/* just after the wrap */
		{ 0xffffff, 0, -1 },
		{ 0x000002, 0xfffffe, 4 },
		{ 0xfffffe, 0x000002, -4 },
		{ 0x7fffff, 0, 0x7fffff },	/* furthest ahead */
		{ 0x800000, 0, -0x800000 },	/* half way is behind */
		{ 0, 0x800000, -0x800000 },
		{ 0x800001, 0, -0x7fffff },
		{ 0, 0x7fffff, -0x7fffff },
		{ 0xc00000, 0x400000, -0x800000 },
		{ 0x400000, 0xc00000, -0x800000 },
		{ 0xbfffff, 0x400000, 0x7fffff },
	};
	int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		KUNIT_EXPECT_EQ_MSG(test, sroce_psn_diff(cases[i].a, cases[i].b),
				    cases[i].diff, "diff(0x%06x, 0x%06x)",
				    cases[i].a, cases[i].b);
		KUNIT_EXPECT_EQ_MSG(test, ref_diff(cases[i].a, cases[i].b),
				    cases[i].diff, "reference diff(0x%06x, 0x%06x)",
				    cases[i].a, cases[i].b);
	}
}

/* Bits above the 24 of a PSN, as in a raw BTH word, do not count. */
static void psn_diff_ignores_high_bits(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sroce_psn_diff(0x80000005, 3), 2);
	KUNIT_EXPECT_EQ(test, sroce_psn_diff(5, 0xff000003), 2);
	KUNIT_EXPECT_EQ(test, sroce_psn_diff(0xff000000, 0x00ffffff), 1);
	KUNIT_EXPECT_EQ(test, sroce_psn_diff(0x01000000, 0), 0);
}

static void psn_random(struct kunit *test)
{
	struct rnd_state rnd;
	int i;

	prandom_seed_state(&rnd, SROCE_KUNIT_SEED);
	for (i = 0; i < ROUNDS; i++) {
		u32 a = prandom_u32_state(&rnd) & SROCE_PSN_MASK;
		u32 b = prandom_u32_state(&rnd) & SROCE_PSN_MASK;
		/* A step in [-2^23, 2^23). */
		s32 n = (s32)(prandom_u32_state(&rnd) % PSN_SPACE) - PSN_HALF;
		u32 c = sroce_psn_add(a, (u32)n);
		s32 d = sroce_psn_diff(a, b);

		KUNIT_EXPECT_EQ_MSG(test, d, ref_diff(a, b),
				    "diff(0x%06x, 0x%06x)", a, b);
		KUNIT_EXPECT_LE(test, c, SROCE_PSN_MASK);
		KUNIT_EXPECT_EQ_MSG(test, c, (u32)(((s64)a + n + PSN_SPACE) %
						   PSN_SPACE),
				    "add(0x%06x, %d)", a, n);
		KUNIT_EXPECT_EQ_MSG(test, sroce_psn_diff(c, a), n,
				    "diff(add(0x%06x, %d), 0x%06x)", a, n, a);
		/* Antisymmetric, except at the half-way point. */
		if (d != -PSN_HALF)
			KUNIT_EXPECT_EQ(test, sroce_psn_diff(b, a), -d);
		/* Adding the distance walks from one to the other. */
		KUNIT_EXPECT_EQ(test, sroce_psn_add(b, (u32)d), a);
		if (test->status == KUNIT_FAILURE) {
			kunit_info(test, "first failure at round %d", i);
			return;
		}
	}
}

/* A window of PSNs that straddles the wrap is ordered as it was sent. */
static void psn_window_across_wrap(struct kunit *test)
{
	u32 start = 0xffff00, prev = start, psn;
	int i;

	for (i = 1; i < 0x200; i++) {
		psn = sroce_psn_add(start, i);
		KUNIT_EXPECT_GT_MSG(test, sroce_psn_diff(psn, prev), 0,
				    "0x%06x after 0x%06x", psn, prev);
		KUNIT_EXPECT_EQ(test, sroce_psn_diff(psn, start), i);
		prev = psn;
	}
}

static struct kunit_case sroce_psn_cases[] = {
	KUNIT_CASE(psn_mask),
	KUNIT_CASE(psn_add_wraps),
	KUNIT_CASE(psn_diff_values),
	KUNIT_CASE(psn_diff_ignores_high_bits),
	KUNIT_CASE(psn_random),
	KUNIT_CASE(psn_window_across_wrap),
	{}
};

static struct kunit_suite sroce_psn_suite = {
	.name = "sroce_psn",
	.test_cases = sroce_psn_cases,
};

kunit_test_suite(sroce_psn_suite);
