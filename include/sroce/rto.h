/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Round-trip estimation for the retransmission timeout of an RC requester.
 *
 * Pure arithmetic on microseconds, like wire.h, so that the KUnit suites
 * can check it directly; the driver adds the back-off and the jitter.
 */
#ifndef _SROCE_RTO_H
#define _SROCE_RTO_H

#include <linux/minmax.h>
#include <linux/time64.h>
#include <linux/types.h>

/* The most a measured round trip may raise the QP's timeout to. */
#define SROCE_RTO_MEASURED_MAX_US	(8 * USEC_PER_SEC)

/**
 * struct sroce_rtt - a smoothed round-trip time
 * @srtt_us: the mean, in microseconds; 0 before the first sample
 * @rttvar_us: the mean deviation
 */
struct sroce_rtt {
	u32	srtt_us;
	u32	rttvar_us;
};

/**
 * sroce_rtt_sample() - fold one measured round trip into the estimate
 * @rtt: the estimate
 * @us: the round trip in microseconds; 0 counts as 1
 *
 * The estimator of RFC 6298: the first sample sets the mean and half of it
 * as the deviation; later ones move the mean by 1/8 and the deviation by
 * 1/4 of their difference.
 */
static inline void sroce_rtt_sample(struct sroce_rtt *rtt, u32 us)
{
	u32 delta;

	us = max_t(u32, us, 1);
	if (!rtt->srtt_us) {
		rtt->srtt_us = us;
		rtt->rttvar_us = us / 2;
		return;
	}
	delta = rtt->srtt_us > us ? rtt->srtt_us - us : us - rtt->srtt_us;
	rtt->rttvar_us = rtt->rttvar_us - rtt->rttvar_us / 4 + delta / 4;
	rtt->srtt_us = rtt->srtt_us - rtt->srtt_us / 8 + us / 8;
}

/**
 * sroce_rto_base_us() - the wait for an ACK before any back-off
 * @timeout: the QP's Local ACK Timeout exponent, 1 to 31
 * @rtt: the round-trip estimate
 *
 * Return: 4.096 us << @timeout (IBTA 9.7.6.1.3), or the mean round trip
 * plus four deviations when that is longer, counted up to
 * SROCE_RTO_MEASURED_MAX_US.
 */
static inline u64 sroce_rto_base_us(u8 timeout, const struct sroce_rtt *rtt)
{
	u64 us = (4096ULL << timeout) / NSEC_PER_USEC;
	u64 measured;

	if (!rtt->srtt_us)
		return us;
	measured = min_t(u64, rtt->srtt_us + 4ULL * rtt->rttvar_us,
			 SROCE_RTO_MEASURED_MAX_US);
	return max(us, measured);
}

/**
 * sroce_rtt_as_guess() - another path's estimate, as a guess for a new QP
 * @rtt: the estimate of the device's QPs together
 *
 * A QP that has timed no round trip of its own waits on the device's
 * estimate, but its own path may be slower than the others': the
 * deviation is raised to at least a quarter of the mean, so that
 * sroce_rto_base_us() waits at least twice the mean round trip.
 *
 * Return: @rtt with that deviation.
 */
static inline struct sroce_rtt sroce_rtt_as_guess(struct sroce_rtt rtt)
{
	rtt.rttvar_us = max(rtt.rttvar_us, rtt.srtt_us / 4);
	return rtt;
}

#endif /* _SROCE_RTO_H */
