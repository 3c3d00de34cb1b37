// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The driver's own state of QPs, MRs and CQs in the RDMA core's resource
 * tracking, which "rdma resource show qp|mr|cq -dd" prints. Each object's
 * fields are copied under the lock that guards them, then written into
 * the netlink message with no lock held; nothing here sleeps.
 */

#include <net/netlink.h>
#include <rdma/restrack.h>
#include <uapi/rdma/rdma_netlink.h>

#include "cq.h"
#include "mr.h"
#include "odp.h"
#include "qp.h"
#include "queue.h"
#include "restrack.h"

/* How a driver attribute is sent, and so printed. */
enum sroce_res_kind {
	SROCE_RES_U32,
	SROCE_RES_U64,
	SROCE_RES_HEX,
};

/**
 * struct sroce_res_field - one driver attribute of a resource
 * @name: its name, as "rdma resource" prints it
 * @value: its value
 * @kind: enum sroce_res_kind
 */
struct sroce_res_field {
	const char	*name;
	u64		value;
	u8		kind;
};

/*
 * Write the fields into the driver table of the message. Return: 0, or
 * -EMSGSIZE when the message is full (the RDMA core tries again with the
 * next one).
 */
static int sroce_res_put(struct sk_buff *msg,
			 const struct sroce_res_field *f, unsigned int n)
{
	struct nlattr *table;
	unsigned int i;
	int err = 0;

	table = nla_nest_start_noflag(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	for (i = 0; i < n && !err; i++) {
		switch (f[i].kind) {
		case SROCE_RES_HEX:
			err = rdma_nl_put_driver_u64_hex(msg, f[i].name,
							 f[i].value);
			break;
		case SROCE_RES_U64:
			err = rdma_nl_put_driver_u64(msg, f[i].name,
						     f[i].value);
			break;
		default:
			err = rdma_nl_put_driver_u32(msg, f[i].name,
						     f[i].value);
			break;
		}
	}
	if (err) {
		nla_nest_cancel(msg, table);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, table);
	return 0;
}

enum {
	SROCE_RES_QP_REQ_PSN,
	SROCE_RES_QP_SENT_PSN,
	SROCE_RES_QP_UNA_PSN,
	SROCE_RES_QP_EPSN,
	SROCE_RES_QP_RD_ATOMIC,
	SROCE_RES_QP_RETRIES,
	SROCE_RES_QP_RNR_RETRIES,
	SROCE_RES_QP_RNR_WAIT,
	SROCE_RES_QP_CWND,
	SROCE_RES_QP_CC_RATE,
	SROCE_RES_QP_SQ_USED,
	SROCE_RES_QP_SQ_SIZE,
	SROCE_RES_QP_RQ_USED,
	SROCE_RES_QP_RQ_SIZE,
	SROCE_RES_QP_COUNT,
};

/**
 * sroce_fill_res_qp_entry() - the requester's and responder's state of a QP
 * @msg: the netlink message
 * @ibqp: the QP
 *
 * Context: process; takes the QP's requester and responder locks.
 * Return: 0 or -EMSGSIZE.
 */
int sroce_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp)
{
	struct sroce_res_field f[SROCE_RES_QP_COUNT] = {
		[SROCE_RES_QP_REQ_PSN].name = "req_psn",
		[SROCE_RES_QP_SENT_PSN].name = "req_sent_psn",
		[SROCE_RES_QP_UNA_PSN].name = "req_una_psn",
		[SROCE_RES_QP_EPSN].name = "resp_epsn",
		[SROCE_RES_QP_RD_ATOMIC].name = "rd_atomic_out",
		[SROCE_RES_QP_RETRIES].name = "retries_left",
		[SROCE_RES_QP_RNR_RETRIES].name = "rnr_retries_left",
		[SROCE_RES_QP_RNR_WAIT].name = "rnr_wait",
		[SROCE_RES_QP_CWND].name = "cwnd",
		[SROCE_RES_QP_CC_RATE].name = "cc_rate_kbps",
		[SROCE_RES_QP_SQ_USED].name = "sq_used",
		[SROCE_RES_QP_SQ_SIZE].name = "sq_size",
		[SROCE_RES_QP_RQ_USED].name = "rq_used",
		[SROCE_RES_QP_RQ_SIZE].name = "rq_size",
	};
	struct sroce_qp *qp = to_sqp(ibqp);
	unsigned int n = SROCE_RES_QP_COUNT;
	u32 prod;

	spin_lock_bh(&qp->req.lock);
	f[SROCE_RES_QP_REQ_PSN].value = qp->req.psn;
	f[SROCE_RES_QP_SENT_PSN].value = qp->req.sent_psn;
	f[SROCE_RES_QP_UNA_PSN].value = qp->comp.una_psn;
	f[SROCE_RES_QP_RD_ATOMIC].value = qp->req.rd_atomic_out;
	f[SROCE_RES_QP_RETRIES].value = qp->comp.retries;
	f[SROCE_RES_QP_RNR_RETRIES].value = qp->comp.rnr_retries;
	f[SROCE_RES_QP_RNR_WAIT].value = qp->comp.rnr_wait;
	f[SROCE_RES_QP_CWND].value = qp->req.cwnd;
	/* 0 while the rate limiter is off (no CNP, or recovered). */
	f[SROCE_RES_QP_CC_RATE].value = qp->cc.limited ? qp->cc.rate : 0;
	/* A process may write anything into its producer index: masked. */
	prod = sroce_queue_load_producer(&qp->req.sq);
	f[SROCE_RES_QP_SQ_USED].value = sroce_queue_count(&qp->req.sq, prod,
							  qp->req.tail);
	f[SROCE_RES_QP_SQ_SIZE].value = qp->req.sq.mask;
	spin_unlock_bh(&qp->req.lock);

	spin_lock_bh(&qp->resp.lock);
	f[SROCE_RES_QP_EPSN].value = qp->resp.epsn;
	if (qp->resp.srq) {
		/* The receive WQEs are the SRQ's. */
		n = SROCE_RES_QP_RQ_USED;
	} else {
		prod = sroce_queue_load_producer(&qp->resp.rq);
		f[SROCE_RES_QP_RQ_USED].value =
			sroce_queue_count(&qp->resp.rq, prod, qp->resp.tail);
		f[SROCE_RES_QP_RQ_SIZE].value = qp->resp.rq.mask;
	}
	spin_unlock_bh(&qp->resp.lock);

	return sroce_res_put(msg, f, n);
}

/**
 * sroce_fill_res_mr_entry() - a memory region's rights, size and pages
 * @msg: the netlink message
 * @ibmr: the region
 *
 * A fast-registration region is written by the data path (its WQEs):
 * what is shown is a snapshot of one moment of it.
 *
 * Context: process.
 * Return: 0 or -EMSGSIZE.
 */
int sroce_fill_res_mr_entry(struct sk_buff *msg, struct ib_mr *ibmr)
{
	struct sroce_mr *mr = to_smr(ibmr);
	struct sroce_res_field f[] = {
		{ "access", READ_ONCE(mr->access), SROCE_RES_HEX },
		{ "iova", READ_ONCE(mr->iova), SROCE_RES_HEX },
		{ "length", READ_ONCE(mr->length), SROCE_RES_U64 },
		/* Pinned pages; an on-demand region pins none. */
		{ "npages", mr->odp ? 0 : mr->npages },
		{ "odp", mr->odp },
		/* An implicit region's chunks with pages mapped or mappable. */
		{ "odp_chunks", sroce_odp_chunks(mr) },
		{ "fastreg_bufs", READ_ONCE(mr->nbufs) },
		{ "valid", READ_ONCE(mr->valid) },
		{ "bound_mws", atomic_read(&mr->bound_mws) },
	};

	return sroce_res_put(msg, f, ARRAY_SIZE(f));
}

/**
 * sroce_fill_res_cq_entry() - a completion queue's entries in use
 * @msg: the netlink message
 * @ibcq: the CQ
 *
 * Context: process; takes the CQ's lock.
 * Return: 0 or -EMSGSIZE.
 */
int sroce_fill_res_cq_entry(struct sk_buff *msg, struct ib_cq *ibcq)
{
	struct sroce_cq *cq = to_scq(ibcq);
	struct sroce_res_field f[] = {
		{ "cqe_used" }, { "cqe_size" }, { "armed" },
		{ "overflows", 0, SROCE_RES_U64 },
	};
	unsigned long flags;
	u32 cons;

	spin_lock_irqsave(&cq->lock, flags);
	/* The consumer index is the process's: masked, and maybe stale. */
	cons = sroce_queue_load_consumer(&cq->q);
	f[0].value = sroce_queue_count(&cq->q, cq->prod, cons);
	f[1].value = cq->q.mask;
	f[2].value = cq->armed;
	f[3].value = cq->overflows;
	spin_unlock_irqrestore(&cq->lock, flags);

	return sroce_res_put(msg, f, ARRAY_SIZE(f));
}
