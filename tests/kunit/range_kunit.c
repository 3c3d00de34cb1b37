// SPDX-License-Identifier: GPL-2.0
/*
 * sroce_mr_range: the bounds and rights checks of an access to a memory
 * region or window (include/sroce/transport.h). An access of [addr,
 * addr + len) is inside [start, start + size) when both ends are, with the
 * sums taken as if no integer could overflow; through a zero-based window
 * the window's addresses run from 0 and land at its base in the region.
 */

#include <kunit/test.h>
#include <linux/prandom.h>
#include <rdma/ib_verbs.h>

#include <sroce/transport.h>

#include "sroce_kunit.h"

#define ROUNDS		20000

/*
 * The reference: both ends compared as 65-bit numbers, a carry bit and 64
 * low bits, so that a sum past 2^64 stays larger than any that is not.
 */
static bool ref_within(u64 start, u64 size, u64 addr, u64 len)
{
	u64 end_lo = start + size, acc_lo = addr + len;
	u64 end_hi = end_lo < start, acc_hi = acc_lo < addr;

	if (addr < start)
		return false;
	return acc_hi < end_hi || (acc_hi == end_hi && acc_lo <= end_lo);
}

#define EXPECT_WITHIN(test, start, size, addr, len, want)		\
	expect_within(test, start, size, addr, len, want, __LINE__)

static void expect_within(struct kunit *test, u64 start, u64 size, u64 addr,
			  u64 len, bool want, int line)
{
	KUNIT_EXPECT_EQ_MSG(test, sroce_range_within(start, size, addr, len),
			    want, "line %d: [0x%llx +0x%llx) in [0x%llx +0x%llx)",
			    line, addr, len, start, size);
}

static void range_values(struct kunit *test)
{
	/* A page at 0x1000: [0x1000, 0x2000). */
	EXPECT_WITHIN(test, 0x1000, 0x1000, 0x1000, 0x1000, true);
	EXPECT_WITHIN(test, 0x1000, 0x1000, 0x1000, 0x1001, false);
	EXPECT_WITHIN(test, 0x1000, 0x1000, 0x0fff, 1, false);
	EXPECT_WITHIN(test, 0x1000, 0x1000, 0x1fff, 1, true);
	EXPECT_WITHIN(test, 0x1000, 0x1000, 0x1fff, 2, false);
	EXPECT_WITHIN(test, 0x1000, 0x1000, 0x1800, 0x800, true);
	EXPECT_WITHIN(test, 0x1000, 0x1000, 0x1801, 0x800, false);
	EXPECT_WITHIN(test, 0x1000, 0x1000, 0x2000, 1, false);
	EXPECT_WITHIN(test, 0x1000, 0x1000, 0, 0x2000, false);
}

/* An access of no bytes may sit anywhere from the start to the end. */
static void range_zero_length(struct kunit *test)
{
	EXPECT_WITHIN(test, 0x1000, 0x1000, 0x1000, 0, true);
	EXPECT_WITHIN(test, 0x1000, 0x1000, 0x2000, 0, true);
	EXPECT_WITHIN(test, 0x1000, 0x1000, 0x0fff, 0, false);
	EXPECT_WITHIN(test, 0x1000, 0x1000, 0x2001, 0, false);
	/* A region of no bytes holds only accesses of no bytes. */
	EXPECT_WITHIN(test, 0x1000, 0, 0x1000, 0, true);
	EXPECT_WITHIN(test, 0x1000, 0, 0x1000, 1, false);
	EXPECT_WITHIN(test, 0x1000, 0, 0x1001, 0, false);
}

/* Sums past 2^64 must not wrap into the region. */
static void range_overflow(struct kunit *test)
{
	/*
	 * 0x1800 + (2^64 - 0x17f0) wraps to 0x10: a check of
	 * "addr + len <= start + size" would take it for [0x1800, 0x10).
	 */
	EXPECT_WITHIN(test, 0x1000, 0x1000, 0x1800, -0x17f0ULL, false);
	EXPECT_WITHIN(test, 0x1000, 0x1000, 0x1800, U64_MAX, false);
	EXPECT_WITHIN(test, 0x1000, 0x1000, U64_MAX, 2, false);
	/* The last page of the address space: [2^64 - 0x1000, 2^64). */
	EXPECT_WITHIN(test, -0x1000ULL, 0x1000, -0x1000ULL, 0x1000, true);
	EXPECT_WITHIN(test, -0x1000ULL, 0x1000, U64_MAX, 1, true);
	EXPECT_WITHIN(test, -0x1000ULL, 0x1000, U64_MAX, 2, false);
	EXPECT_WITHIN(test, -0x1000ULL, 0x1000, -0x1001ULL, 0x1000, false);
	/* A region of 2^64 - 1 bytes from 0. */
	EXPECT_WITHIN(test, 0, U64_MAX, 0, U64_MAX, true);
	EXPECT_WITHIN(test, 0, U64_MAX, 1, U64_MAX, false);
	EXPECT_WITHIN(test, 0, U64_MAX, U64_MAX - 1, 1, true);
	EXPECT_WITHIN(test, 0, U64_MAX, U64_MAX, 1, false);
	EXPECT_WITHIN(test, 0, U64_MAX, U64_MAX, 0, true);
}

/* A random value, often near a power of two or the top of the space. */
static u64 rnd_edgy(struct rnd_state *rnd)
{
	u64 v = (u64)prandom_u32_state(rnd) << 32 | prandom_u32_state(rnd);

	switch (prandom_u32_state(rnd) % 4) {
	case 0:
		return v;
	case 1:
		return v & 0xffff;
	case 2:
		return -(v & 0xffff);
	default:
		return BIT_ULL(v % 64) + (s64)((v >> 8) % 5) - 2;
	}
}

/*
 * Random regions and accesses, most of them near a region's ends: the
 * check agrees with the 65-bit reference; an access inside the region
 * stays inside when it shrinks by one byte at either end.
 */
static void range_random(struct kunit *test)
{
	struct rnd_state rnd;
	int i;

	prandom_seed_state(&rnd, SROCE_KUNIT_SEED);
	for (i = 0; i < ROUNDS; i++) {
		u64 start = rnd_edgy(&rnd), size = rnd_edgy(&rnd);
		u64 addr, len = rnd_edgy(&rnd);
		bool in;

		switch (prandom_u32_state(&rnd) % 3) {
		case 0:
			addr = start + (s64)(prandom_u32_state(&rnd) % 9) - 4;
			break;
		case 1:
			addr = start + size - len +
			       (s64)(prandom_u32_state(&rnd) % 9) - 4;
			break;
		default:
			addr = rnd_edgy(&rnd);
			break;
		}
		in = sroce_range_within(start, size, addr, len);
		KUNIT_EXPECT_EQ_MSG(test, in, ref_within(start, size, addr, len),
				    "[0x%llx +0x%llx) in [0x%llx +0x%llx)",
				    addr, len, start, size);
		/* Two bytes at 2^64 - 1 fit only a region running past 2^64. */
		if (in && len > 1 && addr < U64_MAX)
			KUNIT_EXPECT_TRUE(test, sroce_range_within(start, size,
								   addr + 1,
								   len - 1));
		if (in && len)
			KUNIT_EXPECT_TRUE(test, sroce_range_within(start, size,
								   addr,
								   len - 1));
		if (test->status == KUNIT_FAILURE) {
			kunit_info(test, "first failure at round %d", i);
			return;
		}
	}
}

#define EXPECT_WINDOW(test, base, size, zb, va, len, want)		\
	expect_window(test, base, size, zb, va, len, want, __LINE__)

/*
 * An access through a window lands at @want, a region address, or is
 * refused when @want is WINDOW_REFUSED; a refused access leaves the
 * address untouched.
 */
#define WINDOW_REFUSED	0xdeadbeefULL

static void expect_window(struct kunit *test, u64 base, u64 size, bool zb,
			  u64 va, u64 len, u64 want, int line)
{
	u64 addr = WINDOW_REFUSED;
	bool in = sroce_window_addr(base, size, zb, va, len, &addr);

	KUNIT_EXPECT_EQ_MSG(test, in, want != WINDOW_REFUSED,
			    "line %d: [0x%llx +0x%llx) in %s window [0x%llx +0x%llx)",
			    line, va, len, zb ? "zero-based" : "VA", base, size);
	KUNIT_EXPECT_EQ_MSG(test, addr, want, "line %d", line);
}

/* A window of 0x100 bytes at 0x11238 of its region. */
static void window_values(struct kunit *test)
{
	/* Zero-based: its bytes are 0 to 0xff. */
	EXPECT_WINDOW(test, 0x11238, 0x100, true, 0, 1, 0x11238);
	EXPECT_WINDOW(test, 0x11238, 0x100, true, 0, 0x100, 0x11238);
	EXPECT_WINDOW(test, 0x11238, 0x100, true, 0xff, 1, 0x11337);
	EXPECT_WINDOW(test, 0x11238, 0x100, true, 0x80, 8, 0x112b8);
	EXPECT_WINDOW(test, 0x11238, 0x100, true, 0x100, 1, WINDOW_REFUSED);
	EXPECT_WINDOW(test, 0x11238, 0x100, true, 0xff, 2, WINDOW_REFUSED);
	EXPECT_WINDOW(test, 0x11238, 0x100, true, 0, 0x101, WINDOW_REFUSED);
	/* Its region addresses mean nothing to it. */
	EXPECT_WINDOW(test, 0x11238, 0x100, true, 0x11238, 1, WINDOW_REFUSED);
	/* No bytes: anywhere from its start to its end. */
	EXPECT_WINDOW(test, 0x11238, 0x100, true, 0x100, 0, 0x11338);
	EXPECT_WINDOW(test, 0x11238, 0x100, true, 0x101, 0, WINDOW_REFUSED);
	/* At the region's addresses: as before, and untranslated. */
	EXPECT_WINDOW(test, 0x11238, 0x100, false, 0x11238, 0x100, 0x11238);
	EXPECT_WINDOW(test, 0x11238, 0x100, false, 0x11337, 1, 0x11337);
	EXPECT_WINDOW(test, 0x11238, 0x100, false, 0x11338, 1, WINDOW_REFUSED);
	EXPECT_WINDOW(test, 0x11238, 0x100, false, 0x11237, 1, WINDOW_REFUSED);
	EXPECT_WINDOW(test, 0x11238, 0x100, false, 0, 1, WINDOW_REFUSED);
}

/* Zero-based sums past 2^64 must not wrap into the window. */
static void window_overflow(struct kunit *test)
{
	/* 0x80 + (2^64 - 0x7f) wraps to 1, inside [0, 0x100). */
	EXPECT_WINDOW(test, 0x11238, 0x100, true, 0x80, -0x7fULL,
		      WINDOW_REFUSED);
	EXPECT_WINDOW(test, 0x11238, 0x100, true, U64_MAX, 2, WINDOW_REFUSED);
	EXPECT_WINDOW(test, 0x11238, 0x100, true, U64_MAX, 0, WINDOW_REFUSED);
	EXPECT_WINDOW(test, 0x11238, 0x100, true, 1, U64_MAX, WINDOW_REFUSED);
	/* base + va wraps: an address past the window's end. */
	EXPECT_WINDOW(test, 0x11238, 0x100, true, -0x11238ULL, 8,
		      WINDOW_REFUSED);
	/* A window ending at 2^64: its last byte is U64_MAX. */
	EXPECT_WINDOW(test, -0x100ULL, 0x100, true, 0xff, 1, U64_MAX);
	EXPECT_WINDOW(test, -0x100ULL, 0x100, true, 0xff, 2, WINDOW_REFUSED);
	EXPECT_WINDOW(test, -0x100ULL, 0x100, false, U64_MAX, 1, U64_MAX);
	EXPECT_WINDOW(test, -0x100ULL, 0x100, false, U64_MAX, 2,
		      WINDOW_REFUSED);
}

/*
 * Random windows and accesses, many near a window's ends: a zero-based
 * window takes what [0, size) would and lands at base + va, any other
 * takes what [base, base + size) would and lands at va.
 */
static void window_random(struct kunit *test)
{
	struct rnd_state rnd;
	int i;

	prandom_seed_state(&rnd, SROCE_KUNIT_SEED);
	for (i = 0; i < ROUNDS; i++) {
		u64 size = rnd_edgy(&rnd), len = rnd_edgy(&rnd);
		/* The window lies in its region: base + size does not wrap. */
		u64 base = rnd_edgy(&rnd) % (U64_MAX - size + 1 ?: U64_MAX);
		bool zb = prandom_u32_state(&rnd) & 1;
		u64 start = zb ? 0 : base, va, addr = WINDOW_REFUSED;
		bool want, in;

		if (prandom_u32_state(&rnd) & 1)
			va = start + size - len +
			     (s64)(prandom_u32_state(&rnd) % 9) - 4;
		else
			va = rnd_edgy(&rnd);
		want = ref_within(start, size, va, len);
		in = sroce_window_addr(base, size, zb, va, len, &addr);
		KUNIT_EXPECT_EQ_MSG(test, in, want,
				    "[0x%llx +0x%llx) in %s window [0x%llx +0x%llx)",
				    va, len, zb ? "zero-based" : "VA", base,
				    size);
		KUNIT_EXPECT_EQ(test, addr, !want ? WINDOW_REFUSED :
					    zb ? base + va : va);
		if (want)
			KUNIT_EXPECT_TRUE(test, ref_within(base, size, addr,
							   len));
		if (test->status == KUNIT_FAILURE) {
			kunit_info(test, "first failure at round %d", i);
			return;
		}
	}
}

static void access_values(struct kunit *test)
{
	int rw = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ;

	KUNIT_EXPECT_TRUE(test, sroce_access_granted(rw, IB_ACCESS_REMOTE_READ));
	KUNIT_EXPECT_TRUE(test, sroce_access_granted(rw, rw));
	KUNIT_EXPECT_FALSE(test, sroce_access_granted(rw,
						      IB_ACCESS_REMOTE_WRITE));
	/* Every right needed must be there, not just one. */
	KUNIT_EXPECT_FALSE(test, sroce_access_granted(rw,
						      IB_ACCESS_REMOTE_READ |
						      IB_ACCESS_REMOTE_WRITE));
	KUNIT_EXPECT_FALSE(test, sroce_access_granted(IB_ACCESS_REMOTE_WRITE,
						      IB_ACCESS_REMOTE_ATOMIC));
	/* A local read needs no right at all. */
	KUNIT_EXPECT_TRUE(test, sroce_access_granted(0, 0));
	KUNIT_EXPECT_TRUE(test, sroce_access_granted(rw, 0));
	KUNIT_EXPECT_FALSE(test, sroce_access_granted(0, IB_ACCESS_LOCAL_WRITE));
}

/* Every pair of masks over the low 7 bits, checked bit by bit. */
static void access_exhaustive(struct kunit *test)
{
	int granted, needed, bit;

	for (granted = 0; granted < 128; granted++) {
		for (needed = 0; needed < 128; needed++) {
			bool want = true;

			for (bit = 0; bit < 7; bit++)
				if ((needed >> bit & 1) && !(granted >> bit & 1))
					want = false;
			KUNIT_EXPECT_EQ_MSG(test,
					    sroce_access_granted(granted, needed),
					    want, "granted 0x%x needed 0x%x",
					    granted, needed);
		}
	}
}

/*
 * Locating a byte of a fast-registration region in its buffers, when the
 * reader checked the access against a registration that has since been
 * replaced: only bytes inside the current buffers are found.
 */
static void fr_locate_values(struct kunit *test)
{
	u64 idx = ~0ULL, in_buf = ~0ULL;

	/* Four 4 KiB buffers from 0x10000, first byte at offset 0x100. */
	KUNIT_EXPECT_TRUE(test, sroce_fr_locate(0x10000, 0x10000, 0x100, 12, 4,
						&idx, &in_buf));
	KUNIT_EXPECT_EQ(test, idx, 0ULL);
	KUNIT_EXPECT_EQ(test, in_buf, 0x100ULL);
	KUNIT_EXPECT_TRUE(test, sroce_fr_locate(0x10000 + 0x3eff, 0x10000, 0x100,
						12, 4, &idx, &in_buf));
	KUNIT_EXPECT_EQ(test, idx, 3ULL);
	KUNIT_EXPECT_EQ(test, in_buf, 0xfffULL);
	/* One past the last buffer. */
	KUNIT_EXPECT_FALSE(test, sroce_fr_locate(0x10000 + 0x3f00, 0x10000,
						 0x100, 12, 4, &idx, &in_buf));
	/* Registered again with two buffers: the old range's tail is gone. */
	KUNIT_EXPECT_FALSE(test, sroce_fr_locate(0x12000, 0x10000, 0, 12, 2,
						 &idx, &in_buf));
	/* Registered again higher up: a byte below the new start. */
	KUNIT_EXPECT_FALSE(test, sroce_fr_locate(0x10000, 0x20000, 0, 12, 4,
						 &idx, &in_buf));
	/* Registered again with larger buffers: fewer, each larger. */
	KUNIT_EXPECT_TRUE(test, sroce_fr_locate(0x13000, 0x10000, 0, 16, 1,
						&idx, &in_buf));
	KUNIT_EXPECT_EQ(test, idx, 0ULL);
	KUNIT_EXPECT_EQ(test, in_buf, 0x3000ULL);
	/* No buffers (invalidated before any mapping), or a wrapping offset. */
	KUNIT_EXPECT_FALSE(test, sroce_fr_locate(0x10000, 0x10000, 0, 12, 0,
						 &idx, &in_buf));
	KUNIT_EXPECT_FALSE(test, sroce_fr_locate(~0ULL, 0, 0x100, 12, ~0U,
						 &idx, &in_buf));
}

/* Random registrations and bytes against a plain reference. */
static void fr_locate_random(struct kunit *test)
{
	struct rnd_state rnd;
	int i;

	prandom_seed_state(&rnd, 0x5ec0fe);
	for (i = 0; i < ROUNDS; i++) {
		u32 shift = 12 + prandom_u32_state(&rnd) % 10;
		u32 nbufs = prandom_u32_state(&rnd) % 64;
		u32 fbo = prandom_u32_state(&rnd) & ((1U << shift) - 1);
		u64 start = (u64)prandom_u32_state(&rnd) << 20;
		u64 iova = start + (s64)(s32)prandom_u32_state(&rnd) * 16;
		u64 idx = ~0ULL, in_buf = ~0ULL, off;
		bool want;

		off = iova - start + fbo;
		want = iova >= start && off >> shift < nbufs;
		KUNIT_ASSERT_EQ(test, sroce_fr_locate(iova, start, fbo, shift,
						      nbufs, &idx, &in_buf),
				want);
		if (want) {
			KUNIT_EXPECT_EQ(test, idx, off >> shift);
			KUNIT_EXPECT_EQ(test, (idx << shift) + in_buf, off);
		}
	}
}

static struct kunit_case sroce_mr_range_cases[] = {
	KUNIT_CASE(fr_locate_values),
	KUNIT_CASE(fr_locate_random),
	KUNIT_CASE(range_values),
	KUNIT_CASE(range_zero_length),
	KUNIT_CASE(range_overflow),
	KUNIT_CASE(range_random),
	KUNIT_CASE(window_values),
	KUNIT_CASE(window_overflow),
	KUNIT_CASE(window_random),
	KUNIT_CASE(access_values),
	KUNIT_CASE(access_exhaustive),
	{}
};

static struct kunit_suite sroce_mr_range_suite = {
	.name = "sroce_mr_range",
	.test_cases = sroce_mr_range_cases,
};

kunit_test_suite(sroce_mr_range_suite);
