// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Queue pairs: creation, the IBTA state machine, destruction, the send
 * doorbell, and taking receive WQEs from the ring.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hash.h>
#include <linux/vmalloc.h>
#include <rdma/ib_cache.h>

#include "ack.h"
#include "ah.h"
#include "comp.h"
#include "cq.h"
#include "kverbs.h"
#include "limits.h"
#include "odp.h"
#include "qp.h"
#include "queue.h"
#include "req.h"
#include "resp.h"
#include "sroce.h"
#include "srq.h"
#include "stats.h"
#include "trace.h"
#include "txflow.h"
#include "verbs.h"
#include "wqe.h"

/* QP numbers 0 and 1 are the special QPs; data QPs start above. */
#define SROCE_FIRST_QPN		16

/* RoCEv2 UDP source ports come from the dynamic range (IBTA A17.5.1.1). */
#define SROCE_SPORT_BASE	0xc000
#define SROCE_SPORT_MASK	0x3fff

/* The user-visible QP attributes a user may not set. */
#define SROCE_QP_ATTR_UNSUPPORTED (IB_QP_ALT_PATH | IB_QP_PATH_MIG_STATE | \
				   IB_QP_RATE_LIMIT)

/*
 * The QPs' work items: the requester's (sending what a response lets go or
 * what a budget left, retransmission, page faults) and the responder's
 * (READ responses beyond a budget, page faults, the move to the error
 * state). Their packets are what a process polling its completion queue
 * waits for, so they run at high priority: at normal priority the process
 * takes half the CPU from them (Documentation/performance.rst). NVMe over
 * Fabrics and NFS over RDMA run over sroce, so memory reclaim can wait on
 * them: they get a rescuer.
 */
struct workqueue_struct *sroce_qp_wq;

/**
 * sroce_qp_wq_init() - allocate the QPs' workqueue
 *
 * Context: module init.
 * Return: 0 or -ENOMEM.
 */
int sroce_qp_wq_init(void)
{
	sroce_qp_wq = alloc_workqueue("sroce_qp", WQ_UNBOUND | WQ_HIGHPRI |
				      WQ_MEM_RECLAIM, 0);
	return sroce_qp_wq ? 0 : -ENOMEM;
}

/**
 * sroce_qp_wq_exit() - free the QPs' workqueue
 *
 * Context: module exit, every QP destroyed.
 */
void sroce_qp_wq_exit(void)
{
	destroy_workqueue(sroce_qp_wq);
}

/**
 * sroce_qp_lookup() - find a QP by number
 * @sdev: the device
 * @qpn: the number, untrusted
 *
 * Context: any.
 * Return: the QP with a reference held, or NULL.
 */
struct sroce_qp *sroce_qp_lookup(struct sroce_dev *sdev, u32 qpn)
{
	struct sroce_qp *qp;

	rcu_read_lock();
	qp = xa_load(&sdev->qps, qpn);
	if (qp && !sroce_qp_get(qp))
		qp = NULL;
	rcu_read_unlock();
	return qp;
}

static int sroce_qp_check_caps(struct ib_qp_init_attr *init)
{
	struct ib_qp_cap *cap = &init->cap;

	if (cap->max_send_wr > SROCE_MAX_QP_WR ||
	    cap->max_recv_wr > SROCE_MAX_QP_WR ||
	    cap->max_send_sge > SROCE_MAX_SGE ||
	    cap->max_recv_sge > SROCE_MAX_SGE ||
	    cap->max_inline_data > SROCE_MAX_INLINE)
		return -EINVAL;
	return 0;
}

static int sroce_qp_init_sq(struct sroce_qp *qp, struct ib_qp_init_attr *init,
			    struct ib_udata *udata, struct mminfo *mi)
{
	struct ib_qp_cap *cap = &init->cap;
	u32 area = max(cap->max_send_sge * sizeof(struct rxe_sge),
		       cap->max_inline_data);
	int err;

	/* What a WQE slot can hold is what the consumer may use. */
	area = max_t(u32, area, sizeof(struct rxe_sge));
	qp->req.max_sge = min_t(u32, area / sizeof(struct rxe_sge),
				SROCE_MAX_SGE);
	qp->req.max_inline = min_t(u32, area, SROCE_MAX_INLINE);
	cap->max_send_sge = qp->req.max_sge;
	cap->max_inline_data = qp->req.max_inline;

	err = sroce_queue_init(&qp->req.sq, udata, max(cap->max_send_wr, 1U),
			       SROCE_SEND_WQE_HDR + area, mi);
	if (err)
		return err;
	cap->max_send_wr = qp->req.sq.mask;

	qp->req.swqe = vzalloc(array_size(qp->req.sq.mask + 1,
					  sizeof(*qp->req.swqe)));
	if (!qp->req.swqe) {
		sroce_queue_free(&qp->req.sq);
		return -ENOMEM;
	}
	return 0;
}

static int sroce_qp_init_rq(struct sroce_qp *qp, struct ib_qp_init_attr *init,
			    struct ib_udata *udata, struct mminfo *mi)
{
	struct ib_qp_cap *cap = &init->cap;
	int err;

	qp->resp.max_sge = max(cap->max_recv_sge, 1U);
	err = sroce_queue_init(&qp->resp.rq, udata, max(cap->max_recv_wr, 1U),
			       SROCE_RECV_WQE_HDR +
			       qp->resp.max_sge * sizeof(struct rxe_sge), mi);
	if (err)
		return err;
	cap->max_recv_sge = qp->resp.max_sge;
	cap->max_recv_wr = qp->resp.rq.mask;
	return 0;
}

static void sroce_qp_init_state(struct sroce_qp *qp)
{
	refcount_set(&qp->ref, 1);
	init_completion(&qp->released);
	mutex_init(&qp->attr_lock);
	spin_lock_init(&qp->req.lock);
	spin_lock_init(&qp->resp.lock);
	spin_lock_init(&qp->kpost_lock);
	timer_setup(&qp->comp.retrans_timer, sroce_retrans_timer, 0);
	timer_setup(&qp->comp.rnr_timer, sroce_rnr_timer, 0);
	INIT_WORK(&qp->resp.work, sroce_resp_work);
	INIT_WORK(&qp->req.work, sroce_req_work);
	sroce_cc_init(qp);
	sroce_ack_qp_init(qp);
	skb_queue_head_init(&qp->resp.backlog);
	INIT_LIST_HEAD(&qp->tx.wait_entry);
	qp->state = IB_QPS_RESET;
	qp->mtu = 256;
	qp->max_rd_atomic = 1;
	qp->max_dest_rd_atomic = 1;
}

int sroce_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibqp->device);
	struct sroce_qp *qp = to_sqp(ibqp);
	struct rxe_create_qp_resp resp = {};
	u32 qpn;
	int err;

	switch (init->qp_type) {
	case IB_QPT_RC:
	case IB_QPT_UC:
	case IB_QPT_UD:
		break;
	case IB_QPT_GSI:
		/* The MAD layer's QP1; it speaks UD on the wire. */
		if (udata || init->port_num != 1)
			return -EINVAL;
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (init->create_flags)
		return -EOPNOTSUPP;
	if (udata && (udata->inlen || udata->outlen < sizeof(resp)))
		return -EINVAL;
	err = sroce_qp_check_caps(init);
	if (err)
		return err;

	qp->sdev = sdev;
	qp->type = init->qp_type == IB_QPT_GSI ? IB_QPT_UD : init->qp_type;
	qp->is_user = !!udata;
	qp->sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	qp->pd = to_spd(ibqp->pd);
	qp->scq = to_scq(init->send_cq);
	qp->rcq = to_scq(init->recv_cq);
	sroce_qp_init_state(qp);

	err = sroce_tx_qp_init(qp);
	if (err)
		return err;
	qp->resp.rd_res = kcalloc(SROCE_MAX_RD_ATOMIC, sizeof(*qp->resp.rd_res),
				  GFP_KERNEL);
	if (!qp->resp.rd_res) {
		err = -ENOMEM;
		goto err_tx;
	}
	err = dst_cache_init(&qp->dst_cache, GFP_KERNEL);
	if (err)
		goto err_free_res;
	err = sroce_qp_init_sq(qp, init, udata, &resp.sq_mi);
	if (err)
		goto err_dst_cache;
	if (init->srq) {
		/* The receive ring of an SRQ QP stays empty and unmapped. */
		qp->resp.srq = to_ssrq(init->srq);
		init->cap.max_recv_wr = 0;
		init->cap.max_recv_sge = 0;
	} else {
		err = sroce_qp_init_rq(qp, init, udata, &resp.rq_mi);
		if (err)
			goto err_free_sq;
	}

	/*
	 * The QPN is reserved first and the QP published last, once nothing
	 * can fail: a packet must never find a QP that is then freed without
	 * the wait sroce_destroy_qp() does.
	 */
	if (init->qp_type == IB_QPT_GSI) {
		qpn = 1;
		err = xa_insert(&sdev->qps, qpn, NULL, GFP_KERNEL);
	} else {
		err = xa_alloc_cyclic(&sdev->qps, &qpn, NULL,
				      XA_LIMIT(SROCE_FIRST_QPN,
					       SROCE_QPN_MASK - 1),
				      &sdev->qp_next, GFP_KERNEL);
	}
	if (err < 0)
		goto err_free_rq;
	qp->ibqp.qp_num = qpn;
	qp->src_port = SROCE_SPORT_BASE | (hash_32(qpn, 16) & SROCE_SPORT_MASK);

	if (udata) {
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_erase;
	}
	err = xa_err(xa_store(&sdev->qps, qpn, qp, GFP_KERNEL));
	if (err)
		goto err_erase;
	return 0;

err_erase:
	xa_erase(&sdev->qps, qpn);
err_free_rq:
	sroce_queue_free(&qp->resp.rq);
err_free_sq:
	vfree(qp->req.swqe);
	sroce_queue_free(&qp->req.sq);
err_dst_cache:
	dst_cache_destroy(&qp->dst_cache);
err_free_res:
	kfree(qp->resp.rd_res);
err_tx:
	sroce_tx_qp_release(qp);
	return err;
}

/* Resolve a new path before the QP's locks are taken: into @av, if any. */
static int sroce_qp_new_path(struct ib_qp_attr *attr, int mask,
			     struct sroce_av *av)
{
	if ((mask & IB_QP_PATH_MTU) && ib_mtu_enum_to_int(attr->path_mtu) <= 0)
		return -EINVAL;
	if (mask & IB_QP_AV)
		return sroce_av_from_attr(av, &attr->ah_attr);
	return 0;
}

/*
 * Requests go out under req.lock, and ACKs, READ responses and CNPs under
 * resp.lock: with both held no packet is being built on the old path,
 * which SQD may change while the QP still sends. The old address lands in
 * @av, its GID reference for the caller to drop.
 */
static void sroce_qp_apply_path(struct sroce_qp *qp, struct ib_qp_attr *attr,
				int mask, struct sroce_av *av)
{
	if (mask & IB_QP_AV) {
		swap(qp->av, *av);
		dst_cache_reset(&qp->dst_cache);
	}
	if (mask & IB_QP_PATH_MTU)
		qp->mtu = min(ib_mtu_enum_to_int(attr->path_mtu),
			      ib_mtu_enum_to_int(sroce_active_mtu(qp->sdev)));
}

static int sroce_qp_check_attr(struct sroce_qp *qp, struct ib_qp_attr *attr,
			       int mask)
{
	if (mask & SROCE_QP_ATTR_UNSUPPORTED)
		return -EOPNOTSUPP;
	if ((mask & IB_QP_PORT) && attr->port_num != 1)
		return -EINVAL;
	if ((mask & IB_QP_PKEY_INDEX) && attr->pkey_index)
		return -EINVAL;
	if ((mask & IB_QP_MAX_QP_RD_ATOMIC) &&
	    attr->max_rd_atomic > SROCE_MAX_RD_ATOMIC)
		return -EINVAL;
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > SROCE_MAX_RD_ATOMIC)
		return -EINVAL;
	if ((mask & IB_QP_DEST_QPN) && attr->dest_qp_num > SROCE_QPN_MASK)
		return -EINVAL;
	if ((mask & IB_QP_TIMEOUT) && attr->timeout > 31)
		return -EINVAL;
	if ((mask & IB_QP_RETRY_CNT) && attr->retry_cnt > 7)
		return -EINVAL;
	if ((mask & IB_QP_RNR_RETRY) && attr->rnr_retry > 7)
		return -EINVAL;
	if ((mask & IB_QP_MIN_RNR_TIMER) && attr->min_rnr_timer > 31)
		return -EINVAL;
	return 0;
}

static void sroce_qp_apply_attr(struct sroce_qp *qp, struct ib_qp_attr *attr,
				int mask)
{
	if (mask & IB_QP_QKEY)
		qp->qkey = attr->qkey;
	if (mask & IB_QP_ACCESS_FLAGS)
		qp->access_flags = attr->qp_access_flags;
	if (mask & IB_QP_DEST_QPN)
		qp->dest_qpn = attr->dest_qp_num;
	if (mask & IB_QP_TIMEOUT)
		qp->timeout = attr->timeout;
	if (mask & IB_QP_RETRY_CNT)
		qp->retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		qp->rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_MIN_RNR_TIMER)
		qp->min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		qp->max_rd_atomic = max_t(u8, attr->max_rd_atomic, 1);
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		qp->max_dest_rd_atomic = max_t(u8, attr->max_dest_rd_atomic, 1);
	if (mask & IB_QP_RQ_PSN)
		qp->resp.epsn = attr->rq_psn & SROCE_PSN_MASK;
	if (mask & IB_QP_SQ_PSN) {
		qp->req.psn = attr->sq_psn & SROCE_PSN_MASK;
		qp->comp.una_psn = qp->req.psn;
		qp->req.sent_psn = qp->req.psn;
	}
}

/* Release the address and the AH a send WQE holds. */
static void sroce_swqe_release(struct sroce_swqe *wqe)
{
	sroce_av_release(&wqe->av);
	if (wqe->kah)
		sroce_ah_put(wqe->kah);
	wqe->kah = NULL;
}

/* Forget all transport state; librxe zeroes its ring indices on RESET. */
static void sroce_qp_reset(struct sroce_qp *qp)
{
	u32 i;

	for (i = 0; i <= qp->req.sq.mask; i++) {
		sroce_swqe_release(&qp->req.swqe[i]);
		qp->req.swqe[i].state = SROCE_SWQE_NEW;
		qp->req.swqe[i].psn_valid = false;
	}
	qp->req.tail = 0;
	qp->req.next = 0;
	qp->req.seen = 0;
	qp->req.rd_atomic_out = 0;
	qp->comp.rnr_wait = false;
	qp->req.fatal = false;
	qp->comp.read_rewound = false;
	sroce_odp_miss_clear(&qp->req.miss);
	kfree_skb(qp->req.miss_skb);
	qp->req.miss_skb = NULL;
	qp->req.miss_rewind = false;
	qp->req.nofault = false;
	qp->req.pkts_since_ackreq = 0;
	sroce_cc_reset(qp);
	sroce_rto_reset(qp);
	sroce_queue_store_consumer(&qp->req.sq, 0);
	/* A kernel consumer's posts are gone with the rest. */
	if (!qp->is_user)
		sroce_queue_store_producer(&qp->req.sq, 0);
	qp->resp.tail = 0;
	qp->resp.rwqe_valid = false;
	qp->resp.recv_offset = 0;
	qp->resp.msn = 0;
	qp->resp.fatal = false;
	sroce_ack_reset(qp);
	if (!qp->resp.srq) {
		sroce_queue_store_consumer(&qp->resp.rq, 0);
		if (!qp->is_user)
			sroce_queue_store_producer(&qp->resp.rq, 0);
	}
	sroce_resp_release(qp);
}

/* Change the state with both halves of the transport stopped. */
/*
 * A QP of an SRQ that enters the error state takes no more WQEs from it:
 * its consumer learns so from the Last WQE Reached event (IBTA 11.6.3).
 */
static void sroce_qp_srq_last_wqe(struct sroce_qp *qp)
{
	struct ib_event ev = {
		.device = qp->ibqp.device,
		.element.qp = &qp->ibqp,
		.event = IB_EVENT_QP_LAST_WQE_REACHED,
	};

	if (qp->resp.srq && qp->ibqp.event_handler)
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
}

static void sroce_qp_set_state(struct sroce_qp *qp, enum ib_qp_state state)
{
	enum ib_qp_state old;

	spin_lock_bh(&qp->req.lock);
	spin_lock(&qp->resp.lock);
	old = qp->state;
	if (state != IB_QPS_RTS && state != IB_QPS_SQD)
		sroce_ack_release(qp);
	if (state == IB_QPS_RESET)
		sroce_qp_reset(qp);
	WRITE_ONCE(qp->state, state);
	trace_sroce_qp_state(qp, old, state);
	if (state == IB_QPS_RTS) {
		qp->comp.retries = qp->retry_cnt;
		qp->comp.rnr_retries = qp->rnr_retry;
		qp->req.cwnd_max = sroce_window_max(qp->mtu);
		qp->req.cwnd = qp->req.cwnd_max;
		qp->rto.backoff = 0;
	}
	spin_unlock(&qp->resp.lock);
	spin_unlock_bh(&qp->req.lock);

	if (state == IB_QPS_ERR) {
		sroce_qp_flush_sq(qp);
		sroce_qp_flush_rq(qp);
		if (old != IB_QPS_ERR)
			sroce_qp_srq_last_wqe(qp);
	} else if (state == IB_QPS_RTS) {
		/* WQEs posted before RTS go out now (their doorbell failed). */
		spin_lock_bh(&qp->req.lock);
		sroce_req_run(qp);
		spin_unlock_bh(&qp->req.lock);
	}
}

int sroce_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	enum ib_qp_state cur, next;
	struct sroce_av av = {};
	int err;

	if (udata && udata->inlen)
		return -EOPNOTSUPP;

	mutex_lock(&qp->attr_lock);
	cur = (mask & IB_QP_CUR_STATE) ? attr->cur_qp_state : qp->state;
	next = (mask & IB_QP_STATE) ? attr->qp_state : cur;
	err = -EINVAL;
	if (cur != qp->state && !(cur == IB_QPS_SQE && qp->state == IB_QPS_RTS))
		goto out;
	if (!ib_modify_qp_is_ok(cur, next, ibqp->qp_type, mask))
		goto out;
	err = sroce_qp_check_attr(qp, attr, mask);
	if (err)
		goto out;
	err = sroce_qp_new_path(attr, mask, &av);
	if (err)
		goto out;

	spin_lock_bh(&qp->req.lock);
	spin_lock(&qp->resp.lock);
	sroce_qp_apply_path(qp, attr, mask, &av);
	sroce_qp_apply_attr(qp, attr, mask);
	spin_unlock(&qp->resp.lock);
	spin_unlock_bh(&qp->req.lock);
	sroce_av_release(&av);

	if (mask & IB_QP_STATE)
		sroce_qp_set_state(qp, next);
out:
	mutex_unlock(&qp->attr_lock);
	return err;
}

int sroce_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init)
{
	struct sroce_qp *qp = to_sqp(ibqp);

	memset(attr, 0, sizeof(*attr));
	memset(init, 0, sizeof(*init));

	mutex_lock(&qp->attr_lock);
	attr->qp_state = READ_ONCE(qp->state);
	attr->cur_qp_state = attr->qp_state;
	attr->path_mtu = ib_mtu_int_to_enum(qp->mtu);
	attr->qkey = qp->qkey;
	attr->rq_psn = qp->resp.epsn;
	attr->sq_psn = qp->req.psn;
	attr->dest_qp_num = qp->dest_qpn;
	attr->qp_access_flags = qp->access_flags;
	attr->port_num = 1;
	attr->timeout = qp->timeout;
	attr->retry_cnt = qp->retry_cnt;
	attr->rnr_retry = qp->rnr_retry;
	attr->min_rnr_timer = qp->min_rnr_timer;
	attr->max_rd_atomic = qp->max_rd_atomic;
	attr->max_dest_rd_atomic = qp->max_dest_rd_atomic;
	attr->sq_draining = attr->qp_state == IB_QPS_SQD &&
			    sroce_req_draining(qp);
	if (qp->av.sgid_attr) {
		struct rdma_ah_attr *ah = &attr->ah_attr;

		ah->type = RDMA_AH_ATTR_TYPE_ROCE;
		rdma_ah_set_port_num(ah, 1);
		rdma_ah_set_sl(ah, qp->av.sl);
		rdma_ah_set_grh(ah, NULL, qp->av.flow_label,
				qp->av.sgid_attr->index, qp->av.hop_limit,
				qp->av.tclass);
		memcpy(ah->grh.dgid.raw, &qp->av.daddr, sizeof(qp->av.daddr));
	}
	attr->cap.max_send_wr = qp->req.sq.mask;
	attr->cap.max_recv_wr = qp->resp.srq ? 0 : qp->resp.rq.mask;
	attr->cap.max_send_sge = qp->req.max_sge;
	attr->cap.max_recv_sge = qp->resp.max_sge;
	attr->cap.max_inline_data = qp->req.max_inline;
	init->cap = attr->cap;
	init->qp_type = qp->type;
	init->sq_sig_type = qp->sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
	init->send_cq = qp->ibqp.send_cq;
	init->recv_cq = qp->ibqp.recv_cq;
	init->srq = qp->ibqp.srq;
	mutex_unlock(&qp->attr_lock);
	return 0;
}

int sroce_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	struct sroce_dev *sdev = qp->sdev;

	mutex_lock(&qp->attr_lock);
	/* Stop both halves; no completions are wanted any more. */
	spin_lock_bh(&qp->req.lock);
	spin_lock(&qp->resp.lock);
	sroce_ack_release(qp);
	if (qp->state != IB_QPS_RESET)
		trace_sroce_qp_state(qp, qp->state, IB_QPS_RESET);
	WRITE_ONCE(qp->state, IB_QPS_RESET);
	spin_unlock(&qp->resp.lock);
	spin_unlock_bh(&qp->req.lock);
	mutex_unlock(&qp->attr_lock);

	xa_erase(&sdev->qps, qp->ibqp.qp_num);
	/*
	 * A NIC may hold the QP's packets for as long as it likes: the QP
	 * does not wait for them, they stop waking it.
	 */
	sroce_tx_qp_detach(qp);
	sroce_qp_put(qp);
	wait_for_completion(&qp->released);
	/*
	 * ib_core frees the QP when this returns: a lookup that found it
	 * before the erase must be done trying to take a reference, and a
	 * packet's destructor that found it before the detach with it.
	 */
	synchronize_rcu();

	/* Out of the device's line first: it would queue the work again. */
	sroce_tx_unwait(qp);
	/* Timers and work check the state, so they do not re-arm now. */
	del_timer_sync(&qp->comp.retrans_timer);
	del_timer_sync(&qp->comp.rnr_timer);
	sroce_cc_stop(qp);
	sroce_ack_qp_stop(qp);
	cancel_work_sync(&qp->resp.work);
	cancel_work_sync(&qp->req.work);

	spin_lock_bh(&qp->req.lock);
	spin_lock(&qp->resp.lock);
	sroce_qp_reset(qp);
	spin_unlock(&qp->resp.lock);
	spin_unlock_bh(&qp->req.lock);

	sroce_queue_free(&qp->resp.rq);
	sroce_queue_free(&qp->req.sq);
	vfree(qp->req.swqe);
	kfree(qp->resp.rd_res);
	dst_cache_destroy(&qp->dst_cache);
	sroce_av_release(&qp->av);
	sroce_tx_qp_release(qp);
	mutex_destroy(&qp->attr_lock);
	return 0;
}

/**
 * sroce_qp_error() - move a QP to the error state from the data path
 * @qp: the QP
 *
 * Context: any, no QP lock held.
 */
void sroce_qp_error(struct sroce_qp *qp)
{
	struct ib_event ev = {
		.device = qp->ibqp.device,
		.element.qp = &qp->ibqp,
		.event = IB_EVENT_QP_FATAL,
	};
	enum ib_qp_state old;

	spin_lock_bh(&qp->req.lock);
	spin_lock(&qp->resp.lock);
	old = qp->state;
	sroce_ack_release(qp);
	if (old != IB_QPS_RESET && old != IB_QPS_ERR) {
		WRITE_ONCE(qp->state, IB_QPS_ERR);
		trace_sroce_qp_state(qp, old, IB_QPS_ERR);
	}
	spin_unlock(&qp->resp.lock);
	spin_unlock_bh(&qp->req.lock);
	if (old == IB_QPS_RESET || old == IB_QPS_ERR)
		return;

	sroce_qp_flush_sq(qp);
	sroce_qp_flush_rq(qp);
	if (qp->ibqp.event_handler)
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
	sroce_qp_srq_last_wqe(qp);
}

static void sroce_flush_cqe(struct sroce_qp *qp, struct sroce_cq *cq,
			    u64 wr_id)
{
	struct ib_uverbs_wc wc = {
		.wr_id = wr_id,
		.status = IB_WC_WR_FLUSH_ERR,
		.qp_num = qp->ibqp.qp_num,
	};

	sroce_cq_post(cq, &wc, true, NULL);
}

/**
 * sroce_qp_flush_sq() - complete every WQE of an errored QP's send queue
 * @qp: the QP, in the error state
 */
void sroce_qp_flush_sq(struct sroce_qp *qp)
{
	u32 prod;

	spin_lock_bh(&qp->req.lock);
	if (qp->state != IB_QPS_ERR)
		goto out;
	del_timer(&qp->comp.retrans_timer);
	del_timer(&qp->comp.rnr_timer);
	/* Finished WQEs complete with their own status first. */
	sroce_comp_retire(qp);
	prod = sroce_queue_load_producer(&qp->req.sq);
	while (qp->req.tail != prod) {
		struct rxe_send_wqe *uwqe = sroce_queue_slot(&qp->req.sq,
							     qp->req.tail);
		struct sroce_swqe *wqe = &qp->req.swqe[qp->req.tail];

		sroce_swqe_release(wqe);
		sroce_flush_cqe(qp, qp->scq, READ_ONCE(uwqe->wr.wr_id));
		wqe->state = SROCE_SWQE_NEW;
		wqe->psn_valid = false;
		qp->req.tail = sroce_queue_next(&qp->req.sq, qp->req.tail);
	}
	qp->req.next = qp->req.tail;
	qp->req.seen = qp->req.tail;
	qp->req.rd_atomic_out = 0;
	sroce_queue_store_consumer(&qp->req.sq, qp->req.tail);
out:
	spin_unlock_bh(&qp->req.lock);
}

/**
 * sroce_qp_flush_rq() - complete every receive WQE of an errored QP
 * @qp: the QP, in the error state
 */
void sroce_qp_flush_rq(struct sroce_qp *qp)
{
	u32 prod;

	spin_lock_bh(&qp->resp.lock);
	if (qp->state != IB_QPS_ERR)
		goto out;
	if (qp->resp.rwqe_valid) {
		sroce_flush_cqe(qp, qp->rcq, qp->resp.rwqe.wr_id);
		qp->resp.rwqe_valid = false;
	}
	/* WQEs still in an SRQ belong to the QPs that stay. */
	prod = qp->resp.srq ? qp->resp.tail :
			      sroce_queue_load_producer(&qp->resp.rq);
	while (qp->resp.tail != prod) {
		struct rxe_recv_wqe *uwqe = sroce_queue_slot(&qp->resp.rq,
							     qp->resp.tail);

		sroce_flush_cqe(qp, qp->rcq, READ_ONCE(uwqe->wr_id));
		qp->resp.tail = sroce_queue_next(&qp->resp.rq, qp->resp.tail);
		sroce_queue_store_consumer(&qp->resp.rq, qp->resp.tail);
	}
	sroce_resp_release(qp);
out:
	spin_unlock_bh(&qp->resp.lock);
}

/**
 * sroce_rwqe_copy() - copy a receive WQE out of a ring and validate it
 * @uwqe: the WQE in the ring, which the process may still be writing
 * @max_sge: SGEs the ring's slots hold
 * @rwqe: where the validated copy goes
 *
 * Return: 0, or -EINVAL for a malformed WQE (@rwqe then holds its wr_id
 * and no SGE).
 */
int sroce_rwqe_copy(const struct rxe_recv_wqe *uwqe, u32 max_sge,
		    struct sroce_rwqe *rwqe)
{
	u32 i, num_sge;
	u64 length = 0;

	rwqe->wr_id = READ_ONCE(uwqe->wr_id);
	num_sge = READ_ONCE(uwqe->dma.num_sge);
	if (num_sge > max_sge) {
		rwqe->num_sge = 0;
		rwqe->length = 0;
		return -EINVAL;
	}
	memcpy(rwqe->sge, uwqe->dma.sge, num_sge * sizeof(struct ib_sge));
	for (i = 0; i < num_sge; i++)
		length += rwqe->sge[i].length;
	rwqe->num_sge = num_sge;
	rwqe->length = min_t(u64, length, SROCE_MAX_MSG_SIZE);
	return 0;
}

/**
 * sroce_qp_fetch_rwqe() - take the next receive WQE, from the QP's receive
 * queue or its SRQ
 * @qp: the QP; resp.lock held
 * @rwqe: where to copy the validated WQE
 *
 * The WQE is copied out of the ring before it is checked, so the process
 * cannot change it afterwards; the slot is released at once.
 *
 * Return: 0, -EAGAIN when the ring is empty, or -EINVAL for a malformed WQE.
 */
int sroce_qp_fetch_rwqe(struct sroce_qp *qp, struct sroce_rwqe *rwqe)
{
	int err;

	lockdep_assert_held(&qp->resp.lock);
	if (qp->resp.srq)
		return sroce_srq_fetch(qp->resp.srq, rwqe);
	if (qp->resp.tail == sroce_queue_load_producer(&qp->resp.rq))
		return -EAGAIN;

	err = sroce_rwqe_copy(sroce_queue_slot(&qp->resp.rq, qp->resp.tail),
			      qp->resp.max_sge, rwqe);
	qp->resp.tail = sroce_queue_next(&qp->resp.rq, qp->resp.tail);
	sroce_queue_store_consumer(&qp->resp.rq, qp->resp.tail);
	return err;
}

/* Send the WQEs published so far, or flush them in the error state. */
static void sroce_qp_doorbell(struct sroce_qp *qp)
{
	switch (READ_ONCE(qp->state)) {
	case IB_QPS_RTS:
	case IB_QPS_SQD:
	case IB_QPS_SQE:
		if (!sroce_kpost_can_run()) {
			sroce_req_schedule(qp);
			return;
		}
		spin_lock_bh(&qp->req.lock);
		sroce_req_doorbell(qp);
		spin_unlock_bh(&qp->req.lock);
		return;
	case IB_QPS_ERR:
		if (!sroce_kpost_can_run()) {
			sroce_req_schedule(qp);
			return;
		}
		/* Without a receive doorbell, this is where late WQEs flush. */
		sroce_qp_flush_sq(qp);
		sroce_qp_flush_rq(qp);
		return;
	default:
		return;
	}
}

/**
 * sroce_post_send() - post send work requests, or ring the send doorbell
 * @ibqp: the QP
 * @wr: a kernel consumer's work requests; NULL for a process's doorbell,
 *	its WQEs being in the ring already
 * @bad_wr: set to the first work request not posted
 *
 * Context: process context for a doorbell; any for a kernel consumer.
 * Return: 0; -EINVAL before the QP can send (a process's WQEs stay in the
 * ring and go out once it can); or the error of sroce_kpost_send().
 */
int sroce_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	enum ib_qp_state state = READ_ONCE(qp->state);
	int err = 0;

	if (qp->is_user == !!wr) {
		*bad_wr = wr;
		return -EINVAL;
	}
	if (state != IB_QPS_RTS && state != IB_QPS_SQD &&
	    state != IB_QPS_SQE && state != IB_QPS_ERR) {
		*bad_wr = wr;
		return -EINVAL;
	}
	if (wr)
		err = sroce_kpost_send(qp, wr, bad_wr);
	sroce_qp_doorbell(qp);
	return err;
}

/**
 * sroce_post_recv() - post a kernel consumer's receive work requests
 * @ibqp: the QP
 * @wr: the work requests
 * @bad_wr: set to the first one not posted
 *
 * A process posts receives into its mapping of the ring, without a call.
 *
 * Context: any.
 * Return: 0, -EINVAL for a process's QP, one with an SRQ or one in the
 * reset state, or the error of sroce_kpost_recv().
 */
int sroce_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	int err;

	if (qp->is_user || qp->resp.srq ||
	    READ_ONCE(qp->state) == IB_QPS_RESET) {
		*bad_wr = wr;
		return -EINVAL;
	}
	err = sroce_kpost_recv(qp, wr, bad_wr);
	/* In the error state the new WQEs flush at once (ib_drain_rq()). */
	if (READ_ONCE(qp->state) == IB_QPS_ERR)
		sroce_qp_doorbell(qp);
	return err;
}
