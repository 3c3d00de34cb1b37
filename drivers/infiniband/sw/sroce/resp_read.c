// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The responder's READ and atomic side: the responder resources that keep
 * each READ, FLUSH and atomic request, the READ response stream (sent from
 * the receive softirq up to a budget, then from the work item), atomic
 * ACKs, and the answers to duplicate requests, replayed from those
 * resources.
 */

#include <linux/udp.h>

#include <sroce/transport.h>

#include "burst.h"
#include "compat.h"
#include "limits.h"
#include "mr.h"
#include "odp.h"
#include "qp.h"
#include "resp.h"
#include "sroce.h"
#include "stats.h"
#include "txflow.h"
#include "xmit.h"

/* READ response packets sent from softirq before deferring to the work. */
#define SROCE_RESP_BUDGET	64

/* Forget a responder resource. */
void sroce_rd_res_clear(struct sroce_rd_res *res)
{
	memset(res, 0, sizeof(*res));
}

static struct sroce_rd_res *sroce_resp_new_res(struct sroce_qp *qp)
{
	struct sroce_rd_res *res = &qp->resp.rd_res[qp->resp.rd_res_head];

	qp->resp.rd_res_head = (qp->resp.rd_res_head + 1) %
			       qp->max_dest_rd_atomic;
	sroce_rd_res_clear(res);
	return res;
}

/*
 * The region a READ reads from is gone or no longer allows it: the READ
 * fails, unless it answers a duplicate, which is simply not answered.
 * Return: true, the responses are over.
 */
static bool sroce_resp_read_lost(struct sroce_qp *qp, struct sroce_rd_res *res)
{
	if (res->replay) {
		res->replay = false;
		sroce_qp_rx_drop(qp, SROCE_STAT_RX_DUP_REFUSED,
				 res->next_psn);
	} else {
		sroce_resp_fatal(qp, res->next_psn, SROCE_NAK_REM_ACCESS);
	}
	return true;
}

/*
 * Build a READ response with its payload attached by page from the
 * responder's region @mr. Return: 0, or a negative errno when the bytes
 * are to be copied instead (see sroce_mr_attach()).
 */
static int sroce_resp_read_attach(struct sroce_qp *qp, struct sroce_pkt *pkt,
				  u8 opcode, struct sroce_mr *mr, u64 mr_iova,
				  u32 payload)
{
	int err;

	if (!mr || !sroce_pkt_zcopy_wanted(qp, payload))
		return -EOPNOTSUPP;
	err = sroce_pkt_alloc_frags(qp, pkt, opcode, payload);
	if (err)
		return err;
	err = sroce_mr_attach(mr, mr_iova, pkt, payload);
	if (err) {
		sroce_pkt_free(pkt);
		return -EOPNOTSUPP;
	}
	return 0;
}

/*
 * Add READ responses to @burst until done or out of budget.
 * Return: true when done.
 */
static bool sroce_resp_read_send(struct sroce_qp *qp,
				 struct sroce_rd_res *res,
				 unsigned int budget,
				 struct sroce_burst *burst)
{
	/* READ responses acknowledge too: the ACK owed goes before them. */
	sroce_resp_ack_flush(qp);
	qp->resp.throttled = false;
	while (budget--) {
		bool first = res->resid == res->length;
		bool last = res->resid <= qp->mtu;
		u32 payload = min(res->resid, qp->mtu);
		struct sroce_mr *mr = NULL;
		struct sroce_pkt pkt;
		u64 mr_iova = 0;
		u8 opcode;
		void *data;
		int err;

		if (sroce_tx_throttled(qp, SROCE_TXW_RESP)) {
			/* Going on when the packets sent so far have left. */
			qp->resp.throttled = true;
			return false;
		}
		opcode = first && last ? SROCE_OP_READ_RESP_ONLY :
			 first ? SROCE_OP_READ_RESP_FIRST :
			 last ? SROCE_OP_READ_RESP_LAST :
				SROCE_OP_READ_RESP_MIDDLE;
		if (payload) {
			/* The region may have gone since the last response. */
			mr = sroce_rkey_get(qp, res->rkey,
					    IB_ACCESS_REMOTE_READ, res->va,
					    payload, &mr_iova);
			if (!mr)
				return sroce_resp_read_lost(qp, res);
		}
		err = sroce_resp_read_attach(qp, &pkt, opcode, mr, mr_iova,
					     payload);
		if (err) {
			data = sroce_pkt_alloc(qp, &pkt, opcode, payload);
			if (!data) {
				if (mr)
					sroce_mr_put(mr);
				sroce_stat_inc(qp->sdev, SROCE_STAT_TX_NOMEM);
				return false;
			}
			err = mr ? sroce_mr_copy_from(mr, mr_iova, data,
						      payload,
						      &pkt.payload_crc,
						      &qp->resp.miss) : 0;
			pkt.payload_crc_set = true;
		}
		if (mr)
			sroce_mr_put(mr);
		if (err) {
			/* The work item goes on once the pages are in. */
			sroce_pkt_free(&pkt);
			if (qp->resp.nofault) {
				sroce_odp_miss_clear(&qp->resp.miss);
				sroce_resp_fatal(qp, res->next_psn,
						 SROCE_NAK_REM_ACCESS);
			}
			return false;
		}
		if (pkt.info->hdrs & BIT(SROCE_HDR_AETH))
			sroce_aeth_pack(sroce_pkt_hdr(&pkt, SROCE_HDR_AETH),
					SROCE_AETH_ACK |
					SROCE_AETH_CREDIT_INVALID,
					qp->resp.msn);
		pkt.bth.psn = res->next_psn;
		if (sroce_pkt_queue(qp, &qp->av, &pkt, qp->dest_qpn,
				    burst) == -ENOBUFS) {
			/* The NIC's queue is full: send it again later. */
			qp->resp.congested = true;
			return false;
		}

		res->va += payload;
		res->resid -= payload;
		res->next_psn = sroce_psn_add(res->next_psn, 1);
		if (last) {
			res->replay = false;
			return true;
		}
	}
	return false;
}

/*
 * Send READ responses until done or out of budget, in bursts. With @batch,
 * those of a READ done within the budget wait in the QP's batch burst for
 * the end of the receive batch, to leave with the responses to the batch's
 * later READs (sroce_resp_batch_burst()). When the local queue dropped a
 * burst of a READ still in progress, everything this call sent goes again
 * after a pause: the requester drops what it has already received. A READ
 * this call finished, or gave up on, stays so: its requester asks again
 * for responses it lacks, as for any lost on the wire.
 *
 * Return: true when done.
 */
static bool sroce_resp_read_continue(struct sroce_qp *qp,
				     struct sroce_rd_res *res,
				     unsigned int budget, bool batch)
{
	struct sroce_burst *burst = batch ? sroce_resp_batch_burst(qp) : NULL;
	struct sroce_rd_res from = *res;
	struct sroce_burst own = {};
	bool done;

	if (!burst) {
		/* Responses decided earlier go first. */
		sroce_resp_tx_pending(qp);
		burst = &own;
	}
	done = sroce_resp_read_send(qp, res, budget, burst);
	if (done && burst != &own)
		return true;
	if (sroce_burst_flush(qp, burst) != -ENOBUFS || done)
		return done;
	*res = from;
	qp->resp.congested = true;
	return false;
}

/*
 * Start sending READ responses, from the receive batch that took the
 * request; the rest goes to the work item.
 */
static void sroce_resp_read_start(struct sroce_qp *qp, struct sroce_rd_res *res)
{
	if (sroce_resp_read_continue(qp, res, SROCE_RESP_BUDGET, true))
		return;
	qp->resp.active_res = res;
	qp->resp.busy = true;
	if (!qp->resp.throttled)
		sroce_resp_schedule(qp);
}

void sroce_resp_read(struct sroce_qp *qp, struct sk_buff *skb,
		     const struct sroce_opcode_info *info, u32 psn)
{
	const struct sroce_reth *reth = sroce_resp_hdr(skb, info,
						       SROCE_HDR_RETH);
	u64 va = be64_to_cpu(reth->va);
	u32 rkey = be32_to_cpu(reth->rkey);
	u32 len = be32_to_cpu(reth->len);
	struct sroce_rd_res *res;
	struct sroce_mr *mr = NULL;

	if (!(qp->access_flags & IB_ACCESS_REMOTE_READ)) {
		sroce_resp_fatal(qp, psn, SROCE_NAK_INVALID_REQ);
		return;
	}
	if (len > SROCE_MAX_MSG_SIZE) {
		sroce_resp_fatal(qp, psn, SROCE_NAK_INVALID_REQ);
		return;
	}
	if (len) {
		mr = sroce_mr_get(qp->sdev, rkey, qp->ibqp.pd,
				  IB_ACCESS_REMOTE_READ, va, len, qp);
		if (!mr) {
			sroce_resp_fatal(qp, psn, SROCE_NAK_REM_ACCESS);
			return;
		}
		sroce_mr_put(mr);
	}

	res = sroce_resp_new_res(qp);
	res->kind = SROCE_RES_READ;
	res->psn = psn;
	res->rkey = rkey;
	res->req_va = va;
	res->req_len = len;
	res->va = va;
	res->resid = len;
	res->length = len;
	res->next_psn = psn;
	res->last_psn = sroce_psn_add(psn,
				      max(1U, DIV_ROUND_UP(len, qp->mtu)) - 1);
	qp->resp.epsn = sroce_psn_add(res->last_psn, 1);
	qp->resp.msn = (qp->resp.msn + 1) & SROCE_MSN_MASK;
	sroce_resp_read_start(qp, res);
}

/*
 * IBTA 1.5 FLUSH, global visibility: what earlier requests placed must be
 * visible to every CPU and device. They were executed in order and their
 * data stored before this request is, so a full barrier does it. The answer
 * is a READ response without data, and a duplicate is simply answered
 * again. Persistent placement is refused: no region is persistent memory.
 */
void sroce_resp_flush(struct sroce_qp *qp, struct sk_buff *skb,
		      const struct sroce_opcode_info *info, u32 psn)
{
	const struct sroce_feth *feth = sroce_resp_hdr(skb, info,
						       SROCE_HDR_FETH);
	const struct sroce_reth *reth = sroce_resp_hdr(skb, info,
						       SROCE_HDR_RETH);
	u32 bits = be32_to_cpu(feth->bits);
	u32 type = bits & SROCE_FETH_PLT_MASK;
	u32 level = (bits & SROCE_FETH_SEL_MASK) >> SROCE_FETH_SEL_SHIFT;
	struct sroce_rd_res *res;
	struct sroce_mr *mr;

	if (!type || (type & ~(SROCE_FLUSH_GLOBAL | SROCE_FLUSH_PERSISTENT)) ||
	    level > SROCE_FLUSH_MR) {
		sroce_resp_fatal(qp, psn, SROCE_NAK_INVALID_REQ);
		return;
	}
	mr = type & SROCE_FLUSH_PERSISTENT ? NULL :
	     sroce_mr_get(qp->sdev, be32_to_cpu(reth->rkey), qp->ibqp.pd,
			  SROCE_ACCESS_FLUSH, be64_to_cpu(reth->va),
			  level == SROCE_FLUSH_MR ? SROCE_LEN_WHOLE :
						    be32_to_cpu(reth->len), qp);
	if (!mr) {
		sroce_resp_fatal(qp, psn, SROCE_NAK_REM_ACCESS);
		return;
	}
	sroce_mr_put(mr);
	/* The stores of earlier requests, before the answer saying so. */
	smp_mb();

	res = sroce_resp_new_res(qp);
	res->kind = SROCE_RES_FLUSH;
	res->psn = psn;
	res->rkey = be32_to_cpu(reth->rkey);
	res->req_va = be64_to_cpu(reth->va);
	res->next_psn = psn;
	res->last_psn = psn;
	qp->resp.epsn = sroce_psn_add(psn, 1);
	qp->resp.msn = (qp->resp.msn + 1) & SROCE_MSN_MASK;
	sroce_resp_read_start(qp, res);
}

/*
 * Answer an atomic request: at the end of the receive batch, with the
 * batch's other responses, where it may wait (sroce_resp_batch_burst()),
 * else at once.
 */
static void sroce_resp_atomic_ack(struct sroce_qp *qp, u32 psn, u64 orig)
{
	struct sroce_burst *burst;
	struct sroce_atmack *ack;
	struct sroce_pkt pkt;

	sroce_resp_ack_flush(qp);
	burst = sroce_resp_batch_burst(qp);
	if (!burst)
		sroce_resp_tx_pending(qp);
	if (!sroce_pkt_alloc(qp, &pkt, SROCE_OP_ATOMIC_ACK, 0)) {
		sroce_stat_inc(qp->sdev, SROCE_STAT_TX_NOMEM);
		return;
	}
	sroce_aeth_pack(sroce_pkt_hdr(&pkt, SROCE_HDR_AETH),
			SROCE_AETH_ACK | SROCE_AETH_CREDIT_INVALID,
			qp->resp.msn);
	ack = sroce_pkt_hdr(&pkt, SROCE_HDR_ATMACK);
	ack->orig = cpu_to_be64(orig);
	pkt.bth.psn = psn;
	if (burst)
		sroce_pkt_queue(qp, &qp->av, &pkt, qp->dest_qpn, burst);
	else
		sroce_pkt_send(qp, &qp->av, &pkt, qp->dest_qpn);
}

/**
 * sroce_resp_atomic_exec() - carry out the atomic operation of a request
 * @qp: the QP; resp.lock held
 * @skb: the request
 * @psn: its PSN
 * @rkey: the key of the target, untrusted
 * @access: IB_ACCESS_* rights the operation needs
 * @va: the target address as the request names it, 8-byte aligned
 * @op: the operation; its orig is set
 *
 * The region's mapping must keep the 8 bytes within a page. The device's
 * atomic lock orders the operation with those of every other QP.
 *
 * Return: true when it is done; false when the request waits for a page
 * fault, or when the responder failed (the NAK is sent).
 */
bool sroce_resp_atomic_exec(struct sroce_qp *qp, struct sk_buff *skb, u32 psn,
			    u32 rkey, int access, u64 va,
			    struct sroce_atomic_op *op)
{
	struct sroce_mr *mr;
	u64 mr_iova;
	int err;

	mr = sroce_rkey_get(qp, rkey, access, va, sizeof(u64), &mr_iova);
	if (!mr) {
		sroce_resp_fatal(qp, psn, SROCE_NAK_REM_ACCESS);
		return false;
	}
	if ((mr_iova - mr->iova + mr->offset) & (sizeof(u64) - 1)) {
		/* The region's mapping would split the target across pages. */
		sroce_mr_put(mr);
		sroce_resp_fatal(qp, psn, SROCE_NAK_INVALID_REQ);
		return false;
	}
	spin_lock(&qp->sdev->atomic_lock);
	err = sroce_mr_atomic(mr, mr_iova, op, &qp->resp.miss);
	spin_unlock(&qp->sdev->atomic_lock);
	sroce_mr_put(mr);
	if (err && !sroce_resp_defer(qp, skb))
		sroce_resp_fatal(qp, psn, SROCE_NAK_REM_ACCESS);
	return !err;
}

void sroce_resp_atomic(struct sroce_qp *qp, struct sk_buff *skb,
		       const struct sroce_bth *bth,
		       const struct sroce_opcode_info *info, u32 psn)
{
	const struct sroce_atmeth *atm = sroce_resp_hdr(skb, info,
							SROCE_HDR_ATMETH);
	u64 va = be64_to_cpu(atm->va);
	struct sroce_rd_res *res;
	struct sroce_atomic_op op = {
		.opcode = bth->opcode,
		.cmp = be64_to_cpu(atm->cmp),
		.val = be64_to_cpu(atm->swap_add),
	};
	u64 orig;

	if (!(qp->access_flags & IB_ACCESS_REMOTE_ATOMIC) ||
	    (va & (sizeof(u64) - 1))) {
		sroce_resp_fatal(qp, psn, SROCE_NAK_INVALID_REQ);
		return;
	}
	if (!sroce_resp_atomic_exec(qp, skb, psn, be32_to_cpu(atm->rkey),
				    IB_ACCESS_REMOTE_ATOMIC, va, &op))
		return;
	orig = op.orig;

	/* Kept so that a duplicate request gets the same answer. */
	res = sroce_resp_new_res(qp);
	res->kind = SROCE_RES_ATOMIC;
	res->psn = psn;
	res->last_psn = psn;
	res->rkey = be32_to_cpu(atm->rkey);
	res->req_va = va;
	res->atomic_orig = orig;

	qp->resp.epsn = sroce_psn_add(psn, 1);
	qp->resp.msn = (qp->resp.msn + 1) & SROCE_MSN_MASK;
	sroce_resp_atomic_ack(qp, psn, orig);
}

/*
 * The saved request a duplicate READ, FLUSH or atomic request repeats: one
 * of the same kind whose PSNs hold the duplicate's, on the same rkey. A
 * READ may ask again for part of its responses only (IBTA 9.7.5.1.1): from
 * the address where the first response asked for starts, and no further
 * than the saved request.
 */
static struct sroce_rd_res *sroce_resp_match(struct sroce_qp *qp,
					     struct sk_buff *skb,
					     const struct sroce_opcode_info *info,
					     u32 psn)
{
	const struct sroce_reth *reth = NULL;
	const struct sroce_atmeth *atm = NULL;
	u8 kind;
	u32 rkey;
	u64 va;
	u32 i;

	if (info->flags & SROCE_OPF_READ) {
		kind = SROCE_RES_READ;
		reth = sroce_resp_hdr(skb, info, SROCE_HDR_RETH);
	} else if (info->flags & SROCE_OPF_FLUSH) {
		kind = SROCE_RES_FLUSH;
		reth = sroce_resp_hdr(skb, info, SROCE_HDR_RETH);
	} else {
		kind = SROCE_RES_ATOMIC;
		atm = sroce_resp_hdr(skb, info, SROCE_HDR_ATMETH);
	}
	rkey = be32_to_cpu(reth ? reth->rkey : atm->rkey);
	va = be64_to_cpu(reth ? reth->va : atm->va);

	for (i = 0; i < qp->max_dest_rd_atomic; i++) {
		struct sroce_rd_res *res = &qp->resp.rd_res[i];
		u64 skip;

		if (res->kind != kind || res->rkey != rkey ||
		    !sroce_psn_in_range(psn, res->psn, res->last_psn))
			continue;
		if (kind != SROCE_RES_READ)
			return res->req_va == va ? res : NULL;
		skip = (u64)sroce_psn_diff(psn, res->psn) * qp->mtu;
		if (va - res->req_va == skip &&
		    be32_to_cpu(reth->len) <= res->req_len - skip)
			return res;
		return NULL;
	}
	return NULL;
}

/* Send again the responses of a READ a duplicate request asks for. */
static void sroce_resp_reread(struct sroce_qp *qp, struct sk_buff *skb,
			      const struct sroce_opcode_info *info, u32 psn,
			      struct sroce_rd_res *res)
{
	const struct sroce_reth *reth = sroce_resp_hdr(skb, info,
						       SROCE_HDR_RETH);
	u64 va = be64_to_cpu(reth->va);
	u32 len = be32_to_cpu(reth->len);
	struct sroce_mr *mr;

	/* The region is checked again; a peer can no longer read it. */
	if (len) {
		mr = sroce_mr_get(qp->sdev, res->rkey, qp->ibqp.pd,
				  IB_ACCESS_REMOTE_READ, va, len, qp);
		if (!mr) {
			sroce_qp_rx_drop(qp, SROCE_STAT_RX_DUP_REFUSED, psn);
			return;
		}
		sroce_mr_put(mr);
	}
	sroce_stat_inc(qp->sdev, SROCE_STAT_RX_DUPLICATE);
	res->va = va;
	res->resid = len;
	res->length = len;
	res->next_psn = psn;
	res->replay = true;
	sroce_resp_read_start(qp, res);
}

/**
 * sroce_resp_duplicate() - answer a request the responder has seen before
 * @qp: the RC QP; resp.lock held
 * @skb: the request
 * @bth: its BTH
 * @info: its opcode
 * @psn: its PSN, behind the expected one
 *
 * Nothing is executed again: a READ, FLUSH or atomic request is answered
 * from the responder resource that saved it, and anything else gets an ACK
 * when it asks for one. A duplicate that matches no saved request, or a
 * READ whose region can no longer be read, is dropped and counted; no
 * duplicate changes the QP's state.
 */
void sroce_resp_duplicate(struct sroce_qp *qp, struct sk_buff *skb,
			  const struct sroce_bth *bth,
			  const struct sroce_opcode_info *info, u32 psn)
{
	struct sroce_rd_res *res;

	if (info->flags & (SROCE_OPF_READ | SROCE_OPF_FLUSH |
			   SROCE_OPF_ATOMIC)) {
		res = sroce_resp_match(qp, skb, info, psn);
		if (!res) {
			sroce_qp_rx_drop(qp, SROCE_STAT_RX_DUP_NO_MATCH, psn);
			return;
		}
		if (res->kind == SROCE_RES_READ) {
			sroce_resp_reread(qp, skb, info, psn, res);
		} else if (res->kind == SROCE_RES_ATOMIC) {
			sroce_stat_inc(qp->sdev, SROCE_STAT_RX_DUPLICATE);
			sroce_resp_atomic_ack(qp, psn, res->atomic_orig);
		} else {
			sroce_stat_inc(qp->sdev, SROCE_STAT_RX_DUPLICATE);
			/*
			 * Flushing again is harmless; it is answered again,
			 * after the stores of earlier requests as before.
			 */
			smp_mb();
			res->resid = 0;
			res->length = 0;
			res->next_psn = psn;
			sroce_resp_read_start(qp, res);
		}
		return;
	}
	sroce_stat_inc(qp->sdev, SROCE_STAT_RX_DUPLICATE);
	if (sroce_bth_ackreq(bth) || (info->flags & (SROCE_OPF_LAST |
						     SROCE_OPF_ONLY)))
		sroce_resp_ack(qp, sroce_psn_add(qp->resp.epsn, -1));
}

/*
 * A READ request for PSNs of the READ being answered, or of an earlier one,
 * means the requester lost responses and went back (IBTA 9.7.5.1.1): the
 * rest of the stream is of no use to it. A request for a later READ (the
 * requester re-sending what followed) waits its turn. Only a request that
 * matches a saved READ counts: anything else cannot stop the stream.
 */
bool sroce_resp_rereads(struct sroce_qp *qp, struct sk_buff *skb,
			const struct sroce_bth *bth,
			const struct sroce_opcode_info *info)
{
	u32 psn = sroce_bth_psn(bth);

	return qp->type == IB_QPT_RC && (info->flags & SROCE_OPF_READ) &&
	       qp->resp.active_res &&
	       sroce_psn_classify(psn, qp->resp.epsn) == SROCE_PSN_DUPLICATE &&
	       sroce_psn_diff(psn, qp->resp.active_res->last_psn) <= 0 &&
	       sroce_resp_match(qp, skb, info, psn);
}

/*
 * Stop the READ responses in progress. The requests held back behind them
 * follow the re-requested PSN, so the requester sends them again.
 */
void sroce_resp_abort_read(struct sroce_qp *qp)
{
	struct sroce_rd_res *res = qp->resp.active_res;

	if (res)
		res->replay = false;
	qp->resp.active_res = NULL;
	qp->resp.busy = false;
	qp->resp.congested = false;
	qp->resp.throttled = false;
	sroce_resp_discard_backlog(qp);
	sroce_stat_inc(qp->sdev, SROCE_STAT_READ_RESTART);
}

/**
 * sroce_resp_read_resume() - send more responses of the READ in progress
 * @qp: the QP; resp.lock held, resp.active_res set
 *
 * Return: true when its last response is sent.
 */
bool sroce_resp_read_resume(struct sroce_qp *qp)
{
	return sroce_resp_read_continue(qp, qp->resp.active_res,
					SROCE_RESP_BUDGET, false);
}
