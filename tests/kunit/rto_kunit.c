// SPDX-License-Identifier: GPL-2.0
/*
 * sroce_rto: the round-trip estimate and the wait before a retransmission
 * (include/sroce/rto.h). Expected values are worked out here by hand or by
 * a floating-point-free reference written independently of the header.
 */

#include <kunit/test.h>
#include <linux/prandom.h>

#include <sroce/rto.h>

#include "sroce_kunit.h"

/* 4.096 us << timeout, in microseconds, rounded down. */
static u64 ref_timeout_us(u8 timeout)
{
	return div_u64(4096ULL << timeout, 1000);
}

static void rto_no_sample_is_qp_timeout(struct kunit *test)
{
	struct sroce_rtt rtt = {};
	u8 t;

	KUNIT_EXPECT_EQ(test, sroce_rto_base_us(14, &rtt), 67108ULL);
	KUNIT_EXPECT_EQ(test, sroce_rto_base_us(18, &rtt), 1073741ULL);
	KUNIT_EXPECT_EQ(test, sroce_rto_base_us(1, &rtt), 8ULL);
	for (t = 1; t <= 31; t++)
		KUNIT_EXPECT_EQ_MSG(test, sroce_rto_base_us(t, &rtt),
				    ref_timeout_us(t), "timeout %u", t);
}

static void rto_first_sample(struct kunit *test)
{
	struct sroce_rtt rtt = {};

	sroce_rtt_sample(&rtt, 1000);
	KUNIT_EXPECT_EQ(test, rtt.srtt_us, 1000U);
	KUNIT_EXPECT_EQ(test, rtt.rttvar_us, 500U);

	/* A round trip below a microsecond still marks the estimate valid. */
	rtt = (struct sroce_rtt){};
	sroce_rtt_sample(&rtt, 0);
	KUNIT_EXPECT_EQ(test, rtt.srtt_us, 1U);
	KUNIT_EXPECT_EQ(test, rtt.rttvar_us, 0U);
}

static void rto_later_samples(struct kunit *test)
{
	struct sroce_rtt rtt = {};

	sroce_rtt_sample(&rtt, 800);
	/* delta 800: var 400 - 100 + 200, mean 800 - 100 + 200. */
	sroce_rtt_sample(&rtt, 1600);
	KUNIT_EXPECT_EQ(test, rtt.rttvar_us, 500U);
	KUNIT_EXPECT_EQ(test, rtt.srtt_us, 900U);
	/* delta 500: var 500 - 125 + 125, mean 900 - 112 + 50. */
	sroce_rtt_sample(&rtt, 400);
	KUNIT_EXPECT_EQ(test, rtt.rttvar_us, 500U);
	KUNIT_EXPECT_EQ(test, rtt.srtt_us, 838U);
}

/* Steady samples: the mean settles on them and the deviation dies out. */
static void rto_converges(struct kunit *test)
{
	struct sroce_rtt rtt = {};
	int i;

	sroce_rtt_sample(&rtt, 100);
	for (i = 0; i < 200; i++)
		sroce_rtt_sample(&rtt, 250000);
	KUNIT_EXPECT_GE(test, rtt.srtt_us, 249000U);
	KUNIT_EXPECT_LE(test, rtt.srtt_us, 250000U);
	KUNIT_EXPECT_LE(test, rtt.rttvar_us, 1000U);
	/* The measured wait (~250 ms) now beats a 67 ms QP timeout... */
	KUNIT_EXPECT_GE(test, sroce_rto_base_us(14, &rtt), 249000ULL);
	KUNIT_EXPECT_LE(test, sroce_rto_base_us(14, &rtt), 254000ULL);
	/* ...but not a 1.07 s one. */
	KUNIT_EXPECT_EQ(test, sroce_rto_base_us(18, &rtt), 1073741ULL);
}

/* A fast path never shortens the QP's timeout. */
static void rto_never_below_qp_timeout(struct kunit *test)
{
	struct sroce_rtt rtt = {};
	int i;

	for (i = 0; i < 50; i++)
		sroce_rtt_sample(&rtt, 20);
	for (i = 1; i <= 31; i++)
		KUNIT_EXPECT_GE_MSG(test, sroce_rto_base_us(i, &rtt),
				    ref_timeout_us(i), "timeout %d", i);
	/* Short QP timeouts give way to mean + 4 deviations. */
	KUNIT_EXPECT_EQ(test, sroce_rto_base_us(1, &rtt),
			(u64)rtt.srtt_us + 4ULL * rtt.rttvar_us);
}

/* The measured part is capped; a longer QP timeout is not. */
static void rto_measured_cap(struct kunit *test)
{
	struct sroce_rtt rtt = { .srtt_us = 30 * USEC_PER_SEC,
				 .rttvar_us = USEC_PER_SEC };

	KUNIT_EXPECT_EQ(test, sroce_rto_base_us(14, &rtt),
			(u64)SROCE_RTO_MEASURED_MAX_US);
	KUNIT_EXPECT_EQ(test, sroce_rto_base_us(22, &rtt),
			ref_timeout_us(22));
	/* The largest values do not wrap. */
	rtt.srtt_us = U32_MAX;
	rtt.rttvar_us = U32_MAX;
	KUNIT_EXPECT_EQ(test, sroce_rto_base_us(14, &rtt),
			(u64)SROCE_RTO_MEASURED_MAX_US);
	KUNIT_EXPECT_EQ(test, sroce_rto_base_us(31, &rtt),
			ref_timeout_us(31));
	sroce_rtt_sample(&rtt, U32_MAX);
	KUNIT_EXPECT_GE(test, rtt.srtt_us, U32_MAX - 8);
	sroce_rtt_sample(&rtt, 1);
	KUNIT_EXPECT_GT(test, rtt.srtt_us, U32_MAX / 8 * 7 - 8);
}

/*
 * Random samples: the mean stays within the samples' range, and the wait
 * stays between the QP timeout and the cap.
 */
static void rto_random(struct kunit *test)
{
	struct rnd_state rnd;
	struct sroce_rtt rtt = {};
	u32 lo = U32_MAX, hi = 0;
	int i;

	prandom_seed_state(&rnd, SROCE_KUNIT_SEED);
	for (i = 0; i < 10000; i++) {
		u32 us = 1 + prandom_u32_state(&rnd) % 5000000;
		u64 base;

		lo = min(lo, us);
		hi = max(hi, us);
		sroce_rtt_sample(&rtt, us);
		KUNIT_EXPECT_GE(test, rtt.srtt_us, lo);
		KUNIT_EXPECT_LE(test, rtt.srtt_us, hi);
		base = sroce_rto_base_us(14, &rtt);
		KUNIT_EXPECT_GE(test, base, ref_timeout_us(14));
		KUNIT_EXPECT_LE(test, base, max_t(u64, ref_timeout_us(14),
						  SROCE_RTO_MEASURED_MAX_US));
		if (test->status == KUNIT_FAILURE) {
			kunit_info(test, "first failure at sample %d", i);
			return;
		}
	}
}

/*
 * A new QP's wait on the device's estimate: at least twice its mean, the
 * mean plus four deviations when that is longer, never below the QP's
 * own timeout, and the QP's timeout alone while the device has none.
 */
static void rto_guess_from_device(struct kunit *test)
{
	struct sroce_rtt none = {}, steady = { 300000, 1000 };
	struct sroce_rtt wide = { 300000, 100000 }, fast = { 1000, 900 };
	struct sroce_rtt g;

	g = sroce_rtt_as_guess(none);
	KUNIT_EXPECT_EQ(test, sroce_rto_base_us(14, &g), ref_timeout_us(14));
	g = sroce_rtt_as_guess(steady);
	KUNIT_EXPECT_EQ(test, g.srtt_us, 300000U);
	KUNIT_EXPECT_EQ(test, sroce_rto_base_us(14, &g), 600000ULL);
	g = sroce_rtt_as_guess(wide);
	KUNIT_EXPECT_EQ(test, sroce_rto_base_us(14, &g), 700000ULL);
	g = sroce_rtt_as_guess(fast);
	KUNIT_EXPECT_EQ(test, sroce_rto_base_us(14, &g), ref_timeout_us(14));
	KUNIT_EXPECT_EQ(test, sroce_rto_base_us(1, &g), 4600ULL);
}

static struct kunit_case sroce_rto_cases[] = {
	KUNIT_CASE(rto_no_sample_is_qp_timeout),
	KUNIT_CASE(rto_first_sample),
	KUNIT_CASE(rto_later_samples),
	KUNIT_CASE(rto_converges),
	KUNIT_CASE(rto_never_below_qp_timeout),
	KUNIT_CASE(rto_measured_cap),
	KUNIT_CASE(rto_random),
	KUNIT_CASE(rto_guess_from_device),
	{}
};

static struct kunit_suite sroce_rto_suite = {
	.name = "sroce_rto",
	.test_cases = sroce_rto_cases,
};

kunit_test_suite(sroce_rto_suite);
