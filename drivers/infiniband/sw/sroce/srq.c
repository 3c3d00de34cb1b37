// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Shared receive queues: one ring of receive WQEs that the responders of
 * several QPs, of any transport type, take from in turn.
 *
 * The process posts into the ring without a system call, exactly as into a
 * QP's receive ring; the kernel copies each WQE out when a message needs
 * it. Resizing replaces the ring: the WQEs posted and not yet taken move to
 * the new one, which the process maps in place of the old.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/uaccess.h>

#include "limits.h"
#include "queue.h"
#include "sroce.h"
#include "srq.h"
#include "wqe.h"

static size_t sroce_srq_elem_size(u32 max_sge)
{
	return SROCE_RECV_WQE_HDR + max_sge * sizeof(struct rxe_sge);
}

static int sroce_srq_check_wr(u32 max_wr)
{
	return max_wr < 1 || max_wr > SROCE_MAX_SRQ_WR ? -EINVAL : 0;
}

int sroce_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibsrq->device);
	struct sroce_srq *srq = to_ssrq(ibsrq);
	struct rxe_create_srq_resp resp = {};
	struct ib_srq_attr *attr = &init->attr;
	int err;

	if (init->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;
	if (sroce_srq_check_wr(attr->max_wr) || attr->max_sge > SROCE_MAX_SGE)
		return -EINVAL;

	spin_lock_init(&srq->lock);
	spin_lock_init(&srq->kpost_lock);
	srq->is_user = !!udata;
	srq->max_sge = max(attr->max_sge, 1U);
	err = sroce_queue_init(&srq->q, udata, attr->max_wr,
			       sroce_srq_elem_size(srq->max_sge), &resp.mi);
	if (err)
		return err;
	if (attr->srq_limit > srq->q.mask) {
		err = -EINVAL;
		goto err_free_queue;
	}
	srq->limit = attr->srq_limit;
	attr->max_wr = srq->q.mask;
	attr->max_sge = srq->max_sge;

	err = ida_alloc_range(&sdev->srq_ida, 1, SROCE_MAX_SRQ, GFP_KERNEL);
	if (err < 0) {
		err = err == -ENOSPC ? -ENOMEM : err;
		goto err_free_queue;
	}
	srq->srq_num = err;
	resp.srq_num = srq->srq_num;

	if (udata) {
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_free_num;
	}
	return 0;

err_free_num:
	ida_free(&sdev->srq_ida, srq->srq_num);
err_free_queue:
	sroce_queue_free(&srq->q);
	return err;
}

/*
 * Move the WQEs posted and not yet taken into a new ring of @max_wr slots
 * and tell the process where to map it: at the mminfo its command points
 * to, not in the response (the user ABI's modify_srq has none).
 */
static int sroce_srq_resize(struct sroce_srq *srq, u32 max_wr,
			    struct ib_udata *udata, u64 mi_addr)
{
	struct sroce_queue nq, old;
	struct mminfo mi = {};
	u32 prod, count, i;
	int err;

	err = sroce_queue_init(&nq, udata, max_wr,
			       sroce_srq_elem_size(srq->max_sge), &mi);
	if (err)
		return err;
	if (copy_to_user(u64_to_user_ptr(mi_addr), &mi, sizeof(mi))) {
		sroce_queue_free(&nq);
		return -EFAULT;
	}

	spin_lock_bh(&srq->lock);
	prod = sroce_queue_load_producer(&srq->q);
	count = sroce_queue_count(&srq->q, prod, srq->tail);
	if (count > nq.mask || srq->limit > nq.mask) {
		spin_unlock_bh(&srq->lock);
		sroce_queue_free(&nq);
		return -EINVAL;
	}
	for (i = 0; i < count; i++)
		memcpy(sroce_queue_slot(&nq, i),
		       sroce_queue_slot(&srq->q, srq->tail + i),
		       sroce_srq_elem_size(srq->max_sge));
	old = srq->q;
	srq->q = nq;
	srq->tail = 0;
	/* The process posts its next WQE after the ones carried over. */
	sroce_queue_store_producer(&srq->q, count);
	sroce_queue_store_consumer(&srq->q, 0);
	spin_unlock_bh(&srq->lock);

	sroce_queue_free(&old);
	return 0;
}

int sroce_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);
	struct rxe_modify_srq_cmd cmd = {};
	int err;

	if (mask & ~(IB_SRQ_MAX_WR | IB_SRQ_LIMIT))
		return -EOPNOTSUPP;
	if (udata && udata->inlen) {
		err = ib_copy_from_udata(&cmd, udata,
					 min(udata->inlen, sizeof(cmd)));
		if (err)
			return err;
	}

	if (mask & IB_SRQ_MAX_WR) {
		u32 limit = mask & IB_SRQ_LIMIT ? attr->srq_limit : srq->limit;

		if (sroce_srq_check_wr(attr->max_wr) || attr->max_wr < limit)
			return -EINVAL;
		if (!udata || !cmd.mmap_info_addr)
			return -EINVAL;
		err = sroce_srq_resize(srq, attr->max_wr, udata,
				       cmd.mmap_info_addr);
		if (err)
			return err;
	}
	if (mask & IB_SRQ_LIMIT) {
		spin_lock_bh(&srq->lock);
		if (attr->srq_limit > srq->q.mask) {
			spin_unlock_bh(&srq->lock);
			return -EINVAL;
		}
		srq->limit = attr->srq_limit;
		spin_unlock_bh(&srq->lock);
	}
	return 0;
}

int sroce_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);

	spin_lock_bh(&srq->lock);
	attr->max_wr = srq->q.mask;
	attr->max_sge = srq->max_sge;
	attr->srq_limit = srq->limit;
	spin_unlock_bh(&srq->lock);
	return 0;
}

int sroce_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);

	/* ib_core holds a use count per QP: none uses the SRQ now. */
	sroce_queue_free(&srq->q);
	ida_free(&to_sdev(ibsrq->device)->srq_ida, srq->srq_num);
	return 0;
}

static void sroce_srq_limit_reached(struct sroce_srq *srq)
{
	struct ib_event ev = {
		.device = srq->ibsrq.device,
		.element.srq = &srq->ibsrq,
		.event = IB_EVENT_SRQ_LIMIT_REACHED,
	};

	if (srq->ibsrq.event_handler)
		srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
}

/**
 * sroce_srq_fetch() - take the next WQE of an SRQ for a QP's responder
 * @srq: the SRQ
 * @rwqe: where to copy the validated WQE
 *
 * Fires the armed limit event, once, when the WQEs left fall below it.
 *
 * Context: softirq or process context, a QP's resp.lock held.
 * Return: 0, -EAGAIN when the SRQ is empty, or -EINVAL for a malformed WQE
 * (taken all the same).
 */
int sroce_srq_fetch(struct sroce_srq *srq, struct sroce_rwqe *rwqe)
{
	bool limit_reached = false;
	u32 prod;
	int err;

	spin_lock_bh(&srq->lock);
	prod = sroce_queue_load_producer(&srq->q);
	if (srq->tail == prod) {
		spin_unlock_bh(&srq->lock);
		return -EAGAIN;
	}
	err = sroce_rwqe_copy(sroce_queue_slot(&srq->q, srq->tail),
			      srq->max_sge, rwqe);
	srq->tail = sroce_queue_next(&srq->q, srq->tail);
	sroce_queue_store_consumer(&srq->q, srq->tail);
	if (srq->limit &&
	    sroce_queue_count(&srq->q, prod, srq->tail) < srq->limit) {
		srq->limit = 0;
		limit_reached = true;
	}
	spin_unlock_bh(&srq->lock);

	if (limit_reached)
		sroce_srq_limit_reached(srq);
	return err;
}
