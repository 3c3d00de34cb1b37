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

static u32 sroce_crc_tables(u32 crc, const u8 *p, size_t len)
{
	for (; len >= 16; len -= 16, p += 16)
		crc = sroce_crc_step(get_unaligned_le64(p) ^ crc,
				     get_unaligned_le64(p + 8));
	while (len--)
		crc = sroce_crc_byte(crc, *p++);
	return crc;
}

/* sroce_crc_tables() that also copies the bytes from @p to @d. */
static u32 sroce_crc_tables_copy(u32 crc, u8 *d, const u8 *p, size_t len)
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

/* The ICRC's seed after the eight 0xff bytes that replace the LRH. */
static u32 sroce_icrc_seed(void)
{
	static const u8 masked_lrh[8] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff
	};

	return sroce_crc_tables(~0U, masked_lrh, sizeof(masked_lrh));
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
	return sroce_crc_tables(sroce_icrc_seed(), buf, sizeof(buf));
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

	return sroce_crc_tables(sroce_icrc_seed(), buf, len);
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
		out = sroce_crc_tables(crc, data, len);
	return out;
}

u32 sroce_icrc_update(u32 crc, const void *data, size_t len)
{
	struct crypto_shash *tfm = sroce_icrc_tfm;

	if (tfm && len >= SROCE_ICRC_ACCEL_MIN && len <= UINT_MAX)
		return sroce_icrc_shash(tfm, crc, data, len);
	return sroce_crc_tables(crc, data, len);
}
EXPORT_SYMBOL_IF_KUNIT(sroce_icrc_update);

u32 sroce_icrc_copy(u32 crc, void *dst, const void *src, size_t len)
{
	/* With the SIMD driver, its pass after the copy beats the tables. */
	if (sroce_icrc_tfm && len >= SROCE_ICRC_ACCEL_MIN) {
		memcpy(dst, src, len);
		return sroce_icrc_update(crc, dst, len);
	}
	return sroce_crc_tables_copy(crc, dst, src, len);
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

/* Whether @tfm agrees with crc32_le() on odd lengths, offsets and seeds. */
static bool sroce_icrc_tfm_agrees(struct crypto_shash *tfm, const u8 *buf)
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

			if (sroce_icrc_shash(tfm, seed, buf + off, lens[i]) !=
			    crc32_le(seed, buf + off, lens[i]))
				return false;
		}
	}
	return true;
}

/* Nanoseconds for the best of a few passes over @buf, piece by piece. */
static u64 sroce_icrc_time(struct crypto_shash *tfm, const u8 *buf)
{
	u64 best = U64_MAX;
	unsigned int round, off;
	u32 crc = 0;

	for (round = 0; round < 5; round++) {
		u64 start = ktime_get_ns();

		for (off = 0; off < SROCE_ICRC_TEST_LEN;
		     off += SROCE_ICRC_TEST_PIECE) {
			if (tfm)
				crc = sroce_icrc_shash(tfm, crc, buf + off,
						       SROCE_ICRC_TEST_PIECE);
			else
				crc = sroce_crc_tables(crc, buf + off,
						       SROCE_ICRC_TEST_PIECE);
		}
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

void __init sroce_icrc_init(void)
{
	struct crypto_shash *tfm;
	const char *driver;
	u64 table_ns, accel_ns;
	u8 *buf;

	sroce_crc_tab_init();
	if (!sroce_icrc_accel)
		return;
	tfm = crypto_alloc_shash("crc32", 0, 0);
	if (IS_ERR(tfm)) {
		pr_info("icrc: no crc32 in the crypto API (%ld), using slice-by-16\n",
			PTR_ERR(tfm));
		return;
	}
	driver = crypto_shash_driver_name(tfm);
	/*
	 * sroce_icrc_shash() hands the running CRC over as the whole state;
	 * a driver keeping anything else would need a different hand-over.
	 */
	if (crypto_shash_descsize(tfm) != sizeof(u32) ||
	    crypto_shash_statesize(tfm) != sizeof(u32)) {
		pr_info("icrc: %s keeps a state other than the CRC, using slice-by-16\n",
			driver);
		goto free_tfm;
	}
	/* The generic driver is crc32_le(), slower than the tables. */
	if (!strcmp(driver, "crc32-generic") && sroce_icrc_accel < 0)
		goto free_tfm;

	buf = kvmalloc(SROCE_ICRC_TEST_LEN, GFP_KERNEL);
	if (!buf)
		goto free_tfm;
	get_random_bytes(buf, SROCE_ICRC_TEST_LEN);
	if (!sroce_icrc_tfm_agrees(tfm, buf)) {
		pr_warn("icrc: %s disagrees with crc32_le, using slice-by-16\n",
			driver);
		goto free_buf;
	}
	table_ns = sroce_icrc_time(NULL, buf);
	accel_ns = sroce_icrc_time(tfm, buf);
	pr_info("icrc: slice-by-16 %lu MB/s, %s %lu MB/s (%u-byte pieces): using %s\n",
		sroce_icrc_mbps(table_ns), driver, sroce_icrc_mbps(accel_ns),
		SROCE_ICRC_TEST_PIECE,
		sroce_icrc_accel > 0 || accel_ns < table_ns ? driver :
							      "slice-by-16");
	if (sroce_icrc_accel < 0 && accel_ns >= table_ns)
		goto free_buf;
	kvfree(buf);
	sroce_icrc_tfm = tfm;
	return;

free_buf:
	kvfree(buf);
free_tfm:
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
