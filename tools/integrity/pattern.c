// SPDX-License-Identifier: GPL-2.0
/*
 * sroce-integrity: payload patterns, buffer layouts and their checks.
 *
 * Every message has an image, the bytes the receiver must end up with.
 * The payload image is a pseudo-random stream keyed by the seed, the case
 * and the message index, so data that lands in the wrong message, case or
 * offset never matches. A slot is the piece of a buffer one message uses:
 * its scatter/gather segments hold the image, every other byte of the slot
 * holds a canary that must survive.
 */
#include <endian.h>
#include <stdio.h>
#include <string.h>

#include "integrity.h"

#define SI_SLOT_EXTRA	128

uint64_t si_mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

uint64_t si_msg_key(uint64_t seed, uint32_t case_index, uint32_t msg)
{
	return si_mix(seed ^ si_mix(((uint64_t)case_index << 32) | msg));
}

uint32_t si_msg_imm(uint64_t key)
{
	return (uint32_t)(si_mix(key ^ 0x696d6d21ull) >> 16);
}

static inline uint64_t pattern_word(uint64_t key, uint64_t word)
{
	return si_mix(key + word * 0xd1b54a32d192ed03ull);
}

void si_pattern_fill(uint8_t *dst, size_t len, uint64_t key, size_t logical)
{
	uint64_t w;
	unsigned int b;

	while (len && logical % 8) {
		w = pattern_word(key, logical / 8);
		for (b = logical % 8; b < 8 && len; b++, len--, logical++)
			*dst++ = (uint8_t)(w >> (8 * b));
	}
	while (len >= 8) {
		w = htole64(pattern_word(key, logical / 8));
		memcpy(dst, &w, 8);
		dst += 8;
		logical += 8;
		len -= 8;
	}
	if (len) {
		w = pattern_word(key, logical / 8);
		for (b = 0; len; b++, len--)
			*dst++ = (uint8_t)(w >> (8 * b));
	}
}

/* Compare against the pattern; on a mismatch return its logical offset. */
static bool pattern_cmp(const uint8_t *p, size_t len, uint64_t key,
			size_t logical, size_t *bad, uint8_t *exp)
{
	uint8_t tmp[4096];
	size_t n, k;

	while (len) {
		n = len < sizeof(tmp) ? len : sizeof(tmp);
		si_pattern_fill(tmp, n, key, logical);
		if (memcmp(tmp, p, n)) {
			for (k = 0; tmp[k] == p[k]; k++)
				;
			*bad = logical + k;
			*exp = tmp[k];
			return false;
		}
		p += n;
		logical += n;
		len -= n;
	}
	return true;
}

bool si_canary_check(const uint8_t *p, size_t len, size_t *bad)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (p[i] != SI_CANARY) {
			*bad = i;
			return false;
		}
	}
	return true;
}

size_t si_stride(size_t total)
{
	return (total + SI_SLOT_EXTRA + 63) & ~(size_t)63;
}

uint32_t si_pad(enum si_variant var, uint32_t msg)
{
	return var == SI_V_PLAIN ? 0 : 1 + 2 * (msg % 4);
}

void si_layout_local(struct si_layout *l, size_t total, enum si_variant var,
		     uint32_t msg, bool recv)
{
	uint32_t pad = si_pad(var, msg), a, b, n;

	memset(l, 0, sizeof(*l));
	if (!total)
		return;
	if ((var == SI_V_SGE || var == SI_V_INLINE_SGE) && total >= 3) {
		/* Uneven pieces, split differently on the two sides. */
		n = total - 3;
		if (recv) {
			a = 1 + n / 3;
			b = 1 + n / 5;
		} else {
			a = 1 + n / 6;
			b = 1 + n / 2;
		}
		l->nseg = 3;
		l->seg[0] = (struct si_seg){ pad, a, 0 };
		l->seg[1] = (struct si_seg){ pad + a + 13 + 4 * (msg % 3),
					     b, a };
		l->seg[2] = (struct si_seg){
			l->seg[1].off + b + 21 + 2 * (msg % 5),
			total - a - b, a + b };
		return;
	}
	l->nseg = 1;
	l->seg[0] = (struct si_seg){ pad, total, 0 };
}

void si_layout_remote(struct si_layout *l, size_t total,
		      enum si_variant var, uint32_t msg)
{
	memset(l, 0, sizeof(*l));
	if (!total)
		return;
	l->nseg = 1;
	l->seg[0] = (struct si_seg){ si_pad(var, msg), total, 0 };
}

void si_slot_fill(uint8_t *slot, size_t stride, const struct si_layout *l,
		  uint64_t key)
{
	unsigned int i;

	memset(slot, SI_CANARY, stride);
	for (i = 0; i < l->nseg; i++)
		si_pattern_fill(slot + l->seg[i].off, l->seg[i].len, key,
				l->seg[i].logical);
}

/*
 * Check a slot: the segments hold the message image from logical offset
 * 0 on, of which the first @skip bytes are not pattern but copied out to
 * @head (the UD GRH); every other byte of the slot is canary.
 */
bool si_slot_check(const uint8_t *slot, size_t stride,
		   const struct si_layout *l, uint64_t key, size_t skip,
		   uint8_t *head, char *err, size_t errlen)
{
	size_t pos = 0, bad, lo, hi, n;
	const struct si_seg *s;
	unsigned int i;
	uint8_t exp;

	for (i = 0; i <= l->nseg; i++) {
		n = i < l->nseg ? l->seg[i].off : stride;
		if (!si_canary_check(slot + pos, n - pos, &bad)) {
			snprintf(err, errlen,
				 "guard byte at slot offset %zu (outside the sges): expected 0x%02x, got 0x%02x",
				 pos + bad, SI_CANARY, slot[pos + bad]);
			return false;
		}
		if (i == l->nseg)
			break;
		s = &l->seg[i];
		lo = s->logical;
		hi = lo + s->len;
		if (lo < skip) {
			n = (hi < skip ? hi : skip) - lo;
			memcpy(head + lo, slot + s->off, n);
			lo += n;
		}
		if (lo < hi &&
		    !pattern_cmp(slot + s->off + (lo - s->logical), hi - lo,
				 key, lo - skip, &bad, &exp)) {
			snprintf(err, errlen,
				 "payload offset %zu (sge %u): expected 0x%02x, got 0x%02x",
				 bad, i,
				 exp, slot[s->off + (bad + skip - s->logical)]);
			return false;
		}
		pos = s->off + s->len;
	}
	return true;
}

void si_atomic_init(const struct si_case *c, uint64_t *vals)
{
	unsigned int i;

	for (i = 0; i < SI_ATOMIC_SLOTS; i++)
		vals[i] = si_mix(si_msg_key(c->seed, c->index,
					    0xffff0000u + i));
}

/*
 * The @msg'th atomic of a case: its operands and the value it must
 * return. The responder runs the atomics of a QP in order, so the
 * outcome of the sequence is known in advance. Every third compare and
 * swap compares against a wrong value and must leave memory alone.
 */
void si_atomic_step(const struct si_case *c, uint64_t *vals, uint32_t msg,
		    uint64_t *cmp_add, uint64_t *swap, uint64_t *orig)
{
	uint64_t key = si_msg_key(c->seed, c->index, msg);
	uint64_t *v = &vals[msg % SI_ATOMIC_SLOTS];

	*orig = *v;
	if (c->op == SI_OP_RC_FETCH_ADD) {
		*cmp_add = si_mix(key);
		*swap = 0;
		*v += *cmp_add;
		return;
	}
	*swap = si_mix(key);
	*cmp_add = msg % 3 == 2 ? *v ^ (1ull << (msg % 64)) : *v;
	if (*cmp_add == *v)
		*v = *swap;
}

static bool gid_is_v4(const uint8_t *gid)
{
	static const uint8_t prefix[12] = { [10] = 0xff, [11] = 0xff };

	return !memcmp(gid, prefix, sizeof(prefix));
}

static void fmt_gid(char *buf, size_t len, const uint8_t *g)
{
	snprintf(buf, len,
		 "%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x",
		 g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7], g[8], g[9],
		 g[10], g[11], g[12], g[13], g[14], g[15]);
}

/*
 * The 40 bytes ahead of a UD payload: for RoCEv2 over IPv4 the IPv4
 * header sits in the last 20, over IPv6 they are the IPv6 header.
 */
bool si_grh_check(const uint8_t *grh, const uint8_t *sgid,
		  const uint8_t *dgid, char *err, size_t errlen)
{
	char a[48], b[48];
	const uint8_t *ip;

	if (gid_is_v4(sgid)) {
		ip = grh + 20;
		if (ip[0] != 0x45) {
			snprintf(err, errlen,
				 "GRH offset 20: expected IPv4 version/ihl 0x45, got 0x%02x",
				 ip[0]);
			return false;
		}
		if (ip[9] != 17) {
			snprintf(err, errlen,
				 "GRH offset 29: expected IPv4 protocol 17 (UDP), got %u",
				 ip[9]);
			return false;
		}
		if (memcmp(ip + 12, sgid + 12, 4) || memcmp(ip + 16, dgid + 12, 4)) {
			snprintf(err, errlen,
				 "GRH IPv4 addresses: expected %u.%u.%u.%u -> %u.%u.%u.%u, got %u.%u.%u.%u -> %u.%u.%u.%u",
				 sgid[12], sgid[13], sgid[14], sgid[15],
				 dgid[12], dgid[13], dgid[14], dgid[15],
				 ip[12], ip[13], ip[14], ip[15],
				 ip[16], ip[17], ip[18], ip[19]);
			return false;
		}
		return true;
	}
	if (grh[0] >> 4 != 6) {
		snprintf(err, errlen,
			 "GRH offset 0: expected IP version 6, got 0x%02x",
			 grh[0]);
		return false;
	}
	if (grh[6] != 17) {
		snprintf(err, errlen,
			 "GRH offset 6: expected next header 17 (UDP), got %u",
			 grh[6]);
		return false;
	}
	if (memcmp(grh + 8, sgid, 16)) {
		fmt_gid(a, sizeof(a), sgid);
		fmt_gid(b, sizeof(b), grh + 8);
		snprintf(err, errlen, "GRH source GID: expected %s, got %s",
			 a, b);
		return false;
	}
	if (memcmp(grh + 24, dgid, 16)) {
		fmt_gid(a, sizeof(a), dgid);
		fmt_gid(b, sizeof(b), grh + 24);
		snprintf(err, errlen,
			 "GRH destination GID: expected %s, got %s", a, b);
		return false;
	}
	return true;
}
