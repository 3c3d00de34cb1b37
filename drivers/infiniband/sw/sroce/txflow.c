// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Transmit flow control: how many of a QP's packets, and of its device's,
 * may wait in the queues below (qdisc, NIC ring) before its senders pause,
 * and the line in which paused QPs wait to go on.
 */

#include <linux/atomic.h>
#include <linux/bitops.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/slab.h>
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

/**
 * struct sroce_tx_count - one QP's packets in the queues below
 * @ref: one for the QP until it is destroyed, one per packet in flight
 * @inflight: packets handed to the IP layer and not yet freed
 * @qp: the QP whose senders to wake as packets leave; NULL once the QP is
 *	being destroyed (RCU)
 * @dev: the device's count, with a reference
 *
 * A NIC may keep a packet for as long as it likes (one whose link has no
 * peer may never send it), so a packet must not keep its QP or its device
 * from going away: what its destructor needs lives here and in struct
 * sroce_dev_txflow, freed with the last packet. Once its QP is destroyed,
 * a count also holds a reference on the module, whose code the destructor
 * of a packet still in flight is.
 */
struct sroce_tx_count {
	refcount_t		ref;
	atomic_t		inflight;
	struct sroce_qp __rcu	*qp;
	struct sroce_dev_txflow	*dev;
};

static void sroce_dev_txflow_put(struct sroce_dev_txflow *dtx)
{
	if (refcount_dec_and_test(&dtx->ref))
		kfree(dtx);
}

static void sroce_tx_count_put(struct sroce_tx_count *count)
{
	if (!refcount_dec_and_test(&count->ref))
		return;
	sroce_dev_txflow_put(count->dev);
	kfree(count);
	module_put(THIS_MODULE);
}

/* Run the work items of @qp that wait for room. Return: whether any did. */
static bool sroce_tx_wake(struct sroce_qp *qp)
{
	bool woken = false;

	if (test_and_clear_bit(SROCE_TXW_REQ, &qp->tx.waiters)) {
		sroce_req_schedule(qp);
		woken = true;
	}
	if (test_and_clear_bit(SROCE_TXW_RESP, &qp->tx.waiters)) {
		sroce_resp_schedule(qp);
		woken = true;
	}
	return woken;
}

/*
 * Wake the QP waiting longest for room on the device, skipping those
 * already woken by their own packets leaving; all of them when the
 * device's queues are empty, so that a woken QP that sends nothing cannot
 * leave the others waiting for a packet that will never be freed. A QP
 * being destroyed leaves the line first (sroce_tx_unwait()).
 */
static void sroce_dev_tx_wake(struct sroce_dev_txflow *dtx, bool all)
{
	struct sroce_qp *qp;
	unsigned long flags;

	spin_lock_irqsave(&dtx->wait_lock, flags);
	while ((qp = list_first_entry_or_null(&dtx->wait, struct sroce_qp,
					      tx.wait_entry))) {
		list_del_init(&qp->tx.wait_entry);
		if (sroce_tx_wake(qp) && !all)
			break;
	}
	spin_unlock_irqrestore(&dtx->wait_lock, flags);
}

/* The skb destructor: one of the QP's packets has left (or was dropped). */
static void sroce_pkt_sent(struct sk_buff *skb)
{
	struct sroce_tx_count *count = skb_shinfo(skb)->destructor_arg;
	struct sroce_dev_txflow *dtx = count->dev;
	int dev_left = atomic_dec_return(&dtx->inflight);
	int left = atomic_dec_return(&count->inflight);
	struct sroce_qp *qp;

	/*
	 * Once only: the split of a burst (burst.c) releases the head state
	 * of its packets, and the skbs live on without being told.
	 */
	skb->destructor = NULL;

	rcu_read_lock();
	qp = rcu_dereference(count->qp);
	if (qp && left <= SROCE_TX_INFLIGHT_LOW && READ_ONCE(qp->tx.waiters))
		sroce_tx_wake(qp);
	rcu_read_unlock();
	/* Pairs with the barrier in sroce_dev_tx_throttled(). */
	if (dev_left < SROCE_DEV_TX_INFLIGHT_HIGH &&
	    !list_empty_careful(&dtx->wait))
		sroce_dev_tx_wake(dtx, !dev_left);
	sroce_tx_count_put(count);
}

/**
 * sroce_pkt_track() - count a packet as its QP's until it is freed
 * @qp: the sending QP, not yet released (sroce_tx_qp_release())
 * @skb: the packet, about to be handed to the IP layer
 *
 * The destructor wakes the senders waiting for room. The packet may
 * outlive the QP: it holds a reference on the QP's count, not on the QP.
 *
 * Context: any.
 */
void sroce_pkt_track(struct sroce_qp *qp, struct sk_buff *skb)
{
	struct sroce_tx_count *count = qp->tx.count;

	refcount_inc(&count->ref);
	atomic_inc(&count->inflight);
	atomic_inc(&count->dev->inflight);
	/* Not a zero-copy skb: the destructor argument is free to use. */
	skb_shinfo(skb)->destructor_arg = count;
	skb->destructor = sroce_pkt_sent;
}

/*
 * Have @waiter's work item run by the destructor of @qp's packets, which
 * runs it once no more than SROCE_TX_INFLIGHT_LOW of them remain, when at
 * least @from are in the queues below. Seen again after the waiter bit is
 * set, a count at or below @above ends the wait: for the throttle, there
 * is room again (the destructor's level); for the cork, no packet is left
 * whose destructor would run the work item (0).
 *
 * Return: true when the work item will run; false when the caller goes on
 * itself.
 */
static bool sroce_qp_tx_wait(struct sroce_qp *qp, unsigned int waiter,
			     int from, int above)
{
	atomic_t *inflight = &qp->tx.count->inflight;

	if (atomic_read(inflight) < from)
		return false;
	set_bit(waiter, &qp->tx.waiters);
	/* Pairs with atomic_dec_return() in sroce_pkt_sent(). */
	smp_mb__after_atomic();
	if (atomic_read(inflight) > above)
		return true;
	/*
	 * Drained meanwhile. A destructor that took the bit has queued the
	 * work item; otherwise nobody will.
	 */
	return !test_and_clear_bit(waiter, &qp->tx.waiters);
}

/* Whether @qp must wait for the device's packets to leave; see below. */
static bool sroce_dev_tx_throttled(struct sroce_qp *qp, unsigned int waiter)
{
	struct sroce_dev_txflow *dtx = qp->tx.count->dev;
	unsigned long flags;

	if (atomic_read(&dtx->inflight) < SROCE_DEV_TX_INFLIGHT_HIGH)
		return false;
	spin_lock_irqsave(&dtx->wait_lock, flags);
	if (qp->tx.wait_closed) {
		/* Being destroyed: nothing more is to be sent. */
		spin_unlock_irqrestore(&dtx->wait_lock, flags);
		return true;
	}
	set_bit(waiter, &qp->tx.waiters);
	if (list_empty(&qp->tx.wait_entry))
		list_add_tail(&qp->tx.wait_entry, &dtx->wait);
	spin_unlock_irqrestore(&dtx->wait_lock, flags);
	/* Pairs with atomic_dec_return() in sroce_pkt_sent(). */
	smp_mb();
	if (atomic_read(&dtx->inflight) >= SROCE_DEV_TX_INFLIGHT_HIGH) {
		sroce_stat_inc(qp->sdev, SROCE_STAT_TX_DEVICE_WAIT);
		return true;
	}
	/* Drained before we were listed: nobody else may wake us. */
	spin_lock_irqsave(&dtx->wait_lock, flags);
	list_del_init(&qp->tx.wait_entry);
	clear_bit(waiter, &qp->tx.waiters);
	spin_unlock_irqrestore(&dtx->wait_lock, flags);
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
	return sroce_qp_tx_wait(qp, waiter, SROCE_TX_INFLIGHT_HIGH,
				SROCE_TX_INFLIGHT_LOW) ||
	       sroce_dev_tx_throttled(qp, waiter);
}

/**
 * sroce_tx_cork() - wait for one of the requester's packets to leave
 * @qp: the QP
 *
 * Sets the requester's waiter bit when the QP has packets in the queues
 * below, so that their destructor runs the requester's work item once no
 * more than SROCE_TX_INFLIGHT_LOW remain (the first one freed, when that
 * few are there): the work item then sends whatever was posted meanwhile
 * as one burst.
 *
 * Context: any.
 * Return: true when the work item will run; false when nothing of the QP's
 * is in flight, and nothing would wake it.
 */
bool sroce_tx_cork(struct sroce_qp *qp)
{
	return sroce_qp_tx_wait(qp, SROCE_TXW_REQ, 1, 0);
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
	return atomic_read(&qp->tx.count->inflight) ||
	       test_bit(SROCE_TXW_REQ, &qp->tx.waiters);
}

/**
 * sroce_tx_qp_init() - set up the count of a new QP's packets in flight
 * @qp: the QP, not yet published; its device is set
 *
 * Context: process.
 * Return: 0 or -ENOMEM.
 */
int sroce_tx_qp_init(struct sroce_qp *qp)
{
	struct sroce_tx_count *count;

	count = kzalloc(sizeof(*count), GFP_KERNEL);
	if (!count)
		return -ENOMEM;
	refcount_set(&count->ref, 1);
	RCU_INIT_POINTER(count->qp, qp);
	count->dev = qp->sdev->tx;
	refcount_inc(&count->dev->ref);
	qp->tx.count = count;
	return 0;
}

/**
 * sroce_tx_qp_detach() - stop the QP's packets in flight from waking it
 * @qp: a QP being destroyed
 *
 * Packets freed from now on only count down. The caller waits for an RCU
 * grace period before cancelling the QP's work items, so that a destructor
 * that found the QP before this is done with it.
 *
 * Context: any.
 */
void sroce_tx_qp_detach(struct sroce_qp *qp)
{
	rcu_assign_pointer(qp->tx.count->qp, NULL);
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
	struct sroce_dev_txflow *dtx = qp->tx.count->dev;
	unsigned long flags;

	spin_lock_irqsave(&dtx->wait_lock, flags);
	qp->tx.wait_closed = true;
	list_del_init(&qp->tx.wait_entry);
	spin_unlock_irqrestore(&dtx->wait_lock, flags);
}

/**
 * sroce_tx_qp_release() - let go of the count of a QP's packets in flight
 * @qp: the QP, detached and out of the line, or never published; nothing
 *	sends on it any more
 *
 * Packets still in the queues below, which a NIC may hold for ever, keep
 * the count, the device's count and the module until the last of them is
 * freed. The QP does not wait for them.
 *
 * Context: process.
 */
void sroce_tx_qp_release(struct sroce_qp *qp)
{
	__module_get(THIS_MODULE);
	sroce_tx_count_put(qp->tx.count);
	qp->tx.count = NULL;
}

/**
 * sroce_tx_dev_init() - set up the count of a new device's packets in flight
 * @sdev: the device, not yet registered
 *
 * Context: process.
 * Return: 0 or -ENOMEM.
 */
int sroce_tx_dev_init(struct sroce_dev *sdev)
{
	struct sroce_dev_txflow *dtx;

	dtx = kzalloc(sizeof(*dtx), GFP_KERNEL);
	if (!dtx)
		return -ENOMEM;
	refcount_set(&dtx->ref, 1);
	spin_lock_init(&dtx->wait_lock);
	INIT_LIST_HEAD(&dtx->wait);
	sdev->tx = dtx;
	return 0;
}

/**
 * sroce_tx_dev_release() - let go of the count of a device's packets
 * @sdev: the device; its QPs are destroyed
 *
 * Context: process.
 */
void sroce_tx_dev_release(struct sroce_dev *sdev)
{
	if (!sdev->tx)
		return;
	sroce_dev_txflow_put(sdev->tx);
	sdev->tx = NULL;
}
