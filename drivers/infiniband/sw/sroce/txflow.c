// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Transmit flow control: how many of a QP's packets, and of its device's,
 * may wait in the queues below (qdisc, NIC ring) before its senders pause,
 * and the line in which paused QPs wait to go on.
 */

#include <linux/atomic.h>
#include <linux/bitops.h>
#include <linux/list.h>
#include <linux/skbuff.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>

#include "qp.h"
#include "sroce.h"
#include "stats.h"
#include "txflow.h"

/*
 * Packets of one QP allowed in the queues below (qdisc, NIC ring) before
 * its senders pause, and the level at which they go on. A full qdisc in
 * front of a slow link delays every packet behind it, ACKs and responses
 * included, until the peer's retransmission timer fires for nothing.
 */
#define SROCE_TX_INFLIGHT_HIGH	64
#define SROCE_TX_INFLIGHT_LOW	16

/*
 * Packets of all of one device's QPs allowed in the queues below. Many QPs
 * within their own limit still add up: a thousand of them would fill the
 * receiving CPU's backlog (1000 packets by default) on a veth or loopback
 * path, and what it refuses, ACKs included, is lost. A quarter of that
 * leaves room for the peer's ACKs and responses and for other traffic,
 * and is still far more than one link's bandwidth-delay product.
 */
#define SROCE_DEV_TX_INFLIGHT_HIGH	256

/* Run the work items of @qp that wait for room. Return: whether any did. */
static bool sroce_tx_wake(struct sroce_qp *qp)
{
	bool woken = false;

	if (test_and_clear_bit(SROCE_TXW_REQ, &qp->tx.waiters)) {
		queue_work(system_unbound_wq, &qp->req.work);
		woken = true;
	}
	if (test_and_clear_bit(SROCE_TXW_RESP, &qp->tx.waiters)) {
		queue_work(system_unbound_wq, &qp->resp.work);
		woken = true;
	}
	return woken;
}

/*
 * Wake the QP waiting longest for room on @sdev, skipping those already
 * woken by their own packets leaving; all of them when the device's
 * queues are empty, so that a woken QP that sends nothing cannot leave
 * the others waiting for a packet that will never be freed.
 */
static void sroce_dev_tx_wake(struct sroce_dev *sdev, bool all)
{
	struct sroce_qp *qp;
	unsigned long flags;

	spin_lock_irqsave(&sdev->tx.wait_lock, flags);
	while ((qp = list_first_entry_or_null(&sdev->tx.wait, struct sroce_qp,
					      tx.wait_entry))) {
		list_del_init(&qp->tx.wait_entry);
		if (sroce_tx_wake(qp) && !all)
			break;
	}
	spin_unlock_irqrestore(&sdev->tx.wait_lock, flags);
}

/* The skb destructor: one of the QP's packets has left (or was dropped). */
static void sroce_pkt_sent(struct sk_buff *skb)
{
	struct sroce_qp *qp = skb_shinfo(skb)->destructor_arg;
	struct sroce_dev *sdev = qp->sdev;
	int dev_left = atomic_dec_return(&sdev->tx.inflight);

	if (atomic_dec_return(&qp->tx.inflight) <= SROCE_TX_INFLIGHT_LOW &&
	    READ_ONCE(qp->tx.waiters))
		sroce_tx_wake(qp);
	/* Pairs with the barrier in sroce_dev_tx_throttled(). */
	if (dev_left < SROCE_DEV_TX_INFLIGHT_HIGH &&
	    !list_empty_careful(&sdev->tx.wait))
		sroce_dev_tx_wake(sdev, !dev_left);
	sroce_qp_put(qp);
}

/**
 * sroce_pkt_track() - count a packet as its QP's until it is freed
 * @qp: the sending QP
 * @skb: the packet, about to be handed to the IP layer
 *
 * The QP lives at least as long as the packet: the destructor drops the
 * reference taken here, and wakes the senders waiting for room.
 *
 * Context: any.
 */
void sroce_pkt_track(struct sroce_qp *qp, struct sk_buff *skb)
{
	if (!sroce_qp_get(qp))
		return;
	atomic_inc(&qp->tx.inflight);
	atomic_inc(&qp->sdev->tx.inflight);
	/* Not a zero-copy skb: the destructor argument is free to use. */
	skb_shinfo(skb)->destructor_arg = qp;
	skb->destructor = sroce_pkt_sent;
}

/* Whether @qp must wait for its own packets to leave; see below. */
static bool sroce_qp_tx_throttled(struct sroce_qp *qp, unsigned int waiter)
{
	if (atomic_read(&qp->tx.inflight) < SROCE_TX_INFLIGHT_HIGH)
		return false;
	set_bit(waiter, &qp->tx.waiters);
	/* Pairs with atomic_dec_return() in sroce_pkt_sent(). */
	smp_mb__after_atomic();
	if (atomic_read(&qp->tx.inflight) > SROCE_TX_INFLIGHT_LOW)
		return true;
	/* Drained meanwhile: nobody else will wake us. */
	clear_bit(waiter, &qp->tx.waiters);
	return false;
}

/* Whether @qp must wait for the device's packets to leave; see below. */
static bool sroce_dev_tx_throttled(struct sroce_qp *qp, unsigned int waiter)
{
	struct sroce_dev *sdev = qp->sdev;
	unsigned long flags;

	if (atomic_read(&sdev->tx.inflight) < SROCE_DEV_TX_INFLIGHT_HIGH)
		return false;
	spin_lock_irqsave(&sdev->tx.wait_lock, flags);
	if (qp->tx.wait_closed) {
		/* Being destroyed: nothing more is to be sent. */
		spin_unlock_irqrestore(&sdev->tx.wait_lock, flags);
		return true;
	}
	set_bit(waiter, &qp->tx.waiters);
	if (list_empty(&qp->tx.wait_entry))
		list_add_tail(&qp->tx.wait_entry, &sdev->tx.wait);
	spin_unlock_irqrestore(&sdev->tx.wait_lock, flags);
	/* Pairs with atomic_dec_return() in sroce_pkt_sent(). */
	smp_mb();
	if (atomic_read(&sdev->tx.inflight) >= SROCE_DEV_TX_INFLIGHT_HIGH) {
		sroce_stat_inc(sdev, SROCE_STAT_TX_DEVICE_WAIT);
		return true;
	}
	/* Drained before we were listed: nobody else may wake us. */
	spin_lock_irqsave(&sdev->tx.wait_lock, flags);
	list_del_init(&qp->tx.wait_entry);
	clear_bit(waiter, &qp->tx.waiters);
	spin_unlock_irqrestore(&sdev->tx.wait_lock, flags);
	return false;
}

/**
 * sroce_tx_throttled() - whether a sender of @qp must wait for packets to
 * leave the queues below
 * @qp: the QP
 * @waiter: SROCE_TXW_REQ or SROCE_TXW_RESP: the work item to run once
 *	there is room again
 *
 * A QP may have SROCE_TX_INFLIGHT_HIGH packets in the queues below, and all
 * the device's QPs together SROCE_DEV_TX_INFLIGHT_HIGH. A QP stopped by its
 * own limit goes on when its packets in flight fall to the low-water mark;
 * one stopped by the device's waits in line, and each packet of the device
 * that leaves lets the longest waiting QP go on.
 *
 * Context: any.
 * Return: true when the sender must stop; its work item is then queued
 * when there is room.
 */
bool sroce_tx_throttled(struct sroce_qp *qp, unsigned int waiter)
{
	return sroce_qp_tx_throttled(qp, waiter) ||
	       sroce_dev_tx_throttled(qp, waiter);
}

/**
 * sroce_tx_held() - whether the requester of @qp still has packets in this
 * host's queues, or waits for room in them
 * @qp: the QP
 *
 * The retransmission timer measures the network and the peer: time a
 * request spends in the local queues is not a reason to send it again.
 *
 * Context: any.
 * Return: true when a timeout now would say nothing about the peer.
 */
bool sroce_tx_held(struct sroce_qp *qp)
{
	return atomic_read(&qp->tx.inflight) ||
	       test_bit(SROCE_TXW_REQ, &qp->tx.waiters);
}

/**
 * sroce_tx_unwait() - take @qp out of its device's line of waiting senders
 * for good
 * @qp: a QP being destroyed
 *
 * Afterwards no packet of another QP wakes @qp's work items, and they do
 * not join the line again; the caller then cancels them.
 *
 * Context: process or softirq.
 */
void sroce_tx_unwait(struct sroce_qp *qp)
{
	struct sroce_dev *sdev = qp->sdev;
	unsigned long flags;

	spin_lock_irqsave(&sdev->tx.wait_lock, flags);
	qp->tx.wait_closed = true;
	list_del_init(&qp->tx.wait_entry);
	spin_unlock_irqrestore(&sdev->tx.wait_lock, flags);
}
