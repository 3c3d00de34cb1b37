/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Transmit flow control (txflow.c): senders of a QP pause while too many of
 * its packets, or of its device's, wait in the queues below.
 */
#ifndef _SROCE_TXFLOW_H
#define _SROCE_TXFLOW_H

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <linux/types.h>

struct sk_buff;
struct sroce_dev;
struct sroce_qp;
struct sroce_tx_count;

/**
 * struct sroce_txflow - a QP's packets in the queues below
 * @count: the QP's packets handed to the IP layer and not yet freed (sent
 *	by the NIC, or dropped); it outlives the QP while packets remain
 * @waiters: SROCE_TXW_* bits: who waits for the QP's packets in flight, or
 *	the device's, to go down
 * @wait_entry: entry in the device's line of QPs waiting to send (struct
 *	sroce_dev_txflow); empty when not in it
 * @wait_closed: the QP is being destroyed and may not join that line again
 *
 * Locking: @waiters changes by atomic bit operations; @wait_entry and
 * @wait_closed are under the device's sroce_dev_txflow.wait_lock.
 */
struct sroce_txflow {
	struct sroce_tx_count	*count;
	unsigned long		waiters;
	struct list_head	wait_entry;
	bool			wait_closed;
};

/**
 * struct sroce_dev_txflow - a device's packets in the queues below
 * @ref: one for the device, one per QP's struct sroce_tx_count
 * @inflight: packets of all the device's QPs handed to the IP layer and
 *	not yet freed
 * @wait_lock: protects @wait; irq-safe, since packets are freed anywhere
 * @wait: QPs waiting for @inflight to go down, oldest first
 *
 * Allocated apart from the device, which does not wait for its packets:
 * it goes with the last of them.
 */
struct sroce_dev_txflow {
	refcount_t		ref;
	atomic_t		inflight;
	spinlock_t		wait_lock;	/* see above */
	struct list_head	wait;
};

/* Bits of sroce_txflow.waiters: the work item to run when packets leave. */
enum {
	SROCE_TXW_REQ,
	SROCE_TXW_RESP,
};

void sroce_pkt_track(struct sroce_qp *qp, struct sk_buff *skb);
bool sroce_tx_throttled(struct sroce_qp *qp, unsigned int waiter);
bool sroce_tx_held(struct sroce_qp *qp);
bool sroce_tx_cork(struct sroce_qp *qp);
int sroce_tx_qp_init(struct sroce_qp *qp);
void sroce_tx_qp_detach(struct sroce_qp *qp);
void sroce_tx_unwait(struct sroce_qp *qp);
void sroce_tx_qp_release(struct sroce_qp *qp);
int sroce_tx_dev_init(struct sroce_dev *sdev);
void sroce_tx_dev_release(struct sroce_dev *sdev);

#endif /* _SROCE_TXFLOW_H */
