// SPDX-License-Identifier: GPL-2.0
/*
 * sroce_psn_class: where a PSN falls for the responder and the completer
 * (include/sroce/transport.h). The responder splits the 24-bit space in
 * halves around the expected PSN: up to 2^23 behind is a duplicate, less
 * than 2^23 ahead is out of sequence; only what lies less than 2^22 either
 * way may come from the peer at all. The completer acts on a response
 * only when its PSN is in [una, next).
 */

#include <kunit/test.h>
#include <linux/prandom.h>

#include <sroce/transport.h>

#include "sroce_kunit.h"

#define PSN_SPACE	((s64)BIT(24))
#define PSN_HALF	((s64)BIT(23))
#define ROUNDS		10000

/* Forward distance from @b to @a, 0 to 2^24 - 1, computed in 64 bits. */
static s64 ref_fwd(u32 a, u32 b)
{
	return (((s64)a - (s64)b) % PSN_SPACE + PSN_SPACE) % PSN_SPACE;
}

/* The class by the IBTA's rule, from the forward distance alone. */
static enum sroce_psn_class ref_class(u32 psn, u32 epsn)
{
	s64 d = ref_fwd(psn, epsn);

	if (!d)
		return SROCE_PSN_EXPECTED;
	return d < PSN_HALF ? SROCE_PSN_AHEAD : SROCE_PSN_DUPLICATE;
}

static void psn_class_values(struct kunit *test)
{
	static const struct {
		u32 psn, epsn;
		enum sroce_psn_class class;
	} cases[] = {
		{ 100, 100, SROCE_PSN_EXPECTED },
		{ 99, 100, SROCE_PSN_DUPLICATE },
		{ 101, 100, SROCE_PSN_AHEAD },
		{ 0, 100, SROCE_PSN_DUPLICATE },
		/* Across the wrap: 0xffffff is just before 0. */
		{ 0xffffff, 0, SROCE_PSN_DUPLICATE },
		{ 1, 0, SROCE_PSN_AHEAD },
		{ 0, 0xffffff, SROCE_PSN_AHEAD },
		{ 0xfffffe, 0xffffff, SROCE_PSN_DUPLICATE },
		{ 0x000005, 0xfffffb, SROCE_PSN_AHEAD },	/* 10 ahead */
		{ 0xfffffb, 0x000005, SROCE_PSN_DUPLICATE },	/* 10 behind */
		/* The edges of the halves: 2^23 - 1 ahead is the furthest. */
		{ 0x7fffff, 0, SROCE_PSN_AHEAD },
		{ 0x800000, 0, SROCE_PSN_DUPLICATE },		/* 2^23 behind */
		{ 0x800001, 0, SROCE_PSN_DUPLICATE },
		{ 0xbfffff, 0x400000, SROCE_PSN_AHEAD },
		{ 0xc00000, 0x400000, SROCE_PSN_DUPLICATE },
		{ 0x3fffff, 0xc00000, SROCE_PSN_AHEAD },	/* 0x7fffff on */
		{ 0x400000, 0xc00000, SROCE_PSN_DUPLICATE },
		/* Bits above the 24 of a raw BTH word do not count. */
		{ 0x01000005, 5, SROCE_PSN_EXPECTED },
		{ 0x80000006, 5, SROCE_PSN_AHEAD },
	};
	int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++)
		KUNIT_EXPECT_EQ_MSG(test,
				    sroce_psn_classify(cases[i].psn,
						       cases[i].epsn),
				    cases[i].class,
				    "classify(0x%06x, epsn 0x%06x)",
				    cases[i].psn, cases[i].epsn);
}

/*
 * Random pairs agree with the reference and with sroce_psn_diff(); a step
 * of 1 to 2^23 - 1 ahead of a random expected PSN is out of sequence, the
 * same step back is a duplicate.
 */
static void psn_class_random(struct kunit *test)
{
	struct rnd_state rnd;
	int i;

	prandom_seed_state(&rnd, SROCE_KUNIT_SEED);
	for (i = 0; i < ROUNDS; i++) {
		u32 epsn = prandom_u32_state(&rnd) & SROCE_PSN_MASK;
		u32 psn = prandom_u32_state(&rnd) & SROCE_PSN_MASK;
		u32 step = 1 + prandom_u32_state(&rnd) % (PSN_HALF - 1);
		enum sroce_psn_class c = sroce_psn_classify(psn, epsn);
		s32 d = sroce_psn_diff(psn, epsn);

		KUNIT_EXPECT_EQ_MSG(test, c, ref_class(psn, epsn),
				    "classify(0x%06x, epsn 0x%06x)", psn, epsn);
		KUNIT_EXPECT_EQ(test, c == SROCE_PSN_EXPECTED, d == 0);
		KUNIT_EXPECT_EQ(test, c == SROCE_PSN_AHEAD, d > 0);
		KUNIT_EXPECT_EQ(test, c == SROCE_PSN_DUPLICATE, d < 0);
		KUNIT_EXPECT_EQ(test, sroce_psn_classify(epsn, epsn),
				SROCE_PSN_EXPECTED);
		KUNIT_EXPECT_EQ_MSG(test,
				    sroce_psn_classify(sroce_psn_add(epsn, step),
						       epsn),
				    SROCE_PSN_AHEAD, "0x%06x + %u", epsn, step);
		KUNIT_EXPECT_EQ_MSG(test,
				    sroce_psn_classify(sroce_psn_add(epsn, -step),
						       epsn),
				    SROCE_PSN_DUPLICATE, "0x%06x - %u", epsn, step);
		if (test->status == KUNIT_FAILURE) {
			kunit_info(test, "first failure at round %d", i);
			return;
		}
	}
}

static void psn_in_range_values(struct kunit *test)
{
	/* One PSN: only itself. */
	KUNIT_EXPECT_TRUE(test, sroce_psn_in_range(7, 7, 7));
	KUNIT_EXPECT_FALSE(test, sroce_psn_in_range(6, 7, 7));
	KUNIT_EXPECT_FALSE(test, sroce_psn_in_range(8, 7, 7));
	/* 0xfffffe, 0xffffff, 0, 1: a WQE of four packets across the wrap. */
	KUNIT_EXPECT_TRUE(test, sroce_psn_in_range(0xfffffe, 0xfffffe, 1));
	KUNIT_EXPECT_TRUE(test, sroce_psn_in_range(0xffffff, 0xfffffe, 1));
	KUNIT_EXPECT_TRUE(test, sroce_psn_in_range(0, 0xfffffe, 1));
	KUNIT_EXPECT_TRUE(test, sroce_psn_in_range(1, 0xfffffe, 1));
	KUNIT_EXPECT_FALSE(test, sroce_psn_in_range(0xfffffd, 0xfffffe, 1));
	KUNIT_EXPECT_FALSE(test, sroce_psn_in_range(2, 0xfffffe, 1));
	KUNIT_EXPECT_FALSE(test, sroce_psn_in_range(0x7ffffe, 0xfffffe, 1));
}

/* The responder's window: less than 2^22 either way, across the wrap. */
static void psn_window_values(struct kunit *test)
{
	static const struct {
		u32 psn, epsn;
		bool in;
	} cases[] = {
		{ 100, 100, true },
		{ 0x3fffff, 0, true },			/* 2^22 - 1 ahead */
		{ 0x400000, 0, false },			/* 2^22 ahead */
		{ 0xc00001, 0, true },			/* 2^22 - 1 behind */
		{ 0xc00000, 0, false },			/* 2^22 behind */
		{ 0x800000, 0, false },			/* opposite */
		{ 0x3ffffe, 0xffffff, true },		/* ahead across the wrap */
		{ 0x3fffff, 0xffffff, false },
		{ 0xc00000, 0xffffff, true },		/* behind, no wrap */
		{ 0xbfffff, 0xffffff, false },
		{ 0xfffff0, 0x000010, true },		/* behind across the wrap */
		/* P and P xor 2^23: never both in, whatever the expected PSN. */
		{ 0x123456, 0x123456 ^ 0x800000, false },
		{ 0x01000005, 5, true },		/* bits above 24 ignored */
	};
	struct rnd_state rnd;
	int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++)
		KUNIT_EXPECT_EQ_MSG(test,
				    sroce_psn_in_window(cases[i].psn,
							cases[i].epsn),
				    cases[i].in, "window(0x%06x, epsn 0x%06x)",
				    cases[i].psn, cases[i].epsn);

	prandom_seed_state(&rnd, SROCE_KUNIT_SEED);
	for (i = 0; i < ROUNDS; i++) {
		u32 epsn = prandom_u32_state(&rnd) & SROCE_PSN_MASK;
		u32 psn = prandom_u32_state(&rnd) & SROCE_PSN_MASK;
		s64 d = ref_fwd(psn, epsn);
		bool in = d < SROCE_PSN_WINDOW || d > PSN_SPACE - SROCE_PSN_WINDOW;

		KUNIT_EXPECT_EQ_MSG(test, sroce_psn_in_window(psn, epsn), in,
				    "window(0x%06x, epsn 0x%06x)", psn, epsn);
		if (test->status == KUNIT_FAILURE)
			return;
	}
}

static void psn_outstanding_values(struct kunit *test)
{
	/* Sent 0xfffff0 to 0x00000f, none acknowledged: 32 PSNs. */
	KUNIT_EXPECT_TRUE(test, sroce_psn_outstanding(0xfffff0, 0xfffff0, 0x10));
	KUNIT_EXPECT_TRUE(test, sroce_psn_outstanding(0xffffff, 0xfffff0, 0x10));
	KUNIT_EXPECT_TRUE(test, sroce_psn_outstanding(0, 0xfffff0, 0x10));
	KUNIT_EXPECT_TRUE(test, sroce_psn_outstanding(0x0f, 0xfffff0, 0x10));
	/* Not yet sent, and already acknowledged: stale. */
	KUNIT_EXPECT_FALSE(test, sroce_psn_outstanding(0x10, 0xfffff0, 0x10));
	KUNIT_EXPECT_FALSE(test, sroce_psn_outstanding(0xffffef, 0xfffff0,
						       0x10));
	/* Nothing in flight: every PSN is stale. */
	KUNIT_EXPECT_FALSE(test, sroce_psn_outstanding(5, 5, 5));
	KUNIT_EXPECT_FALSE(test, sroce_psn_outstanding(4, 5, 5));
	KUNIT_EXPECT_FALSE(test, sroce_psn_outstanding(6, 5, 5));
}

/*
 * Random windows of up to 2^22 PSNs: a PSN k steps from the start, for k
 * from 2^22 before it to 2^22 past its end, is inside exactly when k is.
 */
static void psn_windows_random(struct kunit *test)
{
	struct rnd_state rnd;
	int i;

	prandom_seed_state(&rnd, SROCE_KUNIT_SEED + 1);
	for (i = 0; i < ROUNDS; i++) {
		u32 first = prandom_u32_state(&rnd) & SROCE_PSN_MASK;
		s32 n = prandom_u32_state(&rnd) % BIT(22);
		s32 k = (s32)(prandom_u32_state(&rnd) % (2 * BIT(22) + n)) -
			(s32)BIT(22);
		u32 psn = sroce_psn_add(first, k);
		u32 last = sroce_psn_add(first, n);

		/* [first, first + n] inclusive, [first, first + n) half-open. */
		KUNIT_EXPECT_EQ_MSG(test, sroce_psn_in_range(psn, first, last),
				    k >= 0 && k <= n,
				    "in_range(0x%06x, 0x%06x, 0x%06x)",
				    psn, first, last);
		KUNIT_EXPECT_EQ_MSG(test,
				    sroce_psn_outstanding(psn, first, last),
				    k >= 0 && k < n,
				    "outstanding(0x%06x, 0x%06x, 0x%06x)",
				    psn, first, last);
		if (test->status == KUNIT_FAILURE) {
			kunit_info(test, "first failure at round %d", i);
			return;
		}
	}
}

static struct kunit_case sroce_psn_class_cases[] = {
	KUNIT_CASE(psn_class_values),
	KUNIT_CASE(psn_class_random),
	KUNIT_CASE(psn_in_range_values),
	KUNIT_CASE(psn_window_values),
	KUNIT_CASE(psn_outstanding_values),
	KUNIT_CASE(psn_windows_random),
	{}
};

static struct kunit_suite sroce_psn_class_suite = {
	.name = "sroce_psn_class",
	.test_cases = sroce_psn_class_cases,
};

kunit_test_suite(sroce_psn_class_suite);
