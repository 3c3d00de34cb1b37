/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The completer (comp.c): ACKs and responses, completions, the
 * retransmission and RNR timers; and the retransmission timeout (rto.c).
 */
#ifndef _SROCE_COMP_H
#define _SROCE_COMP_H

#include <linux/types.h>

#include <sroce/wire.h>

struct sk_buff;
struct sroce_qp;
struct timer_list;

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
