// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The retransmission timeout of an RC requester.
 *
 * The QP's Local ACK Timeout (4.096 us << timeout, IBTA 9.7.6.1.3) is the
 * least time the requester waits for an acknowledgment. It waits longer when
 * the path is slower than that: a host that queues thousands of packets
 * behind a busy CPU delays ACKs past a short timeout, and each go-back after
 * such a timeout only adds to the queue. So the requester times one request
 * per round trip, keeps a smoothed round-trip time and its deviation, and
 * waits for the mean plus four deviations when that is longer than the
 * QP's timeout (see sroce_rto_base_us()).
 *
 * A QP that has not timed a round trip yet would wait its own timeout alone,
 * and a thousand new QPs sharing one busy path all time out at once and
 * send everything again. So every sample also feeds one estimate for the
 * whole device, and a QP without a sample of its own waits as long as that
 * estimate says, and at least twice its mean: the round trips its
 * neighbours see are the best guess for its own, but only a guess.
 *
 * Each timeout doubles the wait, twice at most, and a random quarter on top
 * keeps the QPs that lost packets together from retrying together. The
 * doubled wait holds until a round trip is timed again, not merely until
 * the next ACK (Karn's rule): an ACK that may answer a retransmitted copy
 * tells nothing of the round trip, and a QP whose timeout is shorter than
 * the round trip, sending one packet at a time, would otherwise time out on
 * every packet and never time one. The retry count keeps its meaning:
 * after retry_cnt timeouts in a row without progress, the next one fails
 * the WQE with RETRY_EXC_ERR.
 */

#include <linux/random.h>

#include "comp.h"
#include "qp.h"
#include "sroce.h"
#include "txflow.h"

/* Timeouts in a row that still double the wait: up to four times. */
#define SROCE_RTO_BACKOFF_MAX	2

/* Expiries in a row put off while the requester's packets are still here. */
#define SROCE_RTO_DEFER_MAX	64

/*
 * The device's estimate is updated by the QPs of all CPUs without a lock:
 * a sample lost to a race is as harmless as one never taken, and packing
 * the estimate into one atomic64_t keeps readers from seeing half of one.
 */
static struct sroce_rtt sroce_rtt_seed_read(struct sroce_dev *sdev)
{
	u64 v = atomic64_read(&sdev->rtt_seed);

	return (struct sroce_rtt){ .srtt_us = v >> 32, .rttvar_us = (u32)v };
}

static void sroce_rtt_seed_sample(struct sroce_dev *sdev, u32 us)
{
	struct sroce_rtt rtt = sroce_rtt_seed_read(sdev);

	sroce_rtt_sample(&rtt, us);
	atomic64_set(&sdev->rtt_seed, (u64)rtt.srtt_us << 32 | rtt.rttvar_us);
}

/**
 * sroce_rto_reset() - forget the timing of an earlier connection
 * @qp: an RC QP; req.lock held
 */
void sroce_rto_reset(struct sroce_qp *qp)
{
	qp->rto.backoff = 0;
	qp->rto.deferred = 0;
	qp->rto.rtt_timing = false;
	qp->rto.rtt = (struct sroce_rtt){};
}

/**
 * sroce_rto_sent() - note a request packet sent for the first time
 * @qp: an RC QP; req.lock held
 * @psn: the last PSN the packet uses
 *
 * Only one packet per round trip is timed, and only one never sent before:
 * the answer to a retransmitted one may be to its first copy.
 */
void sroce_rto_sent(struct sroce_qp *qp, u32 psn)
{
	if (qp->rto.rtt_timing)
		return;
	qp->rto.rtt_timing = true;
	qp->rto.rtt_psn = psn;
	qp->rto.rtt_start = ktime_get();
}

/**
 * sroce_rto_rewound() - the requester went back: stop timing
 * @qp: an RC QP; req.lock held
 */
void sroce_rto_rewound(struct sroce_qp *qp)
{
	qp->rto.rtt_timing = false;
}

/**
 * sroce_rto_acked() - requests before @una_psn were acknowledged
 * @qp: an RC QP; req.lock held
 * @una_psn: the new oldest unacknowledged PSN
 */
void sroce_rto_acked(struct sroce_qp *qp, u32 una_psn)
{
	qp->rto.deferred = 0;
	if (qp->rto.rtt_timing &&
	    sroce_psn_diff(una_psn, qp->rto.rtt_psn) > 0) {
		s64 us = ktime_us_delta(ktime_get(), qp->rto.rtt_start);
		u32 sample = clamp_t(s64, us, 0, U32_MAX);

		qp->rto.rtt_timing = false;
		qp->rto.backoff = 0;
		sroce_rtt_sample(&qp->rto.rtt, sample);
		sroce_rtt_seed_sample(qp->sdev, sample);
	}
}

/**
 * sroce_rto_expired() - the retransmission timer fired
 * @qp: an RC QP; req.lock held
 */
void sroce_rto_expired(struct sroce_qp *qp)
{
	if (qp->rto.backoff < SROCE_RTO_BACKOFF_MAX)
		qp->rto.backoff++;
	qp->rto.deferred = 0;
	qp->rto.rtt_timing = false;
}

/**
 * sroce_rto_defer() - whether the timer that fired is to wait once more
 * @qp: an RC QP; req.lock held
 *
 * The timer measures the network and the peer. While the requester's
 * packets are still in this host's queues, or it waits for room in them
 * (sroce_tx_held()), an answer cannot have come yet and a go-back would
 * only queue the same requests again. Only so many times in a row, though:
 * a netdev that never frees its packets must not hide a dead peer.
 *
 * Return: true when the expiry is put off: no retry is used up.
 */
bool sroce_rto_defer(struct sroce_qp *qp)
{
	if (qp->rto.deferred >= SROCE_RTO_DEFER_MAX || !sroce_tx_held(qp))
		return false;
	qp->rto.deferred++;
	return true;
}

/**
 * sroce_rto_interval() - how long to wait for an acknowledgment
 * @qp: an RC QP with a timeout; req.lock held
 *
 * Return: the wait in jiffies, at least two.
 */
unsigned long sroce_rto_interval(struct sroce_qp *qp)
{
	struct sroce_rtt seed;
	unsigned long j;
	u64 us;

	if (qp->rto.rtt.srtt_us) {
		us = sroce_rto_base_us(qp->timeout, &qp->rto.rtt);
	} else {
		seed = sroce_rtt_as_guess(sroce_rtt_seed_read(qp->sdev));
		us = sroce_rto_base_us(qp->timeout, &seed);
	}

	j = usecs_to_jiffies(min_t(u64, us, UINT_MAX));
	j = max(j, 2UL);
	if (j > MAX_JIFFY_OFFSET >> (SROCE_RTO_BACKOFF_MAX + 1))
		return MAX_JIFFY_OFFSET;
	j <<= qp->rto.backoff;
	return j + get_random_u32_below(min_t(unsigned long, j / 4,
					      U32_MAX - 1) + 1);
}
