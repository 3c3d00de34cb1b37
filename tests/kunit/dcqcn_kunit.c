// SPDX-License-Identifier: GPL-2.0
/*
 * sroce_dcqcn: the arithmetic that fits DCQCN's rate limiter to the rate a
 * QP sends at (include/sroce/dcqcn.h): the measurement, the start and the
 * cap of the limit, the stretched periods, the cut, one increase stage,
 * when a CNP may halve the requester's window and the least it cuts it to.
 * Expected values are worked out by hand in the comments.
 */

#include <kunit/test.h>

#include <sroce/dcqcn.h>

#include "sroce_kunit.h"

#define MS	NSEC_PER_MSEC
#define US	NSEC_PER_USEC

/* 1090-byte packets 100 us apart; the window closes at 1 ms. */
static void dcqcn_meas_first_window(struct kunit *test)
{
	struct sroce_cc_meas m = {};
	u64 t = 5 * MS;
	int i;

	/* The first packet opens the window; nothing is measured yet. */
	for (i = 0; i < 10; i++)
		sroce_cc_meas_sent(&m, 1090, t + i * 100 * US);
	KUNIT_EXPECT_EQ(test, m.rate, 0U);
	KUNIT_EXPECT_EQ(test, m.pkts, 10U);
	/* 11 packets, 11990 bytes in exactly 1 ms: 95920 kbit/s. */
	sroce_cc_meas_sent(&m, 1090, t + MS);
	KUNIT_EXPECT_EQ(test, m.rate, 95920U);
	KUNIT_EXPECT_EQ(test, m.gap, 90909U);
	KUNIT_EXPECT_EQ(test, m.start, t + MS);
	KUNIT_EXPECT_EQ(test, m.bytes, 0U);
	KUNIT_EXPECT_EQ(test, m.pkts, 0U);
}

static void dcqcn_meas_ewma(struct kunit *test)
{
	struct sroce_cc_meas m = { .start = 10 * MS, .rate = 40000,
				   .gap = 200 * US };

	/* 2 packets of 2500 bytes over 2 ms: 20000 kbit/s, 1 ms apart. */
	sroce_cc_meas_sent(&m, 2500, 10 * MS + 500 * US);
	KUNIT_EXPECT_EQ(test, m.rate, 40000U);
	sroce_cc_meas_sent(&m, 2500, 12 * MS);
	/* (3 * 40000 + 20000) / 4, (3 * 200000 + 1000000) / 4 */
	KUNIT_EXPECT_EQ(test, m.rate, 35000U);
	KUNIT_EXPECT_EQ(test, m.gap, 400000U);
}

static void dcqcn_meas_pause_is_no_sample(struct kunit *test)
{
	struct sroce_cc_meas m = { .start = 10 * MS, .rate = 40000,
				   .gap = 200 * US };

	/* One packet 17 ms after the window opened: a pause, dropped. */
	sroce_cc_meas_sent(&m, 1090, 27 * MS);
	KUNIT_EXPECT_EQ(test, m.rate, 40000U);
	KUNIT_EXPECT_EQ(test, m.gap, 200000U);
	KUNIT_EXPECT_EQ(test, m.start, 27 * MS);
	KUNIT_EXPECT_EQ(test, m.pkts, 0U);
	/* Exactly 16 ms still counts: 1090 * 8 / 16 ms = 545 kbit/s. */
	m = (struct sroce_cc_meas){ .start = 10 * MS };
	sroce_cc_meas_sent(&m, 1090, 26 * MS);
	KUNIT_EXPECT_EQ(test, m.rate, 545U);
	KUNIT_EXPECT_EQ(test, m.gap, 16000000U);
}

static void dcqcn_start_rate(struct kunit *test)
{
	struct sroce_cc_meas m = {};

	/* Nothing measured: DCQCN's line rate. */
	KUNIT_EXPECT_EQ(test, sroce_cc_start_rate(10000000, &m), 10000000U);
	m.rate = 24000;
	KUNIT_EXPECT_EQ(test, sroce_cc_start_rate(10000000, &m), 24000U);
	/* Never above the line rate. */
	KUNIT_EXPECT_EQ(test, sroce_cc_start_rate(20000, &m), 20000U);
}

static void dcqcn_cap(struct kunit *test)
{
	struct sroce_cc_meas m = {};

	KUNIT_EXPECT_EQ(test, sroce_cc_cap(10000000, &m), 10000000U);
	m.rate = 24000;
	KUNIT_EXPECT_EQ(test, sroce_cc_cap(10000000, &m), 48000U);
	KUNIT_EXPECT_EQ(test, sroce_cc_cap(30000, &m), 30000U);
	/* Twice a rate near U32_MAX does not wrap. */
	m.rate = U32_MAX - 1;
	KUNIT_EXPECT_EQ(test, sroce_cc_cap(U32_MAX, &m), U32_MAX);
}

static void dcqcn_stretch(struct kunit *test)
{
	/* Unknown spacing, or a packet per alpha period or more: as set. */
	KUNIT_EXPECT_EQ(test, sroce_cc_stretch(300 * US, 55 * US, 0), 300 * US);
	KUNIT_EXPECT_EQ(test, sroce_cc_stretch(300 * US, 55 * US, 55 * US),
			300 * US);
	KUNIT_EXPECT_EQ(test, sroce_cc_stretch(300 * US, 55 * US, 10 * US),
			300 * US);
	/* A packet every 550 us: ten times as long. */
	KUNIT_EXPECT_EQ(test, sroce_cc_stretch(300 * US, 55 * US, 550 * US),
			3000 * US);
	KUNIT_EXPECT_EQ(test, sroce_cc_stretch(55 * US, 55 * US, 550 * US),
			550 * US);
	KUNIT_EXPECT_EQ(test, sroce_cc_stretch(300 * US, 55 * US, 110 * US),
			600 * US);
	/* A 4000 s period times 550 ms does not fit 64 bits; the result does. */
	KUNIT_EXPECT_EQ(test, sroce_cc_stretch(4000000ULL * MS, 55 * US,
					       550 * MS),
			40000000000ULL * MS);
}

static void dcqcn_cut(struct kunit *test)
{
	/* alpha 1: halved; alpha 1/2: a quarter off. */
	KUNIT_EXPECT_EQ(test, sroce_cc_cut(24000, 1 << 16, 1000), 12000U);
	KUNIT_EXPECT_EQ(test, sroce_cc_cut(24000, 1 << 15, 1000), 18000U);
	KUNIT_EXPECT_EQ(test, sroce_cc_cut(24000, 0, 1000), 24000U);
	/* Never below the least rate. */
	KUNIT_EXPECT_EQ(test, sroce_cc_cut(1500, 1 << 16, 1000), 1000U);
}

static void dcqcn_raise(struct kunit *test)
{
	u32 rate = 12000, target = 24000;

	/* Fast recovery: halfway to the target. */
	sroce_cc_raise(&rate, &target, 0, 48000);
	KUNIT_EXPECT_EQ(test, rate, 18000U);
	KUNIT_EXPECT_EQ(test, target, 24000U);
	/* Additive increase of 5 Mbit/s. */
	sroce_cc_raise(&rate, &target, 5000, 48000);
	KUNIT_EXPECT_EQ(test, target, 29000U);
	KUNIT_EXPECT_EQ(test, rate, 23500U);
	/* Hyper increase stops at the cap: twice the measured rate. */
	sroce_cc_raise(&rate, &target, 50000, 48000);
	KUNIT_EXPECT_EQ(test, target, 48000U);
	KUNIT_EXPECT_EQ(test, rate, 35750U);
	/* A cap fallen below both brings both down to it. */
	sroce_cc_raise(&rate, &target, 5000, 20000);
	KUNIT_EXPECT_EQ(test, target, 20000U);
	KUNIT_EXPECT_EQ(test, rate, 20000U);
}

/* A CNP halves the window once per window of packets, across the wrap. */
static void dcqcn_window_due(struct kunit *test)
{
	/* No cut yet: the first CNP halves it, wherever the PSNs are. */
	KUNIT_EXPECT_TRUE(test, sroce_cc_window_due(false, 100, 5000));
	/* Packets sent before the cut still unacknowledged: no second cut. */
	KUNIT_EXPECT_FALSE(test, sroce_cc_window_due(true, 4999, 5000));
	/* All of them acknowledged, or more: the next CNP cuts again. */
	KUNIT_EXPECT_TRUE(test, sroce_cc_window_due(true, 5000, 5000));
	KUNIT_EXPECT_TRUE(test, sroce_cc_window_due(true, 5001, 5000));
	/* The cut at PSN 5 after the 24-bit wrap; 0xfffffe is before it. */
	KUNIT_EXPECT_FALSE(test, sroce_cc_window_due(true, 0xfffffe, 5));
	KUNIT_EXPECT_TRUE(test, sroce_cc_window_due(true, 6, 5));
	/* A cut at 0xfffffe; an ACK up to PSN 1, past the wrap, reaches it. */
	KUNIT_EXPECT_TRUE(test, sroce_cc_window_due(true, 1, 0xfffffe));
}

/* The floor of a CNP's window cut: what the rate sends in a round trip. */
static void dcqcn_rate_window(struct kunit *test)
{
	/* 8 Mbit/s for 100 ms is 100000 bytes: 97 packets of 1024. */
	KUNIT_EXPECT_EQ(test, sroce_cc_rate_window(8000, 100000, 1024), 97U);
	/* 1 Mbit/s for 33 ms is 4125 bytes: one packet of 4096. */
	KUNIT_EXPECT_EQ(test, sroce_cc_rate_window(1000, 33000, 4096), 1U);
	/* No round trip timed yet, or no MTU: nothing. */
	KUNIT_EXPECT_EQ(test, sroce_cc_rate_window(8000, 0, 1024), 0U);
	KUNIT_EXPECT_EQ(test, sroce_cc_rate_window(8000, 100000, 0), 0U);
	/* The largest rate and round trip do not wrap: the count saturates. */
	KUNIT_EXPECT_EQ(test, sroce_cc_rate_window(U32_MAX, U32_MAX, 256),
			U32_MAX);
}

static struct kunit_case sroce_dcqcn_cases[] = {
	KUNIT_CASE(dcqcn_meas_first_window),
	KUNIT_CASE(dcqcn_meas_ewma),
	KUNIT_CASE(dcqcn_meas_pause_is_no_sample),
	KUNIT_CASE(dcqcn_start_rate),
	KUNIT_CASE(dcqcn_cap),
	KUNIT_CASE(dcqcn_stretch),
	KUNIT_CASE(dcqcn_cut),
	KUNIT_CASE(dcqcn_raise),
	KUNIT_CASE(dcqcn_window_due),
	KUNIT_CASE(dcqcn_rate_window),
	{}
};

static struct kunit_suite sroce_dcqcn_suite = {
	.name = "sroce_dcqcn",
	.test_cases = sroce_dcqcn_cases,
};

kunit_test_suite(sroce_dcqcn_suite);
