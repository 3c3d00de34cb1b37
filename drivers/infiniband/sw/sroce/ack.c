// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ACK coalescing.
 *
 * A requester asks for an ACK at the end of every message and every 16
 * packets, and an ACK acknowledges every PSN up to its own. A NIC hands
 * the stack its received packets in batches (one NAPI poll, and a
 * transmit burst from the peer arrives as one), and answering each
 * request of a batch at once costs a packet, a trip through the IP layer
 * and a device notification per message, plus a receive and a completer
 * run on the requester per ACK, where the batch's last ACK alone says as
 * much.
 *
 * So the responder notes the ACK it owes (resp.c) and queues its QP on
 * this CPU's batch; a tasklet sends one ACK per queued QP. The tasklet
 * runs once the receive softirq has finished its batch: softirqs run in
 * the order of their numbers, and the tasklet's comes after NET_RX's. A
 * response the responder sends in between (a NAK, a READ or atomic
 * response) sends the owed ACK before it, so responses keep their order.
 * The responses to the READs and atomics of a batch wait on the same
 * list, in one burst per QP (sroce_resp_batch_burst()), and leave
 * together, before the QP's owed ACK.
 *
 * A QP that answers what it receives (a ping-pong, a request and its
 * reply) sends its own request soon after its responder's ACK, to the same
 * peer, and the peer waits for both. Sent at once, the ACK is a
 * transmission of its own (a trip through the IP layer and a kick of the
 * device), made in the softirq ahead of the application's turn to answer.
 * So once the requester has started to send within ack_hold_us of each of
 * SROCE_ACK_STREAK ACKs in a row that its responder sent at once, the QP is
 * taken to answer: the batch holds its next owed ACKs while the requester
 * has nothing left to send, and the requester's next run
 * (sroce_ack_join()) puts the held one first in its transmit burst, the
 * two leaving with one kick. A hold that runs out sends the ACK
 * alone, and the QP holds no more until it has answered as many again: a
 * QP that answers only some of what it receives rarely holds, and never
 * one that only receives.
 *
 * The hold is bounded by a timer of the timer wheel: ack_hold_us rounded
 * up to whole ticks (4 ms at HZ=250) at the most. An hrtimer would bound
 * it finer, but starting and stopping one per message reprograms the
 * CPU's timer twice, which a virtual machine pays dearly for: measured
 * under emulation, it cost more than the hold saved. A QP whose own Local
 * ACK Timeout is below four times that bound does not hold, so that its
 * peer, presumably set alike, does not time out waiting.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/interrupt.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/llist.h>
#include <linux/module.h>
#include <linux/percpu.h>

#include "ack.h"
#include "qp.h"
#include "resp.h"
#include "stats.h"

/* ACKs sent at once that a QP answers in a row before it holds one. */
#define SROCE_ACK_STREAK	4

static bool sroce_ack_coalesce = true;
module_param_named(ack_coalesce, sroce_ack_coalesce, bool, 0644);
MODULE_PARM_DESC(ack_coalesce,
		 "Answer the requests of a QP in one receive batch with one ACK (default: on)");

static unsigned int sroce_ack_hold_us = 100;
module_param_named(ack_hold_us, sroce_ack_hold_us, uint, 0644);
MODULE_PARM_DESC(ack_hold_us,
		 "Longest an RC QP that answers within this time holds its ACK for its own next requests to carry (0: never; default: 100)");

/**
 * struct sroce_ack_batch - the QPs of one CPU that owe an ACK
 * @qps: the QPs, each holding a reference; linked by resp.ack_node
 * @flush: sends their ACKs
 */
struct sroce_ack_batch {
	struct llist_head	qps;
	struct tasklet_struct	flush;
};

static DEFINE_PER_CPU(struct sroce_ack_batch, sroce_ack_batches);

/**
 * sroce_ack_coalescing() - whether ACKs are coalesced
 *
 * Return: the ack_coalesce parameter.
 */
bool sroce_ack_coalescing(void)
{
	return READ_ONCE(sroce_ack_coalesce);
}

/**
 * sroce_ack_queue() - queue a QP that owes an ACK on this CPU's batch
 * @qp: the QP; resp.lock held, not queued yet, bottom halves off
 *
 * Return: false if the QP is being destroyed: the caller sends the ACK
 * itself.
 */
bool sroce_ack_queue(struct sroce_qp *qp)
{
	struct sroce_ack_batch *batch = this_cpu_ptr(&sroce_ack_batches);

	if (!sroce_qp_get(qp))
		return false;
	llist_add(&qp->resp.ack_node, &batch->qps);
	tasklet_schedule(&batch->flush);
	return true;
}

/* Whether @qp's Local ACK Timeout (0: none) leaves room for a hold. */
static bool sroce_ack_hold_fits(const struct sroce_qp *qp,
				unsigned long ticks)
{
	u64 timeout_us = (4096ULL << qp->timeout) / NSEC_PER_USEC;

	return !qp->timeout || timeout_us >= 4ULL * jiffies_to_usecs(ticks);
}

/*
 * Whether @qp's requester has sent all that was posted: it then waits for
 * the application, whose answer a hold waits for. One that still has work
 * waits for the network (its window, its rate), and holding its ACK could
 * only hold back its peer's requester, which may be waiting on it likewise.
 * Read without req.lock: a stale answer costs one hold, or one ACK alone.
 */
static bool sroce_ack_requester_idle(struct sroce_qp *qp)
{
	return READ_ONCE(qp->req.next) ==
	       sroce_queue_load_producer(&qp->req.sq);
}

/*
 * Hold the ACK @qp owes for its requester, when the requester has been
 * answering, has nothing left to send and the QP can send. Context: the
 * batch; resp.lock held.
 */
static bool sroce_ack_hold(struct sroce_qp *qp)
{
	unsigned int hold_us = READ_ONCE(sroce_ack_hold_us);
	unsigned long ticks = usecs_to_jiffies(hold_us);

	if (!qp->resp.ack_due || qp->resp.ack_streak < SROCE_ACK_STREAK ||
	    !hold_us || !sroce_qp_req_active(qp) ||
	    !sroce_ack_hold_fits(qp, ticks) || !sroce_ack_requester_idle(qp))
		return false;
	if (!qp->resp.ack_held) {
		qp->resp.ack_held = true;
		mod_timer(&qp->resp.ack_timer, jiffies + ticks);
	}
	sroce_stat_inc(qp->sdev, SROCE_STAT_ACK_HELD);
	return true;
}

static void sroce_ack_flush_batch(struct tasklet_struct *t)
{
	struct sroce_ack_batch *batch = from_tasklet(batch, t, flush);
	struct llist_node *list = llist_del_all(&batch->qps);
	struct sroce_qp *qp, *next;

	/*
	 * A QP may be queued again, on any CPU, once resp.lock is dropped:
	 * its successor is read before that.
	 */
	llist_for_each_entry_safe(qp, next, list, resp.ack_node) {
		spin_lock(&qp->resp.lock);
		qp->resp.ack_queued = false;
		sroce_resp_tx_pending(qp);
		if (!sroce_ack_hold(qp))
			sroce_resp_ack_flush(qp);
		spin_unlock(&qp->resp.lock);
		sroce_qp_put(qp);
	}
}

/*
 * The requester did not come within the hold: the ACK goes alone, and the
 * QP holds no more until it has answered SROCE_ACK_STREAK ACKs sent at
 * once again; this one, sent late, does not count. A QP being destroyed
 * (RESET) sent what it held as it left RTS (sroce_ack_release()).
 */
static void sroce_ack_hold_end(struct timer_list *timer)
{
	struct sroce_qp *qp = container_of(timer, struct sroce_qp,
					   resp.ack_timer);

	spin_lock(&qp->resp.lock);
	if (qp->resp.ack_held) {
		qp->resp.ack_held = false;
		if (qp->resp.ack_due && READ_ONCE(qp->state) != IB_QPS_RESET) {
			qp->resp.ack_streak = 0;
			sroce_stat_inc(qp->sdev, SROCE_STAT_ACK_HOLD_EXPIRED);
			sroce_resp_ack_flush(qp);
			WRITE_ONCE(qp->resp.ack_sent_ns, 0);
		}
	}
	spin_unlock(&qp->resp.lock);
}

/**
 * sroce_ack_join() - let the requester carry the ACK its responder owes
 * @qp: an RC QP whose requester is about to send; req.lock held
 * @burst: the requester's burst
 *
 * An owed ACK, held or not yet sent by the batch, goes first in @burst.
 * Otherwise the run answers the last ACK sent at once, if any: in time
 * when within ack_hold_us of it.
 */
void sroce_ack_join(struct sroce_qp *qp, struct sroce_burst *burst)
{
	u64 sent = READ_ONCE(qp->resp.ack_sent_ns);
	u64 hold;

	if (!sent && !READ_ONCE(qp->resp.ack_due))
		return;
	spin_lock(&qp->resp.lock);
	if (qp->resp.ack_held) {
		qp->resp.ack_held = false;
		/* A callback already running finds nothing held. */
		del_timer(&qp->resp.ack_timer);
	}
	sent = qp->resp.ack_sent_ns;
	if (qp->resp.ack_due) {
		sroce_resp_ack_join(qp, burst);
	} else if (sent) {
		hold = (u64)READ_ONCE(sroce_ack_hold_us) * NSEC_PER_USEC;
		if (ktime_get_ns() - sent >= hold)
			qp->resp.ack_streak = 0;
		else if (qp->resp.ack_streak < SROCE_ACK_STREAK)
			qp->resp.ack_streak++;
		WRITE_ONCE(qp->resp.ack_sent_ns, 0);
	}
	spin_unlock(&qp->resp.lock);
}

/**
 * sroce_ack_sent() - note an owed ACK the responder sent at once
 * @qp: the QP; resp.lock held
 *
 * One sent before it that the requester has not answered breaks the
 * QP's streak.
 */
void sroce_ack_sent(struct sroce_qp *qp)
{
	if (qp->resp.ack_sent_ns)
		qp->resp.ack_streak = 0;
	WRITE_ONCE(qp->resp.ack_sent_ns, ktime_get_ns());
}

/**
 * sroce_ack_release() - send a held ACK now, as the QP leaves RTS or SQD
 * @qp: the QP; resp.lock held
 *
 * An application may destroy its QP, or move it to the error state, as
 * soon as the last completion it waits for is in, before a hold ends: its
 * peer still gets the ACK the message it received is owed, and the
 * responses waiting for the end of the batch go first.
 */
void sroce_ack_release(struct sroce_qp *qp)
{
	sroce_resp_tx_pending(qp);
	if (!qp->resp.ack_held)
		return;
	qp->resp.ack_held = false;
	del_timer(&qp->resp.ack_timer);
	sroce_resp_ack_flush(qp);
}

/**
 * sroce_ack_qp_init() - set up a new QP's hold
 * @qp: the QP
 */
void sroce_ack_qp_init(struct sroce_qp *qp)
{
	timer_setup(&qp->resp.ack_timer, sroce_ack_hold_end, 0);
}

/**
 * sroce_ack_reset() - forget whether a QP answers, as it goes to RESET
 * @qp: the QP; resp.lock held
 *
 * A hold still running ends with nothing to send: the owed ACK is gone.
 */
void sroce_ack_reset(struct sroce_qp *qp)
{
	qp->resp.ack_due = false;
	qp->resp.ack_streak = 0;
	WRITE_ONCE(qp->resp.ack_sent_ns, 0);
}

/**
 * sroce_ack_qp_stop() - end a QP's hold for good, as it is destroyed
 * @qp: the QP, in RESET: sroce_ack_hold() starts no hold any more
 */
void sroce_ack_qp_stop(struct sroce_qp *qp)
{
	del_timer_sync(&qp->resp.ack_timer);
}

/**
 * sroce_ack_init() - set up the per-CPU batches, at module load
 */
void sroce_ack_init(void)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		struct sroce_ack_batch *batch = per_cpu_ptr(&sroce_ack_batches,
							    cpu);

		init_llist_head(&batch->qps);
		tasklet_setup(&batch->flush, sroce_ack_flush_batch);
	}
}

/**
 * sroce_ack_exit() - wait for the batches' tasklets, at module unload
 *
 * Every QP is gone by then, and with it every ACK it owed: a QP's
 * destruction waits for the reference its batch holds.
 */
void sroce_ack_exit(void)
{
	int cpu;

	for_each_possible_cpu(cpu)
		tasklet_kill(&per_cpu_ptr(&sroce_ack_batches, cpu)->flush);
}
