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
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/interrupt.h>
#include <linux/llist.h>
#include <linux/module.h>
#include <linux/percpu.h>

#include "ack.h"
#include "qp.h"
#include "resp.h"

static bool sroce_ack_coalesce = true;
module_param_named(ack_coalesce, sroce_ack_coalesce, bool, 0644);
MODULE_PARM_DESC(ack_coalesce,
		 "Answer the requests of a QP in one receive batch with one ACK (default: on)");

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
		sroce_resp_ack_flush(qp);
		spin_unlock(&qp->resp.lock);
		sroce_qp_put(qp);
	}
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
