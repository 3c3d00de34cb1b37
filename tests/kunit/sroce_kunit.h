/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the sroce KUnit suites. Expected wire images are built
 * byte by byte here, never with the wire layer's own structures, so that a
 * wrong field offset or byte order in include/sroce/wire.h shows up as a
 * failure instead of cancelling out.
 */
#ifndef _SROCE_KUNIT_H
#define _SROCE_KUNIT_H

#include <kunit/test.h>
#include <linux/types.h>
#include <net/ipv6.h>

/* Seed of every pseudo-random sequence, so that a failure can be replayed. */
#define SROCE_KUNIT_SEED	0x5a0ce4791ULL

/* Store the low @n bytes of @v at @p, most significant byte first. */
static inline void sroce_put_be(u8 *p, u64 v, unsigned int n)
{
	while (n--) {
		p[n] = v & 0xff;
		v >>= 8;
	}
}

/* Read @n bytes at @p as a big-endian number. */
static inline u64 sroce_get_be(const u8 *p, unsigned int n)
{
	u64 v = 0;

	while (n--)
		v = v << 8 | *p++;
	return v;
}

static inline u32 sroce_get_le32(const u8 *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (u32)p[3] << 24;
}

/*
 * Expect @len bytes at @got to equal those at @want; on a mismatch report
 * the first differing offset (KUNIT_EXPECT_MEMEQ is not in every kernel
 * sroce supports).
 */
#define SROCE_EXPECT_BYTES(test, got, want, len, what)			\
	sroce_expect_bytes(test, got, want, len, what, __LINE__)

static inline void sroce_expect_bytes(struct kunit *test, const void *got,
				      const void *want, size_t len,
				      const char *what, int line)
{
	const u8 *g = got, *w = want;
	size_t i;

	for (i = 0; i < len; i++) {
		if (g[i] != w[i]) {
			KUNIT_FAIL(test,
				   "line %d: %s: byte %zu of %zu is 0x%02x, want 0x%02x",
				   line, what, i, len, g[i], w[i]);
			return;
		}
	}
}

/*
 * Fill the IPv6 header of a test packet from 2001:db8::1 to 2001:db8::2
 * carrying UDP: @tclass, @flowlabel (host order) and @payload_len bytes.
 */
static inline void sroce_kunit_ip6_hdr(struct ipv6hdr *ip6, u8 tclass,
				       u32 flowlabel, unsigned int payload_len)
{
	ip6_flow_hdr(ip6, tclass, htonl(flowlabel & 0xfffff));
	ip6->payload_len = htons(payload_len);
	ip6->nexthdr = IPPROTO_UDP;
	ip6->hop_limit = 64;
	ip6->saddr = (struct in6_addr){ { { 0x20, 0x01, 0x0d, 0xb8,
		[15] = 1 } } };
	ip6->daddr = (struct in6_addr){ { { 0x20, 0x01, 0x0d, 0xb8,
		[15] = 2 } } };
}

#endif /* _SROCE_KUNIT_H */
