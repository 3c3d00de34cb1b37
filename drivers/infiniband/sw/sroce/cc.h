/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * ECN congestion control (cc.c): DCQCN's notification point (CNPs for
 * packets that arrive marked Congestion Experienced) and reaction point
 * (a per-QP rate limiter in the requester, cut on CNPs).
 */
#ifndef _SROCE_CC_H
#define _SROCE_CC_H

#include <linux/atomic.h>
#include <linux/hrtimer.h>
#include <linux/types.h>
#include <sroce/dcqcn.h>

struct sk_buff;
struct sroce_qp;

/**
 * struct sroce_cc - a QP's congestion control state
 * @limited: the requester sends at most @rate; false at full speed
 * @rate: the current rate (RC in DCQCN), kbit/s
 * @target: the target rate (RT), kbit/s
 * @alpha: the congestion estimate, in units of 2^-16
 * @alpha_time: when @alpha was last updated, ns
 * @incr_time: when the last timer stage began, ns
 * @bytes: bytes sent since the last byte stage
 * @t_stage: timer stages since the last CNP
 * @b_stage: byte stages since the last CNP
 * @next_send: the earliest time the next request packet may go, ns
 * @window_psn: the requester's next PSN when a CNP last halved its window
 * @window_cut: a CNP halved the window since the QP was reset
 * @meas: the rate the QP's requester sends at, measured while ECN is on
 * @timer: wakes the requester at @next_send
 * @last_cnp: when the last CNP left for this QP's peer, ns
 *
 * Every field but @last_cnp is under req.lock; @last_cnp is changed by
 * cmpxchg, so that concurrent receivers send one CNP between them.
 */
struct sroce_cc {
	bool		limited;
	u32		rate;
	u32		target;
	u32		alpha;
	u64		alpha_time;
	u64		incr_time;
	u32		bytes;
	u32		t_stage;
	u32		b_stage;
	u64		next_send;
	u32		window_psn;
	bool		window_cut;
	struct sroce_cc_meas meas;
	struct hrtimer	timer;
	atomic64_t	last_cnp;
};

u8 sroce_cc_tclass(const struct sroce_qp *qp, u8 tclass);
bool sroce_cc_rx_ce(const struct sk_buff *skb, bool ipv6);
void sroce_cc_init(struct sroce_qp *qp);
void sroce_cc_reset(struct sroce_qp *qp);
void sroce_cc_stop(struct sroce_qp *qp);
void sroce_cc_congested(struct sroce_qp *qp);
void sroce_cc_cnp_recv(struct sroce_qp *qp);
bool sroce_cc_may_send(struct sroce_qp *qp);
void sroce_cc_sent(struct sroce_qp *qp, u32 bytes);

#endif /* _SROCE_CC_H */
