// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The RoCEv2 invariant CRC: the masked headers, the CRC engine chosen at
 * load, and whole packets' ICRCs.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <crypto/hash.h>
#include <linux/crc32.h>
#include <linux/export.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/ktime.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/sizes.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/udp.h>
#include <kunit/visibility.h>
#ifdef SROCE_HAVE_LINUX_UNALIGNED_H
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

#include <sroce/wire.h>

/*
 * sroce's own table-driven CRC: the CRC of crc32_le() (IEEE 802.3,
 * reflected polynomial 0xedb88320, the running value neither inverted nor
 * reflected between calls), sixteen bytes a step. Table k holds the CRC
 * of a byte followed by k zero bytes, so a step is sixteen independent
 * lookups. The kernel's crc32_le() takes eight bytes a step; this one is
 * faster, and it can copy the bytes as it reads them (sroce_icrc_copy()),
 * which saves the sender a second pass over every payload it copies.
 */
#define SROCE_CRC_POLY		0xedb88320
#define SROCE_CRC_SLICES	16

static u32 sroce_crc_tab[SROCE_CRC_SLICES][256] __ro_after_init;

/*
 * The CRC's running value is a polynomial over GF(2), bit 31 the
 * coefficient of x^0 and bit 0 that of x^31 (reflected). Running it over
 * a zero byte multiplies it by x^8 modulo the CRC's polynomial; entry k of
 * this table is x^(8 * 2^k) modulo that polynomial, what running it over
 * 2^k zero bytes multiplies it by.
 */
static u32 sroce_crc_pow[32] __ro_after_init;

/* @a times @b modulo the CRC's polynomial, both reflected. */
static u32 sroce_crc_mul(u32 a, u32 b)
{
	u32 prod = 0;
	int i;

	for (i = 0; i < 32; i++, a <<= 1) {
		if (a & BIT(31))
			prod ^= b;
		/* b times x: x^31's coefficient carries into x^32 = poly. */
		b = (b >> 1) ^ (b & 1 ? SROCE_CRC_POLY : 0);
	}
	return prod;
}

/* The running value after @len zero bytes. */
static u32 sroce_crc_shift(u32 crc, u32 len)
{
	unsigned int k;

	for (k = 0; len; k++, len >>= 1)
		if (len & 1)
			crc = sroce_crc_mul(crc, sroce_crc_pow[k]);
	return crc;
}

static void __init sroce_crc_tab_init(void)
{
	unsigned int i, k;

	/* x^8: bit 31 is x^0. */
	sroce_crc_pow[0] = BIT(31 - 8);
	for (k = 1; k < ARRAY_SIZE(sroce_crc_pow); k++)
		sroce_crc_pow[k] = sroce_crc_mul(sroce_crc_pow[k - 1],
						 sroce_crc_pow[k - 1]);

	for (i = 0; i < 256; i++) {
		u32 crc = i;

		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (crc & 1 ? SROCE_CRC_POLY : 0);
		sroce_crc_tab[0][i] = crc;
	}
	for (k = 1; k < SROCE_CRC_SLICES; k++)
		for (i = 0; i < 256; i++)
			sroce_crc_tab[k][i] = (sroce_crc_tab[k - 1][i] >> 8) ^
				sroce_crc_tab[0][sroce_crc_tab[k - 1][i] & 0xff];
}

#define SROCE_CRC_BYTE(t, x, n)	((t)[n][(x) & 0xff])

/*
 * The CRC after sixteen bytes: @lo holds the first eight, little-endian,
 * already xored with the running CRC; @hi the next eight.
 */
static __always_inline u32 sroce_crc_step(u64 lo, u64 hi)
{
	const u32 (*t)[256] = sroce_crc_tab;

	return SROCE_CRC_BYTE(t, lo, 15) ^ SROCE_CRC_BYTE(t, lo >> 8, 14) ^
	       SROCE_CRC_BYTE(t, lo >> 16, 13) ^ SROCE_CRC_BYTE(t, lo >> 24, 12) ^
	       SROCE_CRC_BYTE(t, lo >> 32, 11) ^ SROCE_CRC_BYTE(t, lo >> 40, 10) ^
	       SROCE_CRC_BYTE(t, lo >> 48, 9) ^ SROCE_CRC_BYTE(t, lo >> 56, 8) ^
	       SROCE_CRC_BYTE(t, hi, 7) ^ SROCE_CRC_BYTE(t, hi >> 8, 6) ^
	       SROCE_CRC_BYTE(t, hi >> 16, 5) ^ SROCE_CRC_BYTE(t, hi >> 24, 4) ^
	       SROCE_CRC_BYTE(t, hi >> 32, 3) ^ SROCE_CRC_BYTE(t, hi >> 40, 2) ^
	       SROCE_CRC_BYTE(t, hi >> 48, 1) ^ SROCE_CRC_BYTE(t, hi >> 56, 0);
}

static __always_inline u32 sroce_crc_byte(u32 crc, u8 b)
{
	return (crc >> 8) ^ sroce_crc_tab[0][(crc ^ b) & 0xff];
}

VISIBLE_IF_KUNIT u32 sroce_crc_tables(u32 crc, const u8 *p, size_t len)
{
	for (; len >= 16; len -= 16, p += 16)
		crc = sroce_crc_step(get_unaligned_le64(p) ^ crc,
				     get_unaligned_le64(p + 8));
	while (len--)
		crc = sroce_crc_byte(crc, *p++);
	return crc;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_crc_tables);

/* sroce_crc_tables() that also copies the bytes from @p to @d. */
VISIBLE_IF_KUNIT u32 sroce_crc_tables_copy(u32 crc, u8 *d, const u8 *p,
					   size_t len)
{
	for (; len >= 16; len -= 16, p += 16, d += 16) {
		__le64 lo = get_unaligned((const __le64 *)p);
		__le64 hi = get_unaligned((const __le64 *)(p + 8));

		put_unaligned(lo, (__le64 *)d);
		put_unaligned(hi, (__le64 *)(d + 8));
		crc = sroce_crc_step(le64_to_cpu(lo) ^ crc, le64_to_cpu(hi));
	}
	/*
	 * Each byte read once: a process may be writing its region meanwhile,
	 * and the CRC must cover the byte stored, as the words above do.
	 */
	while (len--) {
		u8 b = *p++;

		*d++ = b;
		crc = sroce_crc_byte(crc, b);
	}
	return crc;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_crc_tables_copy);

/*
 * A second software CRC, without tables: the CRC's polynomial divides
 *
 *	M = x^161 + x^93 + x^77 + x^69 + x^68 + x^37 + 1,
 *
 * found by a search for multiples with few terms, so the data and the data
 * reduced modulo M have the same CRC. In the stream (first bit the highest
 * power), reducing one bit modulo M clears it and flips the six bits 68,
 * 84, 92, 93, 124 and 161 places further on (161 minus each lower power).
 * So a 64-bit word, once every earlier word's flips are in, is folded into
 * the three words after it with twelve shifts and xors, kept in registers;
 * what is left, the last 161 bits and up to a word more, goes through the
 * tables. A table lookup is a memory access: under an emulator (QEMU TCG)
 * an emulated one, and there the fold ran at 1.6 GB/s where slice-by-16
 * ran at 0.73. sroce_icrc_init() times both.
 */
#define SROCE_CRC_FOLD_DEGREE	161
/* Below this length the fold leaves the tables nearly all the work. */
#define SROCE_CRC_FOLD_MIN	64

/* @v, a word with the flips of the words before it, into the three after. */
static __always_inline void sroce_crc_fold_word(u64 v, u64 *n1, u64 *n2,
						u64 *n3)
{
	*n1 = *n2 ^ v << 4 ^ v << 20 ^ v << 28 ^ v << 29 ^ v << 60;
	*n2 = *n3 ^ v >> 60 ^ v >> 44 ^ v >> 36 ^ v >> 35 ^ v >> 4 ^ v << 33;
	*n3 = v >> 31;
}

/*
 * The fold over @len bytes at @p (at least SROCE_CRC_FOLD_MIN), copying
 * them to @d unless NULL; each byte is read once.
 */
static __always_inline u32 sroce_crc_fold(u32 crc, u8 *d, const u8 *p,
					  size_t len)
{
	/* Words wholly above x^161, which the fold clears. */
	size_t i, words = (len * 8 - SROCE_CRC_FOLD_DEGREE) / 64;
	/* The running CRC is what the first 32 bits of the data are xored with. */
	u64 n1 = crc, n2 = 0, n3 = 0;
	u8 tail[4 * sizeof(u64)];

	for (i = 0; i < words; i++, p += 8) {
		__le64 w = get_unaligned((const __le64 *)p);

		if (d) {
			put_unaligned(w, (__le64 *)d);
			d += 8;
		}
		sroce_crc_fold_word(le64_to_cpu(w) ^ n1, &n1, &n2, &n3);
	}
	/* 21 to 28 bytes; the flips reach no further than the data. */
	len -= words * 8;
	memcpy(tail, p, len);
	if (d)
		memcpy(d, tail, len);
	memset(tail + len, 0, sizeof(tail) - len);
	put_unaligned_le64(get_unaligned_le64(tail) ^ n1, tail);
	put_unaligned_le64(get_unaligned_le64(tail + 8) ^ n2, tail + 8);
	put_unaligned_le64(get_unaligned_le64(tail + 16) ^ n3, tail + 16);
	/* All before the tail is now zero, which leaves a zero CRC zero. */
	return sroce_crc_tables(0, tail, len);
}

VISIBLE_IF_KUNIT u32 sroce_crc_fold_update(u32 crc, const void *p, size_t len)
{
	if (len < SROCE_CRC_FOLD_MIN)
		return sroce_crc_tables(crc, p, len);
	return sroce_crc_fold(crc, NULL, p, len);
}
EXPORT_SYMBOL_IF_KUNIT(sroce_crc_fold_update);

VISIBLE_IF_KUNIT u32 sroce_crc_fold_copy(u32 crc, void *d, const void *p,
					 size_t len)
{
	if (len < SROCE_CRC_FOLD_MIN)
		return sroce_crc_tables_copy(crc, d, p, len);
	return sroce_crc_fold(crc, d, p, len);
}
EXPORT_SYMBOL_IF_KUNIT(sroce_crc_fold_copy);

/*
 * The ICRC's running value after the eight 0xff bytes that replace the
 * LRH: the same for every packet, so computed once, at load.
 */
static u32 sroce_icrc_seed __ro_after_init;

static void __init sroce_icrc_seed_init(void)
{
	static const u8 masked_lrh[8] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff
	};

	sroce_icrc_seed = sroce_crc_tables(~0U, masked_lrh,
					   sizeof(masked_lrh));
}

/* The IPv6 header (or GRH) fields a router may change: masked to ones. */
static void sroce_icrc_mask_ip6(struct ipv6hdr *ip6)
{
	/* Traffic class and flow label: all but the version nibble. */
	ip6->priority = 0xf;
	memset(ip6->flow_lbl, 0xff, sizeof(ip6->flow_lbl));
	ip6->hop_limit = 0xff;
}

u32 sroce_icrc_hdr_grh(const void *grh)
{
	u8 buf[sizeof(struct ipv6hdr) + sizeof(struct sroce_bth)];
	struct sroce_bth *bth = (struct sroce_bth *)(buf + sizeof(struct ipv6hdr));

	memcpy(buf, grh, sizeof(buf));
	sroce_icrc_mask_ip6((struct ipv6hdr *)buf);
	bth->dqpn |= cpu_to_be32(~SROCE_QPN_MASK);
	return sroce_crc_tables(sroce_icrc_seed, buf, sizeof(buf));
}
EXPORT_SYMBOL_IF_KUNIT(sroce_icrc_hdr_grh);

u32 sroce_icrc_hdr(const void *l3, bool ipv6)
{
	u8 buf[sizeof(struct ipv6hdr) + sizeof(struct udphdr) +
	       sizeof(struct sroce_bth)];
	size_t iplen = ipv6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr);
	size_t len = iplen + sizeof(struct udphdr) + sizeof(struct sroce_bth);
	struct udphdr *udp = (struct udphdr *)(buf + iplen);
	struct sroce_bth *bth = (struct sroce_bth *)(udp + 1);

	memcpy(buf, l3, len);
	if (ipv6) {
		sroce_icrc_mask_ip6((struct ipv6hdr *)buf);
	} else {
		struct iphdr *ip4 = (struct iphdr *)buf;

		ip4->tos = 0xff;
		ip4->ttl = 0xff;
		ip4->check = (__force __sum16)0xffff;
	}
	udp->check = (__force __sum16)0xffff;
	bth->dqpn |= cpu_to_be32(~SROCE_QPN_MASK);

	return sroce_crc_tables(sroce_icrc_seed, buf, len);
}
EXPORT_SYMBOL_IF_KUNIT(sroce_icrc_hdr);

/*
 * The crypto API's "crc32" is the same CRC as crc32_le() (reflected
 * polynomial 0xedb88320, running value neither inverted nor reflected
 * between calls), and on x86 with PCLMULQDQ its driver folds the data with
 * carry-less multiplies instead of table lookups. It is used only when a
 * test at module load finds it computes the same CRCs, and, unless the
 * icrc_accel parameter forces it, that it is faster than the tables above:
 * under an emulator (QEMU TCG) the SIMD path is not always the quicker one.
 */
static int sroce_icrc_accel = -1;
module_param_named(icrc_accel, sroce_icrc_accel, int, 0444);
MODULE_PARM_DESC(icrc_accel,
		 "ICRC through the crypto API's crc32: -1 when measured faster at load (default), 0 never, 1 whenever it is correct");

/* The crc32 transform in use, or NULL for the tables; set at load only. */
static struct crypto_shash *sroce_icrc_tfm __read_mostly;

/*
 * The software CRC: the fold (sroce_crc_fold()) or the tables, whichever a
 * test at load finds faster unless the icrc_fold parameter says otherwise.
 */
static int sroce_icrc_fold = -1;
module_param_named(icrc_fold, sroce_icrc_fold, int, 0444);
MODULE_PARM_DESC(icrc_fold,
		 "software ICRC by folding instead of slice-by-16 tables: -1 when measured faster at load (default), 0 never, 1 always");

/* Set at load only. */
static bool sroce_icrc_use_fold __read_mostly;

static u32 sroce_crc_soft(u32 crc, const u8 *p, size_t len)
{
	if (sroce_icrc_use_fold)
		return sroce_crc_fold_update(crc, p, len);
	return sroce_crc_tables(crc, p, len);
}

static u32 sroce_crc_soft_copy(u32 crc, u8 *d, const u8 *p, size_t len)
{
	if (sroce_icrc_use_fold)
		return sroce_crc_fold_copy(crc, d, p, len);
	return sroce_crc_tables_copy(crc, d, p, len);
}

/*
 * Below this many bytes the crypto call's overhead outweighs any gain (the
 * x86 driver itself falls back to the table under 80 bytes).
 */
#define SROCE_ICRC_ACCEL_MIN	128

static u32 sroce_icrc_shash(struct crypto_shash *tfm, u32 crc,
			    const void *data, unsigned int len)
{
	SHASH_DESC_ON_STACK(desc, tfm);
	u32 out = crc;

	desc->tfm = tfm;
	/*
	 * The state is the running u32 itself (see sroce_icrc_init()). A CRC
	 * holds no secret, so the descriptor is not wiped afterwards as a
	 * keyed hash's would be: that would cost as much as a short CRC.
	 */
	if (crypto_shash_import(desc, &crc) ||
	    crypto_shash_update(desc, data, len) ||
	    crypto_shash_export(desc, &out))
		out = sroce_crc_soft(crc, data, len);
	return out;
}

u32 sroce_icrc_update(u32 crc, const void *data, size_t len)
{
	struct crypto_shash *tfm = sroce_icrc_tfm;

	if (tfm && len >= SROCE_ICRC_ACCEL_MIN && len <= UINT_MAX)
		return sroce_icrc_shash(tfm, crc, data, len);
	return sroce_crc_soft(crc, data, len);
}
EXPORT_SYMBOL_IF_KUNIT(sroce_icrc_update);

u32 sroce_icrc_copy(u32 crc, void *dst, const void *src, size_t len)
{
	/* With the SIMD driver, its pass after the copy beats the tables. */
	if (sroce_icrc_tfm && len >= SROCE_ICRC_ACCEL_MIN) {
		memcpy(dst, src, len);
		return sroce_icrc_update(crc, dst, len);
	}
	return sroce_crc_soft_copy(crc, dst, src, len);
}
EXPORT_SYMBOL_IF_KUNIT(sroce_icrc_copy);

u32 sroce_icrc_combine(u32 crc, u32 part_crc, u32 part_len)
{
	/*
	 * The CRC is linear: running it from @crc over the part equals
	 * running it from @crc over as many zero bytes (the shift) plus
	 * running it from 0 over the part. A full packet's payload is a
	 * power of two long, one multiplication.
	 */
	return sroce_crc_shift(crc, part_len) ^ part_crc;
}
EXPORT_SYMBOL_IF_KUNIT(sroce_icrc_combine);

/* Continue @crc over bytes of @skb, copying them to @dst unless NULL. */
static u32 sroce_icrc_skb_walk(u32 crc, u8 *dst, struct sk_buff *skb,
			       unsigned int offset, unsigned int len)
{
	struct skb_seq_state st;
	unsigned int consumed = 0, n;
	const u8 *data;

	skb_prepare_seq_read(skb, offset, offset + len, &st);
	while (consumed < len && (n = skb_seq_read(consumed, &data, &st))) {
		/* A block may run past the end asked for. */
		n = min(n, len - consumed);
		crc = dst ? sroce_icrc_copy(crc, dst + consumed, data, n) :
			    sroce_icrc_update(crc, data, n);
		consumed += n;
	}
	skb_abort_seq_read(&st);
	return crc;
}

/**
 * sroce_icrc_skb() - continue an ICRC over bytes of an skb
 * @crc: the running CRC
 * @skb: the packet
 * @offset: the first byte, from skb->data
 * @len: the byte count
 *
 * The bytes may be in the linear part or in page fragments (a received
 * packet, or a zero-copy one being sent).
 *
 * Return: the running CRC.
 */
u32 sroce_icrc_skb(u32 crc, struct sk_buff *skb, unsigned int offset,
		   unsigned int len)
{
	return sroce_icrc_skb_walk(crc, NULL, skb, offset, len);
}
EXPORT_SYMBOL_IF_KUNIT(sroce_icrc_skb);

/**
 * sroce_icrc_copy_skb() - copy bytes out of an skb, continuing an ICRC
 * @crc: the running CRC
 * @dst: where the bytes go
 * @skb: the packet
 * @offset: the first byte, from skb->data
 * @len: the byte count
 *
 * As sroce_icrc_skb() followed by skb_copy_bits(), in one pass: each byte
 * is read once, so the CRC covers exactly what was stored.
 *
 * Return: the running CRC.
 */
u32 sroce_icrc_copy_skb(u32 crc, void *dst, struct sk_buff *skb,
			unsigned int offset, unsigned int len)
{
	return sroce_icrc_skb_walk(crc, dst, skb, offset, len);
}
EXPORT_SYMBOL_IF_KUNIT(sroce_icrc_copy_skb);

/* The self-test's buffer, and the piece a packet's payload comes in. */
#define SROCE_ICRC_TEST_LEN	SZ_64K
#define SROCE_ICRC_TEST_PIECE	1024

/* The CRCs sroce_icrc_init() tests and chooses from. */
enum sroce_icrc_engine {
	SROCE_ICRC_TABLES,
	SROCE_ICRC_FOLD,
	SROCE_ICRC_ACCEL,
	SROCE_ICRC_ENGINES
};

static u32 sroce_icrc_run(enum sroce_icrc_engine e, struct crypto_shash *tfm,
			  u32 crc, const u8 *p, size_t len)
{
	switch (e) {
	case SROCE_ICRC_FOLD:
		return sroce_crc_fold_update(crc, p, len);
	case SROCE_ICRC_ACCEL:
		return sroce_icrc_shash(tfm, crc, p, len);
	default:
		return sroce_crc_tables(crc, p, len);
	}
}

/* Whether engine @e agrees with crc32_le() on odd lengths, offsets, seeds. */
static bool sroce_icrc_agrees(enum sroce_icrc_engine e,
			      struct crypto_shash *tfm, const u8 *buf)
{
	static const unsigned int lens[] = {
		0, 1, 15, 63, 64, 79, 80, 81, 127, 128, 129, 255, 1000, 1024,
		1500, 4095, 4096, 4097, 9000, SROCE_ICRC_TEST_LEN - 3,
	};
	unsigned int i, off;

	for (i = 0; i < ARRAY_SIZE(lens); i++) {
		for (off = 0; off < 4 && off + lens[i] <= SROCE_ICRC_TEST_LEN;
		     off++) {
			u32 seed = get_random_u32();

			if (sroce_icrc_run(e, tfm, seed, buf + off, lens[i]) !=
			    crc32_le(seed, buf + off, lens[i]))
				return false;
		}
	}
	return true;
}

/* Nanoseconds for the best of a few passes over @buf, piece by piece. */
static u64 sroce_icrc_time(enum sroce_icrc_engine e, struct crypto_shash *tfm,
			   const u8 *buf)
{
	u64 best = U64_MAX;
	unsigned int round, off;
	u32 crc = 0;

	for (round = 0; round < 5; round++) {
		u64 start = ktime_get_ns();

		for (off = 0; off < SROCE_ICRC_TEST_LEN;
		     off += SROCE_ICRC_TEST_PIECE)
			crc = sroce_icrc_run(e, tfm, crc, buf + off,
					     SROCE_ICRC_TEST_PIECE);
		best = min(best, ktime_get_ns() - start);
		cond_resched();
	}
	/* Keep the loop from being optimised away. */
	OPTIMIZER_HIDE_VAR(crc);
	return max_t(u64, best, 1);
}

/* MB/s of @ns over the test buffer. */
static unsigned long sroce_icrc_mbps(u64 ns)
{
	return div64_u64((u64)SROCE_ICRC_TEST_LEN * 1000, ns);
}

/*
 * The crypto API's crc32 where sroce can use it and it agrees with
 * crc32_le(), or NULL. Unless icrc_accel forces it, its generic driver
 * (crc32_le() itself, slower than the tables) is not taken.
 */
static struct crypto_shash *__init sroce_icrc_accel_get(const u8 *buf)
{
	struct crypto_shash *tfm = crypto_alloc_shash("crc32", 0, 0);
	const char *driver;

	if (IS_ERR(tfm)) {
		pr_info("icrc: no crc32 in the crypto API (%ld)\n", PTR_ERR(tfm));
		return NULL;
	}
	driver = crypto_shash_driver_name(tfm);
	/*
	 * sroce_icrc_shash() hands the running CRC over as the whole state;
	 * a driver keeping anything else would need a different hand-over.
	 */
	if (crypto_shash_descsize(tfm) != sizeof(u32) ||
	    crypto_shash_statesize(tfm) != sizeof(u32)) {
		pr_info("icrc: %s keeps a state other than the CRC\n", driver);
		goto free_tfm;
	}
	if (!strcmp(driver, "crc32-generic") && sroce_icrc_accel < 0)
		goto free_tfm;
	if (!sroce_icrc_agrees(SROCE_ICRC_ACCEL, tfm, buf)) {
		pr_warn("icrc: %s disagrees with crc32_le\n", driver);
		goto free_tfm;
	}
	return tfm;

free_tfm:
	crypto_free_shash(tfm);
	return NULL;
}

/* Whether to fold (icrc_fold, else the faster); fills @ns of what it timed. */
static bool __init sroce_icrc_fold_chosen(const u8 *buf, u64 *ns)
{
	if (!sroce_icrc_fold)
		return false;
	if (!sroce_icrc_agrees(SROCE_ICRC_FOLD, NULL, buf)) {
		pr_warn("icrc: the fold disagrees with crc32_le\n");
		return false;
	}
	if (sroce_icrc_fold > 0)
		return true;
	ns[SROCE_ICRC_TABLES] = sroce_icrc_time(SROCE_ICRC_TABLES, NULL, buf);
	ns[SROCE_ICRC_FOLD] = sroce_icrc_time(SROCE_ICRC_FOLD, NULL, buf);
	return ns[SROCE_ICRC_FOLD] < ns[SROCE_ICRC_TABLES];
}

void __init sroce_icrc_init(void)
{
	const char *name[SROCE_ICRC_ENGINES] = { "slice-by-16", "fold" };
	u64 ns[SROCE_ICRC_ENGINES] = {};
	enum sroce_icrc_engine e, soft;
	struct crypto_shash *tfm = NULL;
	char line[160] = "";
	size_t n = 0;
	u8 *buf;

	sroce_crc_tab_init();
	sroce_icrc_seed_init();
	buf = kvmalloc(SROCE_ICRC_TEST_LEN, GFP_KERNEL);
	if (!buf) {
		pr_warn("icrc: no memory to test the CRCs, using slice-by-16\n");
		return;
	}
	get_random_bytes(buf, SROCE_ICRC_TEST_LEN);
	sroce_icrc_use_fold = sroce_icrc_fold_chosen(buf, ns);
	soft = sroce_icrc_use_fold ? SROCE_ICRC_FOLD : SROCE_ICRC_TABLES;

	if (sroce_icrc_accel)
		tfm = sroce_icrc_accel_get(buf);
	if (tfm) {
		name[SROCE_ICRC_ACCEL] = crypto_shash_driver_name(tfm);
		if (!ns[soft])
			ns[soft] = sroce_icrc_time(soft, NULL, buf);
		ns[SROCE_ICRC_ACCEL] = sroce_icrc_time(SROCE_ICRC_ACCEL, tfm,
						       buf);
		if (sroce_icrc_accel > 0 || ns[SROCE_ICRC_ACCEL] < ns[soft])
			sroce_icrc_tfm = tfm;
	}
	kvfree(buf);

	for (e = 0; e < SROCE_ICRC_ENGINES; e++)
		if (ns[e])
			n += scnprintf(line + n, sizeof(line) - n, "%s%s %lu MB/s",
				       n ? ", " : "", name[e],
				       sroce_icrc_mbps(ns[e]));
	e = sroce_icrc_tfm ? SROCE_ICRC_ACCEL : soft;
	if (n)
		pr_info("icrc: %s (%u-byte pieces): using %s\n", line,
			SROCE_ICRC_TEST_PIECE, name[e]);
	else
		pr_info("icrc: using %s\n", name[e]);
	/* The name came from the transform: freed only after the message. */
	if (tfm && !sroce_icrc_tfm)
		crypto_free_shash(tfm);
}

void sroce_icrc_exit(void)
{
	crypto_free_shash(sroce_icrc_tfm);
	sroce_icrc_tfm = NULL;
}

__le32 sroce_icrc_packet(const void *l3, bool ipv6, size_t len)
{
	size_t hdrs = (ipv6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr)) +
		      sizeof(struct udphdr) + sizeof(struct sroce_bth);
	u32 crc = sroce_icrc_hdr(l3, ipv6);

	crc = sroce_icrc_update(crc, (const u8 *)l3 + hdrs, len - hdrs);
	return sroce_icrc_final(crc);
}
EXPORT_SYMBOL_IF_KUNIT(sroce_icrc_packet);

__le32 sroce_icrc_packet_grh(const void *grh, size_t len)
{
	size_t hdrs = sizeof(struct ipv6hdr) + sizeof(struct sroce_bth);
	u32 crc = sroce_icrc_hdr_grh(grh);

	crc = sroce_icrc_update(crc, (const u8 *)grh + hdrs, len - hdrs);
	return sroce_icrc_final(crc);
}
EXPORT_SYMBOL_IF_KUNIT(sroce_icrc_packet_grh);
