// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ECN congestion control for RC QPs, after DCQCN (Zhu et al., "Congestion
 * Control for Large-Scale RDMA Deployments", SIGCOMM 2015), the scheme RoCE
 * NICs implement.
 *
 * With the "ecn" parameter on (the default), an RC QP's packets leave ECN-capable
 * (ECT(0) in the IP header's ECN field, the DSCP bits kept). A queue on the
 * path that would drop one for congestion may mark it Congestion
 * Experienced (CE) instead.
 *
 * Notification point: a QP that receives a request packet marked CE sends
 * its peer QP a CNP (BTH opcode 0x81, IBTA Annex A17.9), at most one per
 * cnp_interval_us per QP: the interval bounds what the notifications cost
 * and what they tell, whatever the marking rate.
 *
 * Reaction point: while "ecn" is on (with it off nothing this host sends
 * can be marked, so a CNP can only be forged), a QP that receives a CNP
 * limits its requester to a rate.
 * On each CNP the target rate becomes the current rate, the current rate
 * is cut by a factor alpha/2 and alpha, the estimate of how congested the
 * path is, moves towards 1 by the gain g: alpha = (1 - g) * alpha + g.
 * Every alpha period (dcqcn_alpha_us) without a CNP alpha decays:
 * alpha = (1 - g) * alpha. Without CNPs the rate then recovers in stages,
 * one per timer period (dcqcn_timer_us) elapsed and one per
 * dcqcn_byte_reset bytes sent. At each stage:
 *
 * - fast recovery, while fewer than dcqcn_threshold stages of either kind
 *   have passed since the last CNP: current = (current + target) / 2;
 * - hyper increase, once more than dcqcn_threshold of both have: the
 *   target grows by dcqcn_hai_rate_mbps times the stages beyond the
 *   threshold, then the current rate halves its distance to it;
 * - additive increase in between: the target grows by
 *   dcqcn_ai_rate_mbps, then likewise.
 *
 * The rate never falls below dcqcn_min_rate_mbps.
 *
 * DCQCN's defaults are a NIC's: the limit starts from the line rate
 * (dcqcn_max_rate_mbps) and a congested QP gets a CNP about every
 * dcqcn_alpha_us, having sent many packets in between. A software device
 * sends some tens of Mbit/s, a packet every few hundred microseconds in
 * a test guest, and a CNP can only follow a marked packet. Taken as they
 * are, the defaults then never hold it back: cuts of a few percent from
 * 10 Gbit/s, alpha decaying some ten times between two CNPs (settling
 * near 0.08, cuts of 4%), and the timer stages recovering each cut before
 * the next CNP comes. The reaction point therefore fits them to what the
 * QP sends:
 *
 * - while ECN is on, every RC QP measures the rate its requester sends
 *   at, and the mean spacing of its packets, over windows of at least a
 *   millisecond, smoothed by 1/4 a window (include/sroce/dcqcn.h; a
 *   window spanning a pause is dropped);
 * - the first CNP starts the limit from the measured rate, when there is
 *   one below the line rate, so that its first cut binds;
 * - the current and the target rate stay within twice the measured rate,
 *   so that no increase lifts the limit beyond the next cut's reach; since
 *   a limited QP sends at its limit, the cap still lets the rate double;
 * - while the QP sends less than a packet per alpha period, the alpha and
 *   the timer periods stretch by its packet spacing over dcqcn_alpha_us:
 *   alpha then decays once per packet that brought no CNP, and as many
 *   packets pass per recovery stage as DCQCN assumes, instead of the
 *   timer undoing every cut. A QP that sends faster is left DCQCN's
 *   periods as set.
 *
 * The limit is lifted once it is back within one additive step of the
 * line rate, or of the cap in hyper increase: the QP then sends at half
 * its limit or less, well past the last CNP, and the next CNP starts
 * afresh from what it sends. It is also lifted after SROCE_CC_MAX_CATCHUP
 * timer periods without a CNP.
 *
 * DCQCN's rate bounds how fast a QP sends, not how much it has in flight.
 * A QP whose limit is lifted, or has recovered, after a quiet spell would
 * send its whole window (4 MiB at the path MTU, req.h) into the queue that
 * marked it, and overflow it. A CNP therefore also cuts the requester's
 * window to half of what it has in flight (or of the window, when less),
 * as ECN-capable transports answer an echoed mark (RFC 3168, 6.1.2), once
 * per window of packets (sroce_cc_window_due()), but not below what the
 * cut rate keeps in flight over the QP's smoothed round trip: the window
 * bounds what a limit lifted or recovered can release at once, and
 * leaves the pace to the rate. The window grows back by what each ACK
 * acknowledges (comp.c).
 *
 * The limiter is a next-send time: each request packet moves it on by its
 * length at the current rate. A requester that finds it in the future
 * stops and an hrtimer restarts it then, through its work item; a little
 * slack lets it catch up with a timer that fired late. The periodic parts
 * of DCQCN (alpha's decay, the timer stages) are brought up to date
 * whenever the requester or a CNP looks at the state, instead of by
 * timers of their own: a QP that sends nothing needs no rate. Only
 * request packets are paced; responses (READ data, ACKs) go as they come.
 */

#include <linux/hrtimer.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/moduleparam.h>
#include <net/dsfield.h>
#include <net/inet_ecn.h>

#include "cc.h"
#include "qp.h"
#include "sroce.h"
#include "stats.h"
#include "xmit.h"

/* The reserved bytes between a CNP's BTH and its ICRC (Annex A17.9). */
#define SROCE_CNP_RSVD_LEN	16
/* alpha's fixed point: 1.0 */
#define SROCE_CC_ONE		BIT(16)
/* Bytes on the wire around a request's payload: headers, ICRC. */
#define SROCE_CC_PKT_OVERHEAD	66
/* How far behind the clock the next-send time may fall: a late timer. */
#define SROCE_CC_SLACK_NS	(100 * NSEC_PER_USEC)
/*
 * Periods brought up to date at once; after that many without a CNP,
 * alpha is taken as 0 and the rate as recovered.
 */
#define SROCE_CC_MAX_CATCHUP	1024

static bool sroce_ecn = true;
module_param_named(ecn, sroce_ecn, bool, 0644);
MODULE_PARM_DESC(ecn, "Send RC packets ECN-capable (ECT(0)) and let congestion marks slow the sender down (default: on)");

static unsigned int sroce_cnp_interval_us = 50;
module_param_named(cnp_interval_us, sroce_cnp_interval_us, uint, 0644);
MODULE_PARM_DESC(cnp_interval_us, "Least time between two CNPs a QP sends (default: 50)");

static unsigned int sroce_max_rate_mbps = 10000;
module_param_named(dcqcn_max_rate_mbps, sroce_max_rate_mbps, uint, 0644);
MODULE_PARM_DESC(dcqcn_max_rate_mbps, "Line rate: the most a QP starts from on its first CNP (its measured rate when lower), and recovers to (default: 10000)");

static unsigned int sroce_min_rate_mbps = 1;
module_param_named(dcqcn_min_rate_mbps, sroce_min_rate_mbps, uint, 0644);
MODULE_PARM_DESC(dcqcn_min_rate_mbps, "Least rate CNPs cut a QP to (default: 1)");

static unsigned int sroce_ai_rate_mbps = 5;
module_param_named(dcqcn_ai_rate_mbps, sroce_ai_rate_mbps, uint, 0644);
MODULE_PARM_DESC(dcqcn_ai_rate_mbps, "Additive increase step of the target rate (default: 5)");

static unsigned int sroce_hai_rate_mbps = 50;
module_param_named(dcqcn_hai_rate_mbps, sroce_hai_rate_mbps, uint, 0644);
MODULE_PARM_DESC(dcqcn_hai_rate_mbps, "Hyper increase step of the target rate (default: 50)");

static unsigned int sroce_g_shift = 8;
module_param_named(dcqcn_g_shift, sroce_g_shift, uint, 0644);
MODULE_PARM_DESC(dcqcn_g_shift, "alpha's gain g is 2^-N (default: 8, g = 1/256)");

static unsigned int sroce_alpha_us = 55;
module_param_named(dcqcn_alpha_us, sroce_alpha_us, uint, 0644);
MODULE_PARM_DESC(dcqcn_alpha_us, "Period of alpha's decay without CNPs (default: 55)");

static unsigned int sroce_timer_us = 300;
module_param_named(dcqcn_timer_us, sroce_timer_us, uint, 0644);
MODULE_PARM_DESC(dcqcn_timer_us, "Time of one rate increase stage (default: 300)");

static unsigned int sroce_byte_reset = 32767;
module_param_named(dcqcn_byte_reset, sroce_byte_reset, uint, 0644);
MODULE_PARM_DESC(dcqcn_byte_reset, "Bytes sent per rate increase stage (default: 32767)");

static unsigned int sroce_threshold = 5;
module_param_named(dcqcn_threshold, sroce_threshold, uint, 0644);
MODULE_PARM_DESC(dcqcn_threshold, "Stages of fast recovery after a CNP (default: 5)");

static u32 sroce_cc_mbps(unsigned int *param)
{
	/* kbit/s, at least 1 Mbit/s; at most ~4 Tbit/s fits. */
	return clamp_t(u32, READ_ONCE(*param), 1, U32_MAX / 1000) * 1000;
}

static unsigned int sroce_cc_g(void)
{
	return clamp_t(unsigned int, READ_ONCE(sroce_g_shift), 1, 16);
}

static u64 sroce_cc_period(unsigned int *param_us)
{
	return (u64)max_t(unsigned int, READ_ONCE(*param_us), 1) *
	       NSEC_PER_USEC;
}

/**
 * sroce_cc_tclass() - the traffic class a QP's packet leaves with
 * @qp: the sending QP
 * @tclass: the address vector's traffic class
 *
 * Return: @tclass with ECT(0) in its ECN bits for an RC QP while ECN is on;
 * @tclass as it is otherwise.
 */
u8 sroce_cc_tclass(const struct sroce_qp *qp, u8 tclass)
{
	if (qp->type != IB_QPT_RC || !READ_ONCE(sroce_ecn))
		return tclass;
	return (tclass & ~INET_ECN_MASK) | INET_ECN_ECT_0;
}

/**
 * sroce_cc_rx_ce() - whether a received RoCEv2 packet is marked CE
 * @skb: the packet, its network header set
 * @ipv6: it came over IPv6
 *
 * Return: true when its IP header says Congestion Experienced; a RoCE v1
 * packet, which no router forwards, never is.
 */
bool sroce_cc_rx_ce(const struct sk_buff *skb, bool ipv6)
{
	u8 ds;

	if (skb->protocol == htons(ETH_P_IBOE))
		return false;
	ds = ipv6 ? ipv6_get_dsfield(ipv6_hdr(skb)) :
		    ipv4_get_dsfield(ip_hdr(skb));
	return INET_ECN_is_ce(ds);
}

static enum hrtimer_restart sroce_cc_timer(struct hrtimer *timer)
{
	struct sroce_qp *qp = container_of(timer, struct sroce_qp, cc.timer);

	/* The work item finds the QP's state, and the time, again. */
	sroce_req_schedule(qp);
	return HRTIMER_NORESTART;
}

/**
 * sroce_cc_init() - set up a new QP's congestion control
 * @qp: the QP
 */
void sroce_cc_init(struct sroce_qp *qp)
{
	hrtimer_init(&qp->cc.timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS);
	qp->cc.timer.function = sroce_cc_timer;
	atomic64_set(&qp->cc.last_cnp, 0);
	sroce_cc_reset(qp);
}

/**
 * sroce_cc_reset() - back to full speed
 * @qp: the QP; req.lock held, or not yet in use
 *
 * A timer still pending only restarts the requester, which finds nothing
 * to wait for.
 */
void sroce_cc_reset(struct sroce_qp *qp)
{
	qp->cc.limited = false;
	qp->cc.t_stage = 0;
	qp->cc.b_stage = 0;
	qp->cc.bytes = 0;
	qp->cc.meas = (struct sroce_cc_meas){};
	qp->cc.window_cut = false;
}

/**
 * sroce_cc_stop() - wait for the QP's rate timer to be done
 * @qp: the QP, in the RESET state: the requester no longer arms it
 */
void sroce_cc_stop(struct sroce_qp *qp)
{
	hrtimer_cancel(&qp->cc.timer);
}

/*
 * DCQCN's periods in the QP's packet time: while it sends less than a
 * packet per alpha period, both stretch by its packet spacing over that
 * period (see the top of the file).
 */
static u64 sroce_cc_alpha_period(const struct sroce_cc *cc)
{
	u64 slot = sroce_cc_period(&sroce_alpha_us);

	return sroce_cc_stretch(slot, slot, cc->meas.gap);
}

static u64 sroce_cc_timer_period(const struct sroce_cc *cc)
{
	return sroce_cc_stretch(sroce_cc_period(&sroce_timer_us),
				sroce_cc_period(&sroce_alpha_us), cc->meas.gap);
}

/* One stage of rate increase (see the top of the file). */
static void sroce_cc_increase(struct sroce_qp *qp)
{
	struct sroce_cc *cc = &qp->cc;
	u32 max_rate = sroce_cc_mbps(&sroce_max_rate_mbps);
	u32 cap = sroce_cc_cap(max_rate, &cc->meas);
	u32 ai = sroce_cc_mbps(&sroce_ai_rate_mbps);
	u32 f = READ_ONCE(sroce_threshold);
	u32 lo = min(cc->t_stage, cc->b_stage);
	u32 hi = max(cc->t_stage, cc->b_stage);
	u64 inc = 0;

	if (lo > f)
		inc = (u64)(lo - f) * sroce_cc_mbps(&sroce_hai_rate_mbps);
	else if (hi >= f)
		inc = ai;
	sroce_cc_raise(&cc->rate, &cc->target, inc, cap);
	/*
	 * Back at the line rate, or, in hyper increase (long without a CNP),
	 * at twice what the QP sends: either way the limit no longer holds
	 * it back.
	 */
	if (cc->target >= cap && cc->rate + ai >= cap &&
	    (cap >= max_rate || lo > f))
		cc->limited = false;
}

/* Bring alpha and the timer stages up to @now. */
static void sroce_cc_catch_up(struct sroce_qp *qp, u64 now)
{
	struct sroce_cc *cc = &qp->cc;
	u64 period = sroce_cc_alpha_period(cc), n;
	unsigned int g = sroce_cc_g();

	if (now > cc->alpha_time) {
		n = div64_u64(now - cc->alpha_time, period);
		if (n >= SROCE_CC_MAX_CATCHUP) {
			cc->alpha = 0;
			cc->alpha_time = now;
		} else {
			cc->alpha_time += n * period;
			while (n--)
				cc->alpha -= cc->alpha >> g;
		}
	}

	period = sroce_cc_timer_period(cc);
	if (now <= cc->incr_time)
		return;
	n = div64_u64(now - cc->incr_time, period);
	cc->incr_time += n * period;
	/* So long without a CNP (a third of a second by default): full speed. */
	if (n >= SROCE_CC_MAX_CATCHUP) {
		cc->limited = false;
		return;
	}
	while (n-- && cc->limited) {
		cc->t_stage++;
		sroce_cc_increase(qp);
	}
}

/**
 * sroce_cc_may_send() - whether the rate lets the requester send now
 * @qp: the RC QP; req.lock held
 *
 * When it does not, the rate timer restarts the requester in time.
 *
 * Return: true when the next request packet may go.
 */
bool sroce_cc_may_send(struct sroce_qp *qp)
{
	struct sroce_cc *cc = &qp->cc;
	u64 now;

	if (!cc->limited)
		return true;
	now = ktime_get_ns();
	sroce_cc_catch_up(qp, now);
	if (!cc->limited)
		return true;
	if (cc->next_send + SROCE_CC_SLACK_NS < now)
		cc->next_send = now - SROCE_CC_SLACK_NS;
	if (cc->next_send <= now)
		return true;
	/*
	 * A QP on its way out (RESET, under req.lock) must not arm the timer
	 * after its last cancel; a draining one (SQD) still sends.
	 */
	if (sroce_qp_req_active(qp))
		hrtimer_start(&cc->timer, ns_to_ktime(cc->next_send),
			      HRTIMER_MODE_ABS);
	return false;
}

/**
 * sroce_cc_sent() - account for a request packet sent
 * @qp: the RC QP; req.lock held
 * @payload: its payload bytes
 */
void sroce_cc_sent(struct sroce_qp *qp, u32 payload)
{
	struct sroce_cc *cc = &qp->cc;
	u32 bytes = payload + SROCE_CC_PKT_OVERHEAD;
	u32 reset = max_t(u32, READ_ONCE(sroce_byte_reset), 1);

	/* Without ECN no CNP comes, and nothing needs the measurement. */
	if (!READ_ONCE(sroce_ecn))
		return;
	sroce_cc_meas_sent(&cc->meas, bytes, ktime_get_ns());
	if (!cc->limited)
		return;
	/* bytes * 8 bits at cc->rate kbit/s, in ns */
	cc->next_send += div_u64((u64)bytes * 8 * USEC_PER_SEC, cc->rate);
	cc->bytes += bytes;
	while (cc->bytes >= reset && cc->limited) {
		cc->bytes -= reset;
		cc->b_stage++;
		sroce_cc_increase(qp);
	}
}

/*
 * Halve the requester's window, once per window of packets: half of what
 * it has in flight when that is less than the window (RFC 5681, 3.1), but
 * no less than the cut rate keeps in flight over a round trip, and never
 * more than it was (a loss may have cut it further). The rate is DCQCN's
 * answer to the marks: a window below what it sends in a round trip would
 * hold the QP back twice for the same marks.
 */
static void sroce_cc_shrink_window(struct sroce_qp *qp)
{
	struct sroce_cc *cc = &qp->cc;
	s32 flight = sroce_psn_diff(qp->req.psn, qp->comp.una_psn);
	u32 floor;

	if (!sroce_cc_window_due(cc->window_cut, qp->comp.una_psn,
				 cc->window_psn))
		return;
	floor = sroce_cc_rate_window(cc->rate, qp->rto.rtt.srtt_us, qp->mtu);
	floor = clamp_t(u32, floor, SROCE_WINDOW_MIN, qp->req.cwnd);
	flight = clamp_t(s32, flight, 0, qp->req.cwnd);
	qp->req.cwnd = max_t(u32, flight / 2, floor);
	cc->window_psn = qp->req.psn;
	cc->window_cut = true;
}

/**
 * sroce_cc_cnp_recv() - react to a CNP from the QP's peer
 * @qp: the RC QP it was for, from its peer
 *
 * Context: softirq.
 */
void sroce_cc_cnp_recv(struct sroce_qp *qp)
{
	struct sroce_cc *cc = &qp->cc;
	u32 min_rate = sroce_cc_mbps(&sroce_min_rate_mbps);
	u32 max_rate = sroce_cc_mbps(&sroce_max_rate_mbps);
	unsigned int g = sroce_cc_g();
	u64 now = ktime_get_ns();

	spin_lock(&qp->req.lock);
	if (!sroce_qp_req_active(qp)) {
		sroce_qp_rx_drop(qp, SROCE_STAT_RX_BAD_QP_STATE, 0);
		goto out;
	}
	/*
	 * A CNP cannot be checked against the connection (threat model in
	 * admin-guide.rst): with ECN off, forged ones slow nothing down.
	 */
	if (!READ_ONCE(sroce_ecn))
		goto out;
	sroce_stat_inc(qp->sdev, SROCE_STAT_CNP_HANDLED);
	if (!cc->limited) {
		cc->limited = true;
		cc->rate = sroce_cc_start_rate(max_rate, &cc->meas);
		cc->alpha = SROCE_CC_ONE;
		cc->next_send = now;
	} else {
		sroce_cc_catch_up(qp, now);
		cc->rate = min(cc->rate, sroce_cc_cap(max_rate, &cc->meas));
	}
	cc->target = cc->rate;
	cc->rate = sroce_cc_cut(cc->rate, cc->alpha, min_rate);
	cc->alpha = cc->alpha - (cc->alpha >> g) + (SROCE_CC_ONE >> g);
	cc->alpha_time = now;
	cc->incr_time = now;
	cc->bytes = 0;
	cc->t_stage = 0;
	cc->b_stage = 0;
	sroce_cc_shrink_window(qp);
out:
	spin_unlock(&qp->req.lock);
}

/* Send the QP's peer a CNP. */
static void sroce_cc_send_cnp(struct sroce_qp *qp)
{
	struct sroce_pkt pkt;
	void *rsvd;

	rsvd = sroce_pkt_alloc(qp, &pkt, SROCE_OP_CNP, SROCE_CNP_RSVD_LEN);
	if (!rsvd) {
		sroce_stat_inc(qp->sdev, SROCE_STAT_TX_NOMEM);
		return;
	}
	memset(rsvd, 0, SROCE_CNP_RSVD_LEN);
	/* Annex A17.9: BECN set, PSN 0, no AckReq. */
	pkt.bth.becn = true;
	sroce_stat_inc(qp->sdev, SROCE_STAT_CNP_SENT);
	sroce_pkt_send(qp, &qp->av, &pkt, qp->dest_qpn);
}

/**
 * sroce_cc_congested() - a request packet for @qp arrived marked CE
 * @qp: the RC QP, the packet from its peer
 *
 * Sends the peer a CNP, unless one left less than cnp_interval_us ago.
 *
 * Context: softirq.
 */
void sroce_cc_congested(struct sroce_qp *qp)
{
	u64 interval = (u64)READ_ONCE(sroce_cnp_interval_us) * NSEC_PER_USEC;
	u64 now = ktime_get_ns();
	s64 last = atomic64_read(&qp->cc.last_cnp);
	enum ib_qp_state state;

	if (last && now - (u64)last < interval)
		return;
	/* Of receivers on several CPUs at once, one sends it. */
	if (atomic64_cmpxchg(&qp->cc.last_cnp, last, now) != last)
		return;
	spin_lock(&qp->resp.lock);
	state = READ_ONCE(qp->state);
	/* The path to the peer is set from RTR on. */
	if (state == IB_QPS_RTR || state == IB_QPS_RTS ||
	    state == IB_QPS_SQD || state == IB_QPS_SQE)
		sroce_cc_send_cnp(qp);
	spin_unlock(&qp->resp.lock);
}
