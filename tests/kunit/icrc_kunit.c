// SPDX-License-Identifier: GPL-2.0
/*
 * sroce_icrc: the RoCEv2 invariant CRC against a reference computed here
 * from the definition (IBTA Annex A17.3.3): a bit-at-a-time CRC-32 over
 * eight 0xff bytes, the IP, UDP and base transport headers with their
 * variant fields set to all ones, and the rest of the packet.
 */

#include <kunit/test.h>
#include <linux/prandom.h>
#include <linux/skbuff.h>
#include <linux/string.h>

#include <sroce/wire.h>

#include "sroce_kunit.h"
#include "icrc_vectors.h"

#define IP4_LEN		20
#define IP6_LEN		40
#define UDP_LEN		8
#define BTH_LEN		12
#define MAX_HDRS	(IP6_LEN + UDP_LEN + BTH_LEN)
#define MAX_PAYLOAD	4200
#define RANDOM_PACKETS	200

static size_t hdrs_len(bool ipv6)
{
	return (ipv6 ? IP6_LEN : IP4_LEN) + UDP_LEN + BTH_LEN;
}

/* CRC-32 of IEEE 802.3, reflected, one bit at a time; no pre or post invert. */
static u32 ref_crc32(u32 crc, const u8 *p, size_t len)
{
	int bit;

	while (len--) {
		crc ^= *p++;
		for (bit = 0; bit < 8; bit++)
			crc = (crc >> 1) ^ ((crc & 1) ? 0xedb88320 : 0);
	}
	return crc;
}

/* Set the fields the ICRC does not cover to all ones, in a header copy. */
static void ref_mask(u8 *h, bool ipv6)
{
	size_t udp = ipv6 ? IP6_LEN : IP4_LEN;

	if (ipv6) {
		h[0] |= 0x0f;			/* traffic class, high nibble */
		h[1] = 0xff;			/* traffic class, flow label */
		h[2] = 0xff;			/* flow label */
		h[3] = 0xff;
		h[7] = 0xff;			/* hop limit */
	} else {
		h[1] = 0xff;			/* type of service */
		h[8] = 0xff;			/* time to live */
		h[10] = 0xff;			/* header checksum */
		h[11] = 0xff;
	}
	h[udp + 6] = 0xff;			/* UDP checksum */
	h[udp + 7] = 0xff;
	h[udp + UDP_LEN + 4] = 0xff;		/* BTH: FECN, BECN, reserved */
}

/* What the ICRC covers in place of the LRH RoCE has not. */
static const u8 ref_lrh[8] = {
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff
};

/* The ICRC of @len bytes from the IP header on, as a number. */
static u32 ref_icrc(const u8 *pkt, bool ipv6, size_t len)
{
	size_t hlen = hdrs_len(ipv6);
	u8 hdr[MAX_HDRS];
	u32 crc;

	memcpy(hdr, pkt, hlen);
	ref_mask(hdr, ipv6);
	crc = ref_crc32(~0U, ref_lrh, sizeof(ref_lrh));
	crc = ref_crc32(crc, hdr, hlen);
	crc = ref_crc32(crc, pkt + hlen, len - hlen);
	return ~crc;
}

/*
 * RoCE v1: the ICRC of @len bytes from the GRH on. The GRH is masked as an
 * IPv6 header is, and the BTH follows it with no UDP header between.
 */
static u32 ref_icrc_grh(const u8 *pkt, size_t len)
{
	u8 hdr[IP6_LEN + BTH_LEN];
	u32 crc;

	memcpy(hdr, pkt, sizeof(hdr));
	hdr[0] |= 0x0f;
	memset(hdr + 1, 0xff, 3);
	hdr[7] = 0xff;
	hdr[IP6_LEN + 4] = 0xff;
	crc = ref_crc32(~0U, ref_lrh, sizeof(ref_lrh));
	crc = ref_crc32(crc, hdr, sizeof(hdr));
	crc = ref_crc32(crc, pkt + sizeof(hdr), len - sizeof(hdr));
	return ~crc;
}

static u32 sroce_icrc(const u8 *pkt, bool ipv6, size_t len)
{
	return le32_to_cpu(sroce_icrc_packet(pkt, ipv6, len));
}

/* A random packet of @len bytes whose IP header has the right version. */
static u8 *random_packet(struct kunit *test, struct rnd_state *rnd,
			 bool ipv6, size_t len)
{
	u8 *pkt = kunit_kmalloc(test, len, GFP_KERNEL);

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, pkt);
	prandom_bytes_state(rnd, pkt, len);
	pkt[0] = ipv6 ? (0x60 | (pkt[0] & 0x0f)) : 0x45;
	return pkt;
}

static size_t random_len(struct rnd_state *rnd, bool ipv6)
{
	return hdrs_len(ipv6) + prandom_u32_state(rnd) % (MAX_PAYLOAD + 1);
}

/* The reference itself: the CRC-32 check value of "123456789". */
static void icrc_reference_crc32(struct kunit *test)
{
	static const u8 check[] = "123456789";

	KUNIT_EXPECT_EQ(test, ~ref_crc32(~0U, check, 9), 0xcbf43926U);
	/* sroce_icrc_update() continues the same CRC. */
	KUNIT_EXPECT_EQ(test, ~sroce_icrc_update(~0U, check, 9), 0xcbf43926U);
	KUNIT_EXPECT_EQ(test, sroce_icrc_update(0x12345678, check, 0),
			0x12345678U);
}

static void icrc_random_packets(struct kunit *test, bool ipv6)
{
	struct rnd_state rnd;
	int i;

	prandom_seed_state(&rnd, SROCE_KUNIT_SEED + ipv6);
	for (i = 0; i < RANDOM_PACKETS; i++) {
		size_t len = random_len(&rnd, ipv6);
		u8 *pkt = random_packet(test, &rnd, ipv6, len);
		u8 *copy = kunit_kmalloc(test, len, GFP_KERNEL);

		KUNIT_ASSERT_NOT_ERR_OR_NULL(test, copy);
		memcpy(copy, pkt, len);
		KUNIT_EXPECT_EQ_MSG(test, sroce_icrc(pkt, ipv6, len),
				    ref_icrc(pkt, ipv6, len),
				    "packet %d, %zu bytes", i, len);
		SROCE_EXPECT_BYTES(test, pkt, copy, len,
				   "the ICRC must not modify the packet");
		kunit_kfree(test, copy);
		kunit_kfree(test, pkt);
	}
}

static void icrc_random_ipv4(struct kunit *test)
{
	icrc_random_packets(test, false);
}

static void icrc_random_ipv6(struct kunit *test)
{
	icrc_random_packets(test, true);
}

/* The smallest packet: headers only, no payload. */
static void icrc_headers_only(struct kunit *test)
{
	struct rnd_state rnd;
	int v6;

	prandom_seed_state(&rnd, SROCE_KUNIT_SEED);
	for (v6 = 0; v6 <= 1; v6++) {
		size_t len = hdrs_len(v6);
		u8 *pkt = random_packet(test, &rnd, v6, len);

		KUNIT_EXPECT_EQ_MSG(test, sroce_icrc(pkt, v6, len),
				    ref_icrc(pkt, v6, len),
				    "%s", v6 ? "IPv6" : "IPv4");
	}
}

/* Header, then the rest in up to three pieces, equals the one-shot ICRC. */
/* RoCE v1 packets, whole and piece by piece, against the reference. */
static void icrc_random_grh(struct kunit *test)
{
	size_t hlen = IP6_LEN + BTH_LEN;
	struct rnd_state rnd;
	int i;

	prandom_seed_state(&rnd, SROCE_KUNIT_SEED + 5);
	for (i = 0; i < RANDOM_PACKETS; i++) {
		size_t len = hlen + prandom_u32_state(&rnd) % (MAX_PAYLOAD + 1);
		size_t cut = hlen + prandom_u32_state(&rnd) % (len - hlen + 1);
		u8 *pkt = random_packet(test, &rnd, true, len);
		u32 want, crc;

		pkt[6] = SROCE_GRH_NEXT_BTH;
		want = ref_icrc_grh(pkt, len);
		KUNIT_EXPECT_EQ_MSG(test,
				    le32_to_cpu(sroce_icrc_packet_grh(pkt, len)),
				    want, "packet %d, %zu bytes", i, len);
		crc = sroce_icrc_hdr_grh(pkt);
		crc = sroce_icrc_update(crc, pkt + hlen, cut - hlen);
		crc = sroce_icrc_update(crc, pkt + cut, len - cut);
		KUNIT_EXPECT_EQ_MSG(test, le32_to_cpu(sroce_icrc_final(crc)),
				    want, "packet %d cut at %zu", i, cut);
		/* The same bytes framed as RoCEv2 are another packet. */
		if (len >= hdrs_len(true))
			KUNIT_EXPECT_NE(test, ref_icrc(pkt, true, len), want);
		kunit_kfree(test, pkt);
	}
}

static void icrc_incremental(struct kunit *test)
{
	struct rnd_state rnd;
	int i;

	prandom_seed_state(&rnd, SROCE_KUNIT_SEED + 2);
	for (i = 0; i < RANDOM_PACKETS; i++) {
		bool ipv6 = i & 1;
		size_t len = random_len(&rnd, ipv6);
		size_t hlen = hdrs_len(ipv6), rest = len - hlen;
		size_t a = rest ? prandom_u32_state(&rnd) % (rest + 1) : 0;
		size_t b = a + (rest - a ? prandom_u32_state(&rnd) % (rest - a + 1) : 0);
		u8 *pkt = random_packet(test, &rnd, ipv6, len);
		u32 crc;

		crc = sroce_icrc_hdr(pkt, ipv6);
		crc = sroce_icrc_update(crc, pkt + hlen, a);
		crc = sroce_icrc_update(crc, pkt + hlen + a, b - a);
		crc = sroce_icrc_update(crc, pkt + hlen + b, rest - b);
		KUNIT_EXPECT_EQ_MSG(test, le32_to_cpu(sroce_icrc_final(crc)),
				    ref_icrc(pkt, ipv6, len),
				    "packet %d, %zu bytes cut at %zu and %zu",
				    i, len, a, b);
		kunit_kfree(test, pkt);
	}
}

static u32 tables_update(u32 crc, const void *p, size_t len)
{
	return sroce_crc_tables(crc, p, len);
}

static u32 tables_copy(u32 crc, void *d, const void *p, size_t len)
{
	return sroce_crc_tables_copy(crc, d, p, len);
}

/*
 * The CRCs a copy is checked with: the one chosen at load, and each of
 * sroce's two software CRCs on its own, whichever the module chose.
 */
static const struct {
	const char *name;
	u32 (*update)(u32 crc, const void *p, size_t len);
	u32 (*copy)(u32 crc, void *d, const void *p, size_t len);
} copy_crcs[] = {
	{ "chosen at load", sroce_icrc_update, sroce_icrc_copy },
	{ "fold", sroce_crc_fold_update, sroce_crc_fold_copy },
	{ "tables", tables_update, tables_copy },
};

/* Bytes either side of a copy's destination, which must stay as they were. */
#define COPY_GUARD	16
/* Past the fold's start (64 bytes) and the edges of its tail's words. */
#define COPY_MAX	600

/*
 * One copy by copy_crcs[@c] of @len bytes to @d bytes into @dst's room
 * after its guard: the CRC, the bytes, and nothing written either side.
 */
static bool icrc_copy_once(struct kunit *test, unsigned int c, u32 seed,
			   const u8 *from, size_t len, u8 *dst, size_t room,
			   unsigned int d, u32 want)
{
	u8 *to = dst + COPY_GUARD + d;

	memset(dst, 0xa5, room);
	KUNIT_EXPECT_EQ(test, copy_crcs[c].copy(seed, to, from, len), want);
	SROCE_EXPECT_BYTES(test, to, from, len, "copy");
	KUNIT_EXPECT_PTR_EQ(test, memchr_inv(dst, 0xa5, to - dst), NULL);
	KUNIT_EXPECT_PTR_EQ(test,
			    memchr_inv(to + len, 0xa5, dst + room - to - len),
			    NULL);
	return test->status != KUNIT_FAILURE;
}

/*
 * Each CRC of copy_crcs[] at every length up to COPY_MAX and every
 * alignment of source and destination: the reference CRC with and without
 * the copy, the bytes copied, and nothing written either side.
 */
static void icrc_copy(struct kunit *test)
{
	const size_t room = COPY_MAX + 8 + 2 * COPY_GUARD;
	u8 *src = kunit_kmalloc(test, COPY_MAX + 8, GFP_KERNEL);
	u8 *dst = kunit_kmalloc(test, room, GFP_KERNEL);
	struct rnd_state rnd;
	unsigned int c, len, so, d;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, src);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, dst);
	prandom_seed_state(&rnd, SROCE_KUNIT_SEED + 5);
	prandom_bytes_state(&rnd, src, COPY_MAX + 8);
	for (len = 0; len <= COPY_MAX; len++) {
		for (so = 0; so < 8; so++) {
			const u8 *from = src + so;
			u32 seed = prandom_u32_state(&rnd);
			u32 want = ref_crc32(seed, from, len);

			for (c = 0; c < ARRAY_SIZE(copy_crcs); c++) {
				KUNIT_EXPECT_EQ(test,
						copy_crcs[c].update(seed, from, len),
						want);
				for (d = 0; d < 8; d++) {
					if (icrc_copy_once(test, c, seed, from,
							   len, dst, room, d,
							   want))
						continue;
					kunit_info(test, "%s, %u bytes, source +%u, destination +%u",
						   copy_crcs[c].name, len, so, d);
					return;
				}
			}
		}
	}
}

/* A full packet's payload and more, at odd offsets and lengths. */
static void icrc_copy_long(struct kunit *test)
{
	u8 *src = kunit_kmalloc(test, 2 * MAX_PAYLOAD, GFP_KERNEL);
	u8 *dst = kunit_kzalloc(test, 2 * MAX_PAYLOAD, GFP_KERNEL);
	struct rnd_state rnd;
	int i;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, src);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, dst);
	prandom_seed_state(&rnd, SROCE_KUNIT_SEED + 6);
	prandom_bytes_state(&rnd, src, 2 * MAX_PAYLOAD);
	for (i = 0; i < RANDOM_PACKETS; i++) {
		size_t off = prandom_u32_state(&rnd) % 16;
		size_t len = prandom_u32_state(&rnd) %
			     (2 * MAX_PAYLOAD - 16 + 1);
		u32 seed = prandom_u32_state(&rnd);
		u32 want = ref_crc32(seed, src + off, len);

		KUNIT_EXPECT_EQ_MSG(test, sroce_icrc_update(seed, src + off,
							    len), want,
				    "update, %zu bytes at +%zu", len, off);
		KUNIT_EXPECT_EQ_MSG(test, sroce_icrc_copy(seed, dst + 15 - off,
							  src + off, len),
				    want, "copy, %zu bytes at +%zu", len, off);
		SROCE_EXPECT_BYTES(test, dst + 15 - off, src + off, len,
				   "long copy");
		if (test->status == KUNIT_FAILURE)
			return;
	}
}

/* The linear part and the page fragments of icrc_copy_skb()'s packet. */
#define SKB_HEAD	100
static const unsigned int skb_frag_lens[] = { 1, 4096, 7, 2000, 3 };

/*
 * A packet laid out as a received one may be: a linear head, then page
 * fragments of odd sizes, filled with @src's bytes in order.
 */
static struct sk_buff *icrc_skb_build(struct kunit *test, const u8 *src)
{
	struct sk_buff *skb = alloc_skb(SKB_HEAD, GFP_KERNEL);
	unsigned int i, off = SKB_HEAD;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, skb);
	skb_put_data(skb, src, SKB_HEAD);
	for (i = 0; i < ARRAY_SIZE(skb_frag_lens); i++) {
		struct page *page = alloc_page(GFP_KERNEL);
		/* An odd offset in the page, where the fragment fits. */
		unsigned int in = i * 3 % (PAGE_SIZE - skb_frag_lens[i] + 1);

		if (!page)
			kfree_skb(skb);
		KUNIT_ASSERT_NOT_NULL(test, page);
		memcpy(page_address(page) + in, src + off, skb_frag_lens[i]);
		skb_add_rx_frag(skb, i, page, in, skb_frag_lens[i], PAGE_SIZE);
		off += skb_frag_lens[i];
	}
	return skb;
}

/*
 * sroce_icrc_copy_skb() and sroce_icrc_skb() across the head and the
 * fragments of a packet, from offsets and for lengths that start and end
 * in each part and on its edges: the bytes copied, nothing written past
 * them, and the reference CRC.
 */
static void icrc_copy_skb(struct kunit *test)
{
	static const unsigned int edges[] = { 0, 1, 99, 100, 101, 102, 2000,
					      4196, 4197, 4203, 5000, 6203,
					      6204, 6206, 6207 };
	unsigned int total = SKB_HEAD, a, b;
	struct rnd_state rnd;
	struct sk_buff *skb;
	u8 *src, *dst;

	for (a = 0; a < ARRAY_SIZE(skb_frag_lens); a++)
		total += skb_frag_lens[a];
	src = kunit_kmalloc(test, total, GFP_KERNEL);
	dst = kunit_kmalloc(test, total + COPY_GUARD, GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, src);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, dst);
	prandom_seed_state(&rnd, SROCE_KUNIT_SEED + 8);
	prandom_bytes_state(&rnd, src, total);
	skb = icrc_skb_build(test, src);
	KUNIT_ASSERT_EQ(test, skb->len, total);
	for (a = 0; a < ARRAY_SIZE(edges); a++) {
		for (b = a; b < ARRAY_SIZE(edges); b++) {
			unsigned int off = edges[a], len = edges[b] - off;
			u32 seed = prandom_u32_state(&rnd);
			u32 want = ref_crc32(seed, src + off, len);
			unsigned int i;

			if (edges[b] > total)
				continue;
			memset(dst, 0xa5, total + COPY_GUARD);
			KUNIT_EXPECT_EQ_MSG(test,
					    sroce_icrc_copy_skb(seed, dst, skb,
								off, len),
					    want, "copy, %u bytes at %u", len,
					    off);
			KUNIT_EXPECT_EQ_MSG(test,
					    sroce_icrc_skb(seed, skb, off, len),
					    want, "CRC, %u bytes at %u", len,
					    off);
			SROCE_EXPECT_BYTES(test, dst, src + off, len,
					   "skb copy");
			for (i = len; i < len + COPY_GUARD; i++)
				KUNIT_EXPECT_EQ(test, dst[i], 0xa5);
			if (test->status == KUNIT_FAILURE)
				break;
		}
	}
	kfree_skb(skb);
}

/*
 * A CRC continued over a part equals one combined with the part's own CRC
 * from 0: how a sender joins a payload's CRC, computed as it copied the
 * payload, to the headers' in front of it.
 */
static void icrc_combine(struct kunit *test)
{
	static const size_t lens[] = {
		0, 1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 255, 256, 1023, 1024, 1025,
		4095, 4096, 4097, MAX_PAYLOAD,
	};
	u8 *buf = kunit_kmalloc(test, 64 + MAX_PAYLOAD, GFP_KERNEL);
	struct rnd_state rnd;
	unsigned int i;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, buf);
	prandom_seed_state(&rnd, SROCE_KUNIT_SEED + 7);
	prandom_bytes_state(&rnd, buf, 64 + MAX_PAYLOAD);
	for (i = 0; i < ARRAY_SIZE(lens); i++) {
		size_t head = prandom_u32_state(&rnd) % 65;
		u32 seed = prandom_u32_state(&rnd);
		u32 front = ref_crc32(seed, buf, head);
		u32 part = sroce_icrc_update(0, buf + head, lens[i]);

		KUNIT_EXPECT_EQ_MSG(test,
				    sroce_icrc_combine(front, part, lens[i]),
				    ref_crc32(seed, buf, head + lens[i]),
				    "%zu bytes after %zu", lens[i], head);
	}
}

/*
 * Flip every bit of the headers one at a time: the ICRC must stay the same
 * exactly when the bit is one it masks, and change otherwise.
 */
static void icrc_masked_fields(struct kunit *test, bool ipv6)
{
	size_t hlen = hdrs_len(ipv6), len = hlen + 64, off;
	u8 masked[MAX_HDRS] = {};
	struct rnd_state rnd;
	u8 *pkt;
	u32 base;
	int bit;

	ref_mask(masked, ipv6);
	prandom_seed_state(&rnd, SROCE_KUNIT_SEED + 3 + ipv6);
	pkt = random_packet(test, &rnd, ipv6, len);
	base = sroce_icrc(pkt, ipv6, len);
	KUNIT_ASSERT_EQ(test, base, ref_icrc(pkt, ipv6, len));

	for (off = 0; off < hlen; off++) {
		for (bit = 0; bit < 8; bit++) {
			bool covered = !(masked[off] & BIT(bit));

			pkt[off] ^= BIT(bit);
			if (covered)
				KUNIT_EXPECT_NE_MSG(test, sroce_icrc(pkt, ipv6, len), base,
						    "byte %zu bit %d is covered by the ICRC",
						    off, bit);
			else
				KUNIT_EXPECT_EQ_MSG(test, sroce_icrc(pkt, ipv6, len), base,
						    "byte %zu bit %d is masked from the ICRC",
						    off, bit);
			pkt[off] ^= BIT(bit);
		}
	}
	for (off = hlen; off < len; off++) {
		pkt[off] ^= BIT(off % 8);
		KUNIT_EXPECT_NE_MSG(test, sroce_icrc(pkt, ipv6, len), base,
				    "payload byte %zu", off);
		pkt[off] ^= BIT(off % 8);
	}
}

static void icrc_masked_ipv4(struct kunit *test)
{
	icrc_masked_fields(test, false);
}

static void icrc_masked_ipv6(struct kunit *test)
{
	icrc_masked_fields(test, true);
}

static void icrc_vector_desc(const struct sroce_icrc_vector *v, char *desc)
{
	strscpy(desc, v->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(icrc_vector, sroce_icrc_vectors, icrc_vector_desc);

/*
 * Packets another RoCEv2 implementation put on a wire, ICRC included: the
 * last four bytes of each are the ICRC in the order it travels.
 */
static void icrc_captured(struct kunit *test)
{
	const struct sroce_icrc_vector *v = test->param_value;
	size_t len = v->len - SROCE_ICRC_LEN;
	__le32 icrc = sroce_icrc_packet(v->pkt, v->ipv6, len);

	KUNIT_ASSERT_GT(test, v->len, hdrs_len(v->ipv6) + SROCE_ICRC_LEN);
	/* The vector must agree with the reference, or it is no vector. */
	KUNIT_EXPECT_EQ(test, ref_icrc(v->pkt, v->ipv6, len),
			sroce_get_le32(v->pkt + len));
	SROCE_EXPECT_BYTES(test, &icrc, v->pkt + len, SROCE_ICRC_LEN,
			   "ICRC on the wire");
}

static struct kunit_case sroce_icrc_cases[] = {
	KUNIT_CASE(icrc_reference_crc32),
	KUNIT_CASE_PARAM(icrc_captured, icrc_vector_gen_params),
	KUNIT_CASE(icrc_headers_only),
	KUNIT_CASE(icrc_random_ipv4),
	KUNIT_CASE(icrc_random_ipv6),
	KUNIT_CASE(icrc_incremental),
	KUNIT_CASE(icrc_copy),
	KUNIT_CASE(icrc_copy_long),
	KUNIT_CASE(icrc_combine),
	KUNIT_CASE(icrc_copy_skb),
	KUNIT_CASE(icrc_random_grh),
	KUNIT_CASE(icrc_masked_ipv4),
	KUNIT_CASE(icrc_masked_ipv6),
	{}
};

static struct kunit_suite sroce_icrc_suite = {
	.name = "sroce_icrc",
	.test_cases = sroce_icrc_cases,
};

kunit_test_suite(sroce_icrc_suite);
