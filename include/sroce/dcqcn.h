/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The arithmetic of the ECN reaction point (drivers/.../sroce/cc.c) that
 * fits the DCQCN rate limiter to the rate a QP actually sends at: its
 * measurement, the rate the limiter starts from and is capped at, the
 * stretching of DCQCN's periods when packets are sparse, and when and how
 * far a CNP may cut the requester's window.
 *
 * Pure arithmetic on kbit/s, nanoseconds and PSNs, like rto.h, so that the
 * KUnit suites can check it directly; cc.c explains why it is needed.
 */
#ifndef _SROCE_DCQCN_H
#define _SROCE_DCQCN_H

#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/overflow.h>
#include <linux/time64.h>
#include <linux/types.h>
#include <sroce/wire.h>

/* The least time a send rate sample spans. */
#define SROCE_CC_MEAS_NS	NSEC_PER_MSEC
/*
 * A window longer than this many SROCE_CC_MEAS_NS held a pause: it says
 * how often the QP had something to send, not how fast it sends, and is
 * not a sample.
 */
#define SROCE_CC_MEAS_IDLE	16
/* The rate limit stays within this many times the measured rate. */
#define SROCE_CC_CAP_MULT	2

/**
 * struct sroce_cc_meas - a QP's measured send rate
 * @start: when the current window began, ns; 0 before the first packet
 * @bytes: bytes sent in it
 * @pkts: packets sent in it
 * @rate: the smoothed rate of the past windows, kbit/s; 0 before the first
 * @gap: the smoothed mean time between two packets of the past windows, ns
 */
struct sroce_cc_meas {
	u64	start;
	u32	bytes;
	u32	pkts;
	u32	rate;
	u32	gap;
};

/* Move @avg a quarter of the way to @sample; the first sample sets it. */
static inline u32 sroce_cc_ewma(u32 avg, u64 sample)
{
	sample = min_t(u64, sample, U32_MAX);
	if (!avg)
		return max_t(u32, sample, 1);
	return max_t(u32, div_u64(3ULL * avg + sample, 4), 1);
}

/**
 * sroce_cc_meas_sent() - account for a packet sent in the measurement
 * @m: the measurement
 * @bytes: the packet's length on the wire
 * @now: the time, ns
 *
 * Once a window spans SROCE_CC_MEAS_NS its rate and mean packet spacing
 * move the smoothed ones by a quarter of the difference, and a new window
 * begins with the next packet. A window that spans more than
 * SROCE_CC_MEAS_IDLE of them is dropped instead.
 */
static inline void sroce_cc_meas_sent(struct sroce_cc_meas *m, u32 bytes,
				      u64 now)
{
	u64 span;

	if (!m->start || now < m->start) {
		m->start = now;
		m->bytes = 0;
		m->pkts = 0;
	}
	m->bytes += bytes;
	m->pkts++;
	span = now - m->start;
	if (span < SROCE_CC_MEAS_NS)
		return;
	if (span <= SROCE_CC_MEAS_IDLE * SROCE_CC_MEAS_NS) {
		/* bytes * 8 bits in span ns, in kbit/s */
		m->rate = sroce_cc_ewma(m->rate,
					div64_u64((u64)m->bytes * 8 * USEC_PER_SEC,
						  span));
		m->gap = sroce_cc_ewma(m->gap, div_u64(span, m->pkts));
	}
	m->start = now;
	m->bytes = 0;
	m->pkts = 0;
}

/**
 * sroce_cc_start_rate() - the rate the limiter starts from on a first CNP
 * @max_rate: the line rate, kbit/s
 * @m: the QP's measurement
 *
 * Return: the measured rate, when there is one below @max_rate; @max_rate
 * otherwise.
 */
static inline u32 sroce_cc_start_rate(u32 max_rate,
				      const struct sroce_cc_meas *m)
{
	return m->rate ? min(max_rate, m->rate) : max_rate;
}

/**
 * sroce_cc_cap() - the most the limit may recover to
 * @max_rate: the line rate, kbit/s
 * @m: the QP's measurement
 *
 * Return: SROCE_CC_CAP_MULT times the measured rate, when there is one and
 * that is below @max_rate; @max_rate otherwise.
 */
static inline u32 sroce_cc_cap(u32 max_rate, const struct sroce_cc_meas *m)
{
	if (!m->rate)
		return max_rate;
	return min_t(u64, max_rate, (u64)m->rate * SROCE_CC_CAP_MULT);
}

/**
 * sroce_cc_stretch() - a DCQCN period in the QP's packet time
 * @period: the period, ns
 * @slot: the alpha period, ns: the time DCQCN expects a congested QP to
 *	  get a CNP in
 * @gap: the measured time between two of the QP's packets, ns; 0 unknown
 *
 * Return: @period when the QP sends at least one packet per @slot;
 * otherwise @period stretched by @gap / @slot.
 */
static inline u64 sroce_cc_stretch(u64 period, u64 slot, u32 gap)
{
	u64 q, r, whole;

	if (!slot || gap <= slot)
		return period;

	/*
	 * Not mul_u64_u64_div_u64(): on 6.1 its x86 version may put the
	 * divisor in the register its multiply overwrites. Here @slot <
	 * @gap, both below 2^32, so the remainder's product fits 64 bits.
	 */
	q = div64_u64_rem(period, slot, &r);
	if (check_mul_overflow(q, (u64)gap, &whole))
		return U64_MAX;
	return whole + div64_u64(r * gap, slot);
}

/**
 * sroce_cc_cut() - the rate after a CNP
 * @rate: the current rate, kbit/s
 * @alpha: the congestion estimate, in units of 2^-16
 * @min_rate: the least rate, kbit/s
 *
 * Return: @rate cut by a factor @alpha / 2, at least @min_rate.
 */
static inline u32 sroce_cc_cut(u32 rate, u32 alpha, u32 min_rate)
{
	rate -= (u32)(((u64)rate * min_t(u32, alpha, 1 << 16)) >> 17);
	return max(rate, min_rate);
}

/**
 * sroce_cc_raise() - one stage of rate increase
 * @rate: the current rate, kbit/s; updated
 * @target: the target rate, kbit/s; updated
 * @inc: what the target grows by in this stage (0 in fast recovery)
 * @cap: the most either may reach, kbit/s
 *
 * The target grows by @inc up to @cap, then the current rate halves its
 * distance to it.
 */
static inline void sroce_cc_raise(u32 *rate, u32 *target, u64 inc, u32 cap)
{
	*target = min_t(u64, (u64)*target + inc, cap);
	*rate = min(*rate, *target) / 2 + *target / 2;
}

/**
 * sroce_cc_window_due() - whether a CNP may halve the requester's window
 * @cut: a CNP halved it before
 * @una_psn: the oldest PSN the requester has not seen acknowledged
 * @cut_psn: the requester's next PSN when a CNP last halved it
 *
 * Once per window of packets: the next cut waits until every packet sent
 * before the last one is acknowledged, so that it answers marks on packets
 * the smaller window sent.
 *
 * Return: true when no CNP has halved the window, or @una_psn has reached
 * @cut_psn.
 */
static inline bool sroce_cc_window_due(bool cut, u32 una_psn, u32 cut_psn)
{
	return !cut || sroce_psn_diff(una_psn, cut_psn) >= 0;
}

/**
 * sroce_cc_rate_window() - the packets a rate keeps in flight
 * @rate: the rate, kbit/s
 * @srtt_us: the smoothed round trip, microseconds; 0 before the first
 * @mtu: the path MTU, bytes
 *
 * What a QP sending at @rate has sent, and not yet seen acknowledged, one
 * round trip after it started: @rate times @srtt_us, in packets of @mtu.
 *
 * Return: that many packets, rounded down; 0 when @mtu is 0.
 */
static inline u32 sroce_cc_rate_window(u32 rate, u32 srtt_us, u32 mtu)
{
	/* kbit/s times us is bits / 1000: bytes are that over 8000. */
	u64 bytes = div_u64((u64)rate * srtt_us, 8000);

	if (!mtu)
		return 0;
	return min_t(u64, div_u64(bytes, mtu), U32_MAX);
}

#endif /* _SROCE_DCQCN_H */
