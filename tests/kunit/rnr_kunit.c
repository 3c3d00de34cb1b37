// SPDX-License-Identifier: GPL-2.0
/*
 * sroce_rnr: the wait an RNR NAK's 5-bit timer code asks for
 * (include/sroce/transport.h), against IBTA Table 45 copied here value by
 * value.
 */

#include <kunit/test.h>

#include <sroce/transport.h>

#include "sroce_kunit.h"

/* IBTA Table 45, in milliseconds times 100, by code. */
static const u32 table45_ms100[32] = {
	65536,	/*  0: 655.36 ms */
	1,	/*  1:   0.01 ms */
	2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96,	/*  2-13 */
	128, 192, 256, 384, 512, 768,			/* 14-19 */
	1024, 1536, 2048, 3072, 4096, 6144,		/* 20-25 */
	8192, 12288, 16384, 24576, 32768, 49152,	/* 26-31 */
};

static void rnr_table45(struct kunit *test)
{
	u8 code;

	for (code = 0; code < 32; code++)
		KUNIT_EXPECT_EQ_MSG(test, sroce_rnr_timer_us(code),
				    table45_ms100[code] * 10, "code %u", code);
	/* Some by hand: 0.01 ms, 0.12 ms, 1.92 ms, 491.52 ms. */
	KUNIT_EXPECT_EQ(test, sroce_rnr_timer_us(1), 10U);
	KUNIT_EXPECT_EQ(test, sroce_rnr_timer_us(7), 120U);
	KUNIT_EXPECT_EQ(test, sroce_rnr_timer_us(15), 1920U);
	KUNIT_EXPECT_EQ(test, sroce_rnr_timer_us(31), 491520U);
	KUNIT_EXPECT_EQ(test, sroce_rnr_timer_us(0), 655360U);
}

/* Only the low 5 bits of the AETH's value field are the code. */
static void rnr_high_bits(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, sroce_rnr_timer_us(0x20), 655360U);
	KUNIT_EXPECT_EQ(test, sroce_rnr_timer_us(0x21), 10U);
	KUNIT_EXPECT_EQ(test, sroce_rnr_timer_us(0x3f), 491520U);
	KUNIT_EXPECT_EQ(test, sroce_rnr_timer_us(0xe7), 120U);
}

/*
 * Codes 1 to 31 wait longer and longer; from code 4 on, two codes up
 * doubles the wait; code 0 waits longest of all.
 */
static void rnr_shape(struct kunit *test)
{
	u8 code;

	for (code = 2; code < 32; code++)
		KUNIT_EXPECT_GT_MSG(test, sroce_rnr_timer_us(code),
				    sroce_rnr_timer_us(code - 1), "code %u",
				    code);
	for (code = 4; code < 32; code++)
		KUNIT_EXPECT_EQ_MSG(test, sroce_rnr_timer_us(code),
				    2 * sroce_rnr_timer_us(code - 2), "code %u",
				    code);
	for (code = 1; code < 32; code++)
		KUNIT_EXPECT_LT(test, sroce_rnr_timer_us(code),
				sroce_rnr_timer_us(0));
}

static struct kunit_case sroce_rnr_cases[] = {
	KUNIT_CASE(rnr_table45),
	KUNIT_CASE(rnr_high_bits),
	KUNIT_CASE(rnr_shape),
	{}
};

static struct kunit_suite sroce_rnr_suite = {
	.name = "sroce_rnr",
	.test_cases = sroce_rnr_cases,
};

kunit_test_suite(sroce_rnr_suite);
