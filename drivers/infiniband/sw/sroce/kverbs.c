// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Work requests of kernel consumers (the MAD layer, ULPs): they are written
 * into the same rings as a process's WQEs, in the same layout, so the
 * requester and the responder do not tell the two apart. The kernel is the
 * producer of these rings; a lock per ring serializes posters, which may
 * post from any context.
 *
 * sroce registers without a DMA device: a kernel consumer's DMA addresses
 * are kernel virtual addresses (ib_uses_virt_dma()).
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/interrupt.h>

#include "ah.h"
#include "kverbs.h"
#include "limits.h"
#include "qp.h"
#include "queue.h"
#include "srq.h"

/* Copy inline data from the kernel buffers the SGEs name into the slot. */
static int sroce_kpost_inline(struct sroce_qp *qp, const struct ib_send_wr *wr,
			      struct rxe_send_wqe *uwqe)
{
	u32 len = 0;
	int i;

	for (i = 0; i < wr->num_sge; i++) {
		const struct ib_sge *sge = &wr->sg_list[i];

		if (sge->length > qp->req.max_inline - len)
			return -EINVAL;
		memcpy(uwqe->dma.inline_data + len,
		       (void *)(uintptr_t)sge->addr, sge->length);
		len += sge->length;
	}
	uwqe->dma.length = len;
	return 0;
}

/* Copy a work request's SGE list into a ring slot; return its bytes. */
static u64 sroce_kpost_copy_sges(struct rxe_dma_info *dma,
				 const struct ib_sge *sg_list, int num_sge)
{
	u64 len = 0;
	int i;

	for (i = 0; i < num_sge; i++) {
		dma->sge[i].addr = sg_list[i].addr;
		dma->sge[i].length = sg_list[i].length;
		dma->sge[i].lkey = sg_list[i].lkey;
		len += sg_list[i].length;
	}
	return len;
}

static int sroce_kpost_sges(struct sroce_qp *qp, const struct ib_send_wr *wr,
			    struct rxe_send_wqe *uwqe)
{
	u64 len;

	if (wr->num_sge < 0 || wr->num_sge > qp->req.max_sge)
		return -EINVAL;
	len = sroce_kpost_copy_sges(&uwqe->dma, wr->sg_list, wr->num_sge);
	if (len > SROCE_MAX_MSG_SIZE)
		return -EINVAL;
	uwqe->dma.num_sge = wr->num_sge;
	uwqe->dma.length = len;
	return 0;
}

/* The work request's remote part: RDMA, atomic or UD addressing. */
static int sroce_kpost_remote(struct sroce_qp *qp, const struct ib_send_wr *wr,
			      struct rxe_send_wqe *uwqe, struct sroce_ah **ah)
{
	struct rxe_send_wr *swr = &uwqe->wr;

	switch (wr->opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
		swr->wr.rdma.remote_addr = rdma_wr(wr)->remote_addr;
		swr->wr.rdma.rkey = rdma_wr(wr)->rkey;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		swr->wr.atomic.remote_addr = atomic_wr(wr)->remote_addr;
		swr->wr.atomic.compare_add = atomic_wr(wr)->compare_add;
		swr->wr.atomic.swap = atomic_wr(wr)->swap;
		swr->wr.atomic.rkey = atomic_wr(wr)->rkey;
		break;
	case IB_WR_REG_MR:
		/* The ring is kernel memory: it may carry the MR itself. */
		swr->wr.reg.mr = reg_wr(wr)->mr;
		swr->wr.reg.key = reg_wr(wr)->key;
		swr->wr.reg.access = reg_wr(wr)->access;
		break;
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
	case IB_WR_SEND_WITH_INV:
	case IB_WR_LOCAL_INV:
		break;
	default:
		/* Memory windows are not offered yet. */
		return -EOPNOTSUPP;
	}
	if (qp->type == IB_QPT_UD) {
		const struct ib_ud_wr *ud = ud_wr(wr);

		if (!ud->ah)
			return -EINVAL;
		*ah = to_sah(ud->ah);
		if (!refcount_inc_not_zero(&(*ah)->ref))
			return -EINVAL;
		swr->wr.ud.remote_qpn = ud->remote_qpn;
		swr->wr.ud.remote_qkey = ud->remote_qkey;
		swr->wr.ud.pkey_index = ud->pkey_index;
	}
	return 0;
}

/* Write one work request into the send ring's producer slot. */
static int sroce_kpost_send_one(struct sroce_qp *qp, const struct ib_send_wr *wr,
				u32 prod)
{
	struct rxe_send_wqe *uwqe = sroce_queue_slot(&qp->req.sq, prod);
	struct sroce_ah *ah = NULL;
	int err;

	memset(uwqe, 0, sizeof(*uwqe));
	uwqe->wr.wr_id = wr->wr_id;
	uwqe->wr.opcode = wr->opcode;
	uwqe->wr.send_flags = wr->send_flags;
	if (wr->opcode == IB_WR_SEND_WITH_INV || wr->opcode == IB_WR_LOCAL_INV)
		uwqe->wr.ex.invalidate_rkey = wr->ex.invalidate_rkey;
	else
		uwqe->wr.ex.imm_data = wr->ex.imm_data;

	err = sroce_kpost_remote(qp, wr, uwqe, &ah);
	if (err)
		return err;
	if (wr->send_flags & IB_SEND_INLINE)
		err = sroce_kpost_inline(qp, wr, uwqe);
	else
		err = sroce_kpost_sges(qp, wr, uwqe);
	if (err) {
		if (ah)
			sroce_ah_put(ah);
		return err;
	}
	/* The slot's private half: the AH travels with a reference. */
	qp->req.swqe[prod & qp->req.sq.mask].kah = ah;
	return 0;
}

/**
 * sroce_kpost_send() - post a kernel consumer's send work requests
 * @qp: a kernel QP
 * @wr: the chain
 * @bad_wr: set to the first one not posted
 *
 * Context: any.
 * Return: 0, -ENOMEM when the ring is full, -EINVAL or -EOPNOTSUPP for a
 * malformed or unsupported request; those before it are posted.
 */
int sroce_kpost_send(struct sroce_qp *qp, const struct ib_send_wr *wr,
		     const struct ib_send_wr **bad_wr)
{
	unsigned long flags;
	u32 prod;
	int err = 0;

	spin_lock_irqsave(&qp->kpost_lock, flags);
	prod = sroce_queue_load_producer(&qp->req.sq);
	for (; wr; wr = wr->next) {
		if (sroce_queue_next(&qp->req.sq, prod) ==
		    sroce_queue_load_consumer(&qp->req.sq)) {
			err = -ENOMEM;
			break;
		}
		err = sroce_kpost_send_one(qp, wr, prod);
		if (err)
			break;
		prod = sroce_queue_next(&qp->req.sq, prod);
		sroce_queue_store_producer(&qp->req.sq, prod);
	}
	spin_unlock_irqrestore(&qp->kpost_lock, flags);
	*bad_wr = wr;
	return err;
}

/* Write receive work requests into a receive ring; its post lock held. */
static int sroce_kpost_recv_ring(struct sroce_queue *q, u32 max_sge,
				 const struct ib_recv_wr *wr,
				 const struct ib_recv_wr **bad_wr)
{
	u32 prod = sroce_queue_load_producer(q);

	for (; wr; wr = wr->next) {
		struct rxe_recv_wqe *uwqe;
		u64 len;

		if (wr->num_sge < 0 || wr->num_sge > max_sge) {
			*bad_wr = wr;
			return -EINVAL;
		}
		if (sroce_queue_next(q, prod) == sroce_queue_load_consumer(q)) {
			*bad_wr = wr;
			return -ENOMEM;
		}
		uwqe = sroce_queue_slot(q, prod);
		uwqe->wr_id = wr->wr_id;
		len = sroce_kpost_copy_sges(&uwqe->dma, wr->sg_list,
					    wr->num_sge);
		uwqe->dma.num_sge = wr->num_sge;
		uwqe->dma.length = min_t(u64, len, SROCE_MAX_MSG_SIZE);
		prod = sroce_queue_next(q, prod);
		sroce_queue_store_producer(q, prod);
	}
	return 0;
}

/**
 * sroce_kpost_recv() - post a kernel consumer's receive work requests
 * @qp: a kernel QP without an SRQ
 * @wr: the chain
 * @bad_wr: set to the first one not posted
 *
 * Context: any.
 * Return: 0, -ENOMEM when the ring is full, or -EINVAL for too many SGEs.
 */
int sroce_kpost_recv(struct sroce_qp *qp, const struct ib_recv_wr *wr,
		     const struct ib_recv_wr **bad_wr)
{
	unsigned long flags;
	int err;

	spin_lock_irqsave(&qp->kpost_lock, flags);
	err = sroce_kpost_recv_ring(&qp->resp.rq, qp->resp.max_sge, wr, bad_wr);
	spin_unlock_irqrestore(&qp->kpost_lock, flags);
	return err;
}

int sroce_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);
	unsigned long flags;
	int err;

	/* A process posts into its mapping of the ring, never here. */
	if (srq->is_user) {
		*bad_wr = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&srq->kpost_lock, flags);
	err = sroce_kpost_recv_ring(&srq->q, srq->max_sge, wr, bad_wr);
	spin_unlock_irqrestore(&srq->kpost_lock, flags);
	return err;
}

/**
 * sroce_kpost_can_run() - whether the poster's context may run the
 * requester or flush queues itself (they take bottom-half locks)
 *
 * Return: false in hard interrupt context or with interrupts disabled;
 * the work is then left to the QP's work item.
 */
bool sroce_kpost_can_run(void)
{
	return !in_hardirq() && !irqs_disabled();
}
