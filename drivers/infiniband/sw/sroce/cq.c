// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Completion queues: a ring of struct ib_uverbs_wc that the kernel produces
 * and the consumer (a process through its mapping, or a kernel user through
 * poll_cq) consumes.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/if_vlan.h>
#include <linux/ip.h>
#include <rdma/uverbs_ioctl.h>

#include "cq.h"
#include "limits.h"
#include "qp.h"
#include "queue.h"
#include "sroce.h"
#include "stats.h"

/*
 * A slot: what user space reads, then, in a kernel consumer's CQ, the
 * RDMA_NETWORK_* type of a UD receive's GRH image (0 when none) and the
 * VLAN ID the datagram came in on (SROCE_NO_VLAN when none).
 */
struct sroce_cqe {
	struct ib_uverbs_wc	uwc;
	u8			net_type;
	u16			vlan_id;
};

/* Not a VLAN ID: what the RDMA core's GID lookup takes for "no VLAN". */
#define SROCE_NO_VLAN	0xffff

static int sroce_cq_check_size(int cqe)
{
	return cqe < 1 || cqe > SROCE_MAX_CQE ? -EINVAL : 0;
}

int sroce_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    SROCE_CREATE_CQ_UDATA_ARG)
{
	struct ib_udata *udata = sroce_create_cq_udata();
	struct sroce_cq *cq = to_scq(ibcq);
	struct rxe_create_cq_resp resp = {};
	int err;

	if (attr->flags)
		return -EOPNOTSUPP;
	err = sroce_cq_check_size(attr->cqe);
	if (err)
		return err;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;

	spin_lock_init(&cq->lock);
	cq->is_user = !!udata;
	err = sroce_queue_init(&cq->q, udata, attr->cqe, sizeof(struct sroce_cqe),
			       &resp.mi);
	if (err)
		return err;
	cq->ibcq.cqe = cq->q.mask;

	if (udata) {
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err) {
			sroce_queue_free(&cq->q);
			return err;
		}
	}
	return 0;
}

int sroce_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct sroce_cq *cq = to_scq(ibcq);

	/* No QP uses the CQ any more: ib_core holds a usecnt. */
	sroce_queue_free(&cq->q);
	return 0;
}

int sroce_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct sroce_cq *cq = to_scq(ibcq);
	struct rxe_resize_cq_resp resp = {};
	struct sroce_queue nq, old;
	unsigned long flags;
	u32 cons, count, i;
	int err;

	err = sroce_cq_check_size(cqe);
	if (err)
		return err;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;

	err = sroce_queue_init(&nq, udata, cqe, sizeof(struct sroce_cqe), &resp.mi);
	if (err)
		return err;

	spin_lock_irqsave(&cq->lock, flags);
	cons = sroce_queue_load_consumer(&cq->q);
	count = sroce_queue_count(&cq->q, cq->prod, cons);
	if (count > nq.mask) {
		spin_unlock_irqrestore(&cq->lock, flags);
		sroce_queue_free(&nq);
		return -EINVAL;
	}
	for (i = 0; i < count; i++)
		memcpy(sroce_queue_slot(&nq, i),
		       sroce_queue_slot(&cq->q, cons + i),
		       sizeof(struct sroce_cqe));
	old = cq->q;
	cq->q = nq;
	cq->prod = count;
	sroce_queue_store_producer(&cq->q, count);
	cq->ibcq.cqe = cq->q.mask;
	spin_unlock_irqrestore(&cq->lock, flags);

	if (udata) {
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			ibdev_warn_ratelimited(ibcq->device,
					       "resize_cq: response not delivered\n");
	}
	sroce_queue_free(&old);
	return err;
}

int sroce_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct sroce_cq *cq = to_scq(ibcq);
	u8 want = flags & IB_CQ_SOLICITED_MASK;
	unsigned long irqflags;
	int ret = 0;

	spin_lock_irqsave(&cq->lock, irqflags);
	/* A request for any completion supersedes one for solicited ones. */
	if (cq->armed != IB_CQ_NEXT_COMP)
		cq->armed = want;
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) &&
	    cq->prod != sroce_queue_load_consumer(&cq->q))
		ret = 1;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return ret;
}

/*
 * A completion found the ring full. The consumer learns of it once: a
 * process that never reads its async events must not make the kernel
 * queue one per dropped completion.
 */
static void sroce_cq_overflow(struct sroce_cq *cq, const struct ib_uverbs_wc *wc,
			      bool report)
{
	struct ib_event ev = {
		.device = cq->ibcq.device,
		.element.cq = &cq->ibcq,
		.event = IB_EVENT_CQ_ERR,
	};

	sroce_stat_inc(to_sdev(cq->ibcq.device), SROCE_STAT_CQ_OVERFLOW);
	if (!report)
		return;
	ibdev_warn_ratelimited(cq->ibcq.device,
			       "CQ overflow: completion of QP %u dropped; later ones are dropped silently\n",
			       wc->qp_num);
	if (cq->ibcq.event_handler)
		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
}

/**
 * sroce_cq_post() - deliver a completion
 * @cq: the CQ
 * @wc: the completion, in user-space encoding; qp_num identifies the QP
 * @solicited: the completion is for a solicited event
 * @rx: for a UD receive, the datagram: kernel consumers need its IP
 *	version to read the GRH image, and the RDMA core the VLAN it came in
 *	on to find the local GID it was sent to; else NULL
 *
 * A full CQ never loses an unread entry: the new one is dropped and counted,
 * and the first overflow of the CQ is reported as an IB_EVENT_CQ_ERR.
 *
 * Context: any; takes @cq->lock.
 * Return: 0, or -EBUSY when the CQ overflowed.
 */
int sroce_cq_post(struct sroce_cq *cq, const struct ib_uverbs_wc *wc,
		  bool solicited, const struct sk_buff *rx)
{
	struct sroce_cqe *cqe;
	unsigned long flags;
	bool notify = false;
	u32 next;

	spin_lock_irqsave(&cq->lock, flags);
	next = sroce_queue_next(&cq->q, cq->prod);
	if (next == sroce_queue_load_consumer(&cq->q)) {
		bool report = !cq->overrun;

		cq->overrun = true;
		cq->overflows++;
		spin_unlock_irqrestore(&cq->lock, flags);
		sroce_cq_overflow(cq, wc, report);
		return -EBUSY;
	}

	cqe = sroce_queue_slot(&cq->q, cq->prod);
	cqe->uwc = *wc;
	if (!cq->is_user) {
		cqe->net_type = 0;
		cqe->vlan_id = SROCE_NO_VLAN;
		if (rx) {
			if (rx->protocol == htons(ETH_P_IBOE))
				cqe->net_type = RDMA_NETWORK_ROCE_V1;
			else if (ip_hdr(rx)->version == 4)
				cqe->net_type = RDMA_NETWORK_IPV4;
			else
				cqe->net_type = RDMA_NETWORK_IPV6;
			/* sroce_udp_recv() noted the VLAN in the tag. */
			if (skb_vlan_tag_present(rx))
				cqe->vlan_id = skb_vlan_tag_get_id(rx);
		}
	}
	cq->prod = next;
	sroce_queue_store_producer(&cq->q, next);

	if (cq->armed == IB_CQ_NEXT_COMP ||
	    (cq->armed == IB_CQ_SOLICITED && solicited)) {
		cq->armed = 0;
		notify = true;
	}
	spin_unlock_irqrestore(&cq->lock, flags);

	if (notify && cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
	return 0;
}

static void sroce_cqe_to_wc(struct sroce_dev *sdev, const struct sroce_cqe *cqe,
			    struct ib_wc *wc)
{
	const struct ib_uverbs_wc *uwc = &cqe->uwc;
	struct sroce_qp *qp;

	memset(wc, 0, sizeof(*wc));
	wc->wr_id = uwc->wr_id;
	wc->status = uwc->status;
	wc->opcode = uwc->opcode;
	wc->vendor_err = uwc->vendor_err;
	wc->byte_len = uwc->byte_len;
	wc->ex.imm_data = (__force __be32)uwc->ex.imm_data;
	wc->src_qp = uwc->src_qp;
	wc->pkey_index = uwc->pkey_index;
	wc->port_num = uwc->port_num;
	if (uwc->wc_flags & SROCE_UWC_GRH)
		wc->wc_flags |= IB_WC_GRH;
	if (uwc->wc_flags & SROCE_UWC_WITH_IMM)
		wc->wc_flags |= IB_WC_WITH_IMM;
	if (uwc->wc_flags & SROCE_UWC_WITH_INV)
		wc->wc_flags |= IB_WC_WITH_INVALIDATE;
	if (cqe->net_type) {
		wc->network_hdr_type = cqe->net_type;
		wc->wc_flags |= IB_WC_WITH_NETWORK_HDR_TYPE;
	}
	if (cqe->vlan_id != SROCE_NO_VLAN) {
		wc->vlan_id = cqe->vlan_id;
		wc->wc_flags |= IB_WC_WITH_VLAN;
	}
	qp = sroce_qp_lookup(sdev, uwc->qp_num);
	if (qp) {
		wc->qp = &qp->ibqp;
		sroce_qp_put(qp);
	}
}

int sroce_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct sroce_dev *sdev = to_sdev(ibcq->device);
	struct sroce_cq *cq = to_scq(ibcq);
	unsigned long flags;
	u32 cons, prod;
	int n = 0;

	spin_lock_irqsave(&cq->lock, flags);
	cons = sroce_queue_load_consumer(&cq->q);
	prod = cq->prod;
	while (n < num_entries && cons != prod) {
		sroce_cqe_to_wc(sdev, sroce_queue_slot(&cq->q, cons), &wc[n++]);
		cons = sroce_queue_next(&cq->q, cons);
	}
	sroce_queue_store_consumer(&cq->q, cons);
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}
