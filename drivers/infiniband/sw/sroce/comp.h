/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The completer (comp.c): ACKs and responses, completions, the
 * retransmission and RNR timers; and the retransmission timeout (rto.c).
 */
#ifndef _SROCE_COMP_H
#define _SROCE_COMP_H

#include <linux/ktime.h>
#include <linux/timer.h>
#include <linux/types.h>

#include <sroce/rto.h>
#include <sroce/wire.h>

struct sk_buff;
struct sroce_qp;

/**
 * struct sroce_comp - the completer's state of a QP
 * @una_psn: oldest unacknowledged PSN
 * @retries: transport retries left
 * @rnr_retries: RNR retries left
 * @rnr_wait: sending is paused by an RNR NAK
 * @read_rewound: a READ or atomic response was found missing and the
 *	request re-issued; later responses (sent before the responder saw the
 *	re-request) are ignored instead of re-issuing it again, until progress
 * @retrans_timer: local ACK timeout
 * @rnr_timer: RNR back-off
 *
 * Locking: the fields are under the requester's lock (struct sroce_req);
 * the timers run with it taken.
 */
struct sroce_comp {
	u32			una_psn;
	u8			retries;
	u8			rnr_retries;
	bool			rnr_wait;
	bool			read_rewound;
	struct timer_list	retrans_timer;
	struct timer_list	rnr_timer;
};

/**
 * struct sroce_rto - the retransmission timeout's state of a QP (rto.c)
 * @backoff: retransmission timeouts since a round trip was last timed, at
 *	most SROCE_RTO_BACKOFF_MAX (Karn's rule, see rto.c)
 * @deferred: timer expiries in a row put off by sroce_rto_defer()
 * @rtt_timing: a round trip is being timed, that of @rtt_psn
 * @rtt_psn: the request PSN being timed, sent once only
 * @rtt_start: when it was sent
 * @rtt: the round-trip estimate, see rto.c
 *
 * Locking: under the requester's lock (struct sroce_req).
 */
struct sroce_rto {
	u8			backoff;
	u8			deferred;
	bool			rtt_timing;
	u32			rtt_psn;
	ktime_t			rtt_start;
	struct sroce_rtt	rtt;
};

void sroce_comp_recv(struct sroce_qp *qp, struct sk_buff *skb,
		     const struct sroce_bth *bth,
		     const struct sroce_opcode_info *info, u32 payload);
void sroce_comp_retire(struct sroce_qp *qp);
void sroce_comp_resend(struct sroce_qp *qp);
void sroce_comp_fault_failed(struct sroce_qp *qp, u32 psn);
void sroce_comp_replay(struct sroce_qp *qp, struct sk_buff *skb);
void sroce_retrans_timer(struct timer_list *t);
void sroce_rnr_timer(struct timer_list *t);
void sroce_comp_arm_retrans(struct sroce_qp *qp);

/* rto.c */
void sroce_rto_reset(struct sroce_qp *qp);
void sroce_rto_sent(struct sroce_qp *qp, u32 psn);
void sroce_rto_rewound(struct sroce_qp *qp);
void sroce_rto_acked(struct sroce_qp *qp, u32 una_psn);
void sroce_rto_expired(struct sroce_qp *qp);
bool sroce_rto_defer(struct sroce_qp *qp);
unsigned long sroce_rto_interval(struct sroce_qp *qp);

#endif /* _SROCE_COMP_H */
