/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Transmit flow control (txflow.c): senders of a QP pause while too many of
 * its packets, or of its device's, wait in the queues below.
 */
#ifndef _SROCE_TXFLOW_H
#define _SROCE_TXFLOW_H

#include <linux/types.h>

struct sk_buff;
struct sroce_qp;

/* Bits of sroce_qp.tx_waiters: the work item to run when packets leave. */
enum {
	SROCE_TXW_REQ,
	SROCE_TXW_RESP,
};

void sroce_pkt_track(struct sroce_qp *qp, struct sk_buff *skb);
bool sroce_tx_throttled(struct sroce_qp *qp, unsigned int waiter);
bool sroce_tx_held(struct sroce_qp *qp);
void sroce_tx_unwait(struct sroce_qp *qp);

#endif /* _SROCE_TXFLOW_H */
