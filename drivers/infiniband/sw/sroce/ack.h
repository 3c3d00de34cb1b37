/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * ACK coalescing: the ACKs an RC responder owes at the end of a receive
 * batch, sent once per QP, or held for the QP's requester to carry
 * (ack.c).
 */
#ifndef _SROCE_ACK_H
#define _SROCE_ACK_H

#include <linux/types.h>

struct sroce_burst;
struct sroce_qp;

bool sroce_ack_coalescing(void);
bool sroce_ack_queue(struct sroce_qp *qp);
void sroce_ack_qp_init(struct sroce_qp *qp);
void sroce_ack_qp_stop(struct sroce_qp *qp);
void sroce_ack_reset(struct sroce_qp *qp);
void sroce_ack_release(struct sroce_qp *qp);
void sroce_ack_sent(struct sroce_qp *qp);
void sroce_ack_join(struct sroce_qp *qp, struct sroce_burst *burst);
void sroce_ack_init(void);
void sroce_ack_exit(void);

#endif /* _SROCE_ACK_H */
