// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The completer: ACKs, NAKs, READ responses and atomic ACKs from the
 * responder; retirement of send WQEs in order with their completions; the
 * retransmission (go-back-N) and RNR timers.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>

#include <sroce/transport.h>

#include "ah.h"
#include "comp.h"
#include "cq.h"
#include "finj.h"
#include "mr.h"
#include "odp.h"
#include "qp.h"
#include "queue.h"
#include "req.h"
#include "rx.h"
#include "sroce.h"
#include "stats.h"
#include "trace.h"
#include "wqe.h"
#include "xmit.h"

static bool sroce_is_read_resp_wqe(const struct sroce_swqe *wqe)
{
	return wqe->wr.opcode == IB_UVERBS_WR_RDMA_READ ||
	       wqe->wr.opcode == SROCE_WR_FLUSH;
}

static u32 sroce_wc_opcode(u32 wr_opcode)
{
	switch (wr_opcode) {
	case IB_UVERBS_WR_RDMA_WRITE:
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
		return IB_UVERBS_WC_RDMA_WRITE;
	case IB_UVERBS_WR_RDMA_READ:
		return IB_UVERBS_WC_RDMA_READ;
	case IB_UVERBS_WR_ATOMIC_CMP_AND_SWP:
		return IB_UVERBS_WC_COMP_SWAP;
	case IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD:
		return IB_UVERBS_WC_FETCH_ADD;
	case IB_UVERBS_WR_LOCAL_INV:
		return IB_UVERBS_WC_LOCAL_INV;
	case IB_WR_REG_MR:
		return IB_WC_REG_MR;
	case IB_UVERBS_WR_BIND_MW:
		return IB_UVERBS_WC_BIND_MW;
	case SROCE_WR_ATOMIC_WRITE:
		return SROCE_WC_ATOMIC_WRITE;
	case SROCE_WR_FLUSH:
		return SROCE_WC_FLUSH;
	default:
		return IB_UVERBS_WC_SEND;
	}
}

static void sroce_comp_post(struct sroce_qp *qp, const struct sroce_swqe *wqe)
{
	struct ib_uverbs_wc wc = {
		.wr_id = wqe->wr.wr_id,
		.status = wqe->status,
		.qp_num = qp->ibqp.qp_num,
	};

	if (wqe->status == IB_WC_SUCCESS) {
		wc.opcode = sroce_wc_opcode(wqe->wr.opcode);
		wc.byte_len = wqe->length;
		if (wqe->wr.opcode == IB_UVERBS_WR_RDMA_WRITE_WITH_IMM ||
		    wqe->wr.opcode == IB_UVERBS_WR_SEND_WITH_IMM)
			wc.wc_flags = SROCE_UWC_WITH_IMM;
	}
	sroce_cq_post(qp->scq, &wc, false, NULL);
}

/**
 * sroce_comp_retire() - retire finished WQEs in order
 * @qp: the QP; req.lock held
 *
 * Each finished WQE frees its ring slot and, when signaled or failed,
 * completes. A failure stops the send queue; the QP then moves to the
 * error state from the requester's work item.
 */
void sroce_comp_retire(struct sroce_qp *qp)
{
	lockdep_assert_held(&qp->req.lock);

	while (qp->req.tail != qp->req.next) {
		struct sroce_swqe *wqe = &qp->req.swqe[qp->req.tail];
		bool failed = wqe->status != IB_WC_SUCCESS;

		if (wqe->state != SROCE_SWQE_DONE)
			break;
		/* The slot is free before the consumer sees the completion. */
		qp->req.tail = sroce_queue_next(&qp->req.sq, qp->req.tail);
		sroce_queue_store_consumer(&qp->req.sq, qp->req.tail);
		sroce_av_release(&wqe->av);
		if (failed || qp->sig_all ||
		    (wqe->wr.send_flags & IB_SEND_SIGNALED))
			sroce_comp_post(qp, wqe);
		wqe->state = SROCE_SWQE_NEW;
		wqe->psn_valid = false;
		if (failed && !sroce_finj_retired(wqe)) {
			qp->req.fatal = true;
			sroce_req_schedule(qp);
			break;
		}
	}
}

static bool sroce_comp_outstanding(struct sroce_qp *qp)
{
	return qp->comp.una_psn != qp->req.psn;
}

/**
 * sroce_comp_arm_retrans() - keep the retransmission timer running while
 * requests are unacknowledged
 * @qp: an RC QP; req.lock held
 */
void sroce_comp_arm_retrans(struct sroce_qp *qp)
{
	if (!qp->timeout || !sroce_comp_outstanding(qp)) {
		del_timer(&qp->comp.retrans_timer);
		return;
	}
	if (!timer_pending(&qp->comp.retrans_timer))
		mod_timer(&qp->comp.retrans_timer,
			  jiffies + sroce_rto_interval(qp));
}

static void sroce_comp_progress(struct sroce_qp *qp, u32 psn)
{
	u32 next = sroce_psn_add(psn, 1);
	s32 acked = sroce_psn_diff(next, qp->comp.una_psn);

	if (acked > 0) {
		qp->comp.una_psn = next;
		sroce_rto_acked(qp, next);
		qp->comp.read_rewound = false;
		qp->req.cwnd = min_t(u32, qp->req.cwnd + acked,
				     qp->req.cwnd_max);
		qp->comp.retries = qp->retry_cnt;
		if (qp->timeout && sroce_comp_outstanding(qp))
			mod_timer(&qp->comp.retrans_timer,
				  jiffies + sroce_rto_interval(qp));
	}
}

/*
 * The WQE whose PSN range holds @psn, among those that have been given
 * PSNs and are not finished; *@found says if there is one. When not, the
 * index returned is that of the first WQE without PSNs.
 */
static u32 sroce_comp_find(struct sroce_qp *qp, u32 psn, bool *found)
{
	u32 n = sroce_queue_count(&qp->req.sq, qp->req.seen, qp->req.tail);
	u32 idx;

	*found = false;
	for (idx = qp->req.tail; n--;
	     idx = sroce_queue_next(&qp->req.sq, idx)) {
		struct sroce_swqe *wqe = &qp->req.swqe[idx];

		if (wqe->state == SROCE_SWQE_DONE)
			continue;
		if (!wqe->psn_valid)
			break;
		if (sroce_psn_in_range(psn, wqe->first_psn, wqe->last_psn)) {
			*found = true;
			return idx;
		}
	}
	return idx;
}

/*
 * Move the requester to @psn: back after a loss (go-back-N), or forward
 * when an acknowledgment shows that requests sent before a go-back did
 * arrive. WQEs before the new position count as sent, those after it as
 * not yet sent.
 */
static void sroce_comp_seek(struct sroce_qp *qp, u32 psn)
{
	u32 idx, i, n;
	bool found;

	idx = sroce_comp_find(qp, psn, &found);
	if (!found && psn != qp->req.sent_psn)
		return;

	qp->req.rd_atomic_out = 0;
	for (i = qp->req.tail; i != idx; i = sroce_queue_next(&qp->req.sq, i)) {
		struct sroce_swqe *wqe = &qp->req.swqe[i];

		if (wqe->state == SROCE_SWQE_DONE)
			continue;
		wqe->state = SROCE_SWQE_PENDING;
		if (sroce_swqe_is_rd_atomic(wqe))
			qp->req.rd_atomic_out++;
	}
	n = sroce_queue_count(&qp->req.sq, qp->req.seen, idx);
	for (i = idx; n--; i = sroce_queue_next(&qp->req.sq, i))
		if (qp->req.swqe[i].state != SROCE_SWQE_DONE)
			qp->req.swqe[i].state = SROCE_SWQE_NEW;

	if (found) {
		struct sroce_swqe *wqe = &qp->req.swqe[idx];

		wqe->state = SROCE_SWQE_SENDING;
		if (!sroce_swqe_is_rd_atomic(wqe))
			wqe->sent = sroce_psn_diff(psn, wqe->first_psn) *
				    qp->mtu;
		else if (wqe->wr.opcode != IB_UVERBS_WR_RDMA_READ)
			wqe->sent = 0;
	}
	qp->req.next = idx;
	qp->req.psn = psn;
	qp->req.pkts_since_ackreq = 0;
	sroce_rto_rewound(qp);
	sroce_stat_inc(qp->sdev, SROCE_STAT_COMPLETER_RETRY);
}

static void sroce_comp_rewind(struct sroce_qp *qp, u32 psn)
{
	sroce_comp_seek(qp, psn);
}

/* PSN of the first READ response not yet received. */
static u32 sroce_comp_read_next(struct sroce_qp *qp, struct sroce_swqe *wqe)
{
	return sroce_psn_add(wqe->first_psn, wqe->sent / qp->mtu);
}

/*
 * Acknowledge every request up to @psn. A READ or atomic among them whose
 * response has not come was lost: go back and ask again.
 *
 * Return: false when a rewind happened.
 */
static bool sroce_comp_ack(struct sroce_qp *qp, u32 psn)
{
	u32 idx;

	for (idx = qp->req.tail; idx != qp->req.next;
	     idx = sroce_queue_next(&qp->req.sq, idx)) {
		struct sroce_swqe *wqe = &qp->req.swqe[idx];

		if (wqe->state == SROCE_SWQE_DONE)
			continue;
		if (sroce_psn_diff(wqe->last_psn, psn) > 0)
			break;
		if (sroce_swqe_is_rd_atomic(wqe)) {
			/*
			 * Responses sent before the responder saw our
			 * re-request keep coming: ask once, until progress.
			 */
			if (!qp->comp.read_rewound) {
				qp->comp.read_rewound = true;
				sroce_comp_rewind(qp, sroce_comp_read_next(qp, wqe));
			}
			return false;
		}
		wqe->state = SROCE_SWQE_DONE;
	}
	sroce_comp_progress(qp, psn);
	return true;
}

static void sroce_comp_fail(struct sroce_qp *qp, u32 psn,
			    enum ib_wc_status status)
{
	bool found;
	u32 idx = sroce_comp_find(qp, psn, &found);

	if (!found)
		return;
	qp->req.swqe[idx].status = status;
	qp->req.swqe[idx].state = SROCE_SWQE_DONE;
	if (idx == qp->req.next)
		qp->req.next = sroce_queue_next(&qp->req.sq, idx);
}

/*
 * A response found pages of an on-demand region unmapped: it is kept, and
 * handled again as soon as req.work has faulted them in (so that pages
 * taken away again and again cannot starve it); the responses that follow
 * it are dropped meanwhile instead of each asking again, and are asked for
 * again afterwards.
 */
static void sroce_comp_miss(struct sroce_qp *qp, struct sk_buff *skb, u32 psn,
			    bool recorded)
{
	if (recorded) {
		qp->req.miss_psn = psn;
		qp->req.miss_skb = skb_get(skb);
	}
	qp->req.miss_rewind = true;
	qp->comp.read_rewound = true;
	sroce_req_schedule(qp);
}

/**
 * sroce_comp_resend() - ask again for everything not yet acknowledged
 * @qp: an RC QP; req.lock held
 */
void sroce_comp_resend(struct sroce_qp *qp)
{
	if (!sroce_comp_outstanding(qp))
		return;
	qp->comp.read_rewound = false;
	sroce_comp_rewind(qp, qp->comp.una_psn);
}

/**
 * sroce_comp_fault_failed() - fail the WQE whose response needed pages
 * that could not be faulted in
 * @qp: an RC QP; req.lock held
 * @psn: the response's PSN
 */
void sroce_comp_fault_failed(struct sroce_qp *qp, u32 psn)
{
	sroce_comp_fail(qp, psn, IB_WC_LOC_PROT_ERR);
	sroce_comp_retire(qp);
}

static void sroce_comp_rd_atomic_done(struct sroce_qp *qp,
				      struct sroce_swqe *wqe)
{
	wqe->state = SROCE_SWQE_DONE;
	if (!WARN_ON_ONCE(!qp->req.rd_atomic_out))
		qp->req.rd_atomic_out--;
}

/* The READ WQE a response at @psn belongs to, or NULL for a stale one. */
static struct sroce_swqe *sroce_comp_read_wqe(struct sroce_qp *qp, u32 psn,
					      u32 *idx)
{
	struct sroce_swqe *wqe;
	bool found;

	*idx = sroce_comp_find(qp, psn, &found);
	wqe = &qp->req.swqe[*idx];
	if (!found || !sroce_is_read_resp_wqe(wqe)) {
		sroce_qp_rx_drop(qp, SROCE_STAT_RX_STALE_RESPONSE, psn);
		return NULL;
	}
	return wqe;
}

/*
 * A response acknowledges the requests before its READ, not the READ's own
 * earlier responses: those may be the ones lost. Return: false when the
 * acknowledgment ended processing.
 */
static bool sroce_comp_read_ack_before(struct sroce_qp *qp,
				       const struct sroce_swqe *wqe)
{
	return sroce_psn_diff(wqe->first_psn, qp->comp.una_psn) <= 0 ||
	       sroce_comp_ack(qp, sroce_psn_add(wqe->first_psn, -1));
}

/*
 * Whether the response at @psn is the next the READ expects; when one was
 * lost, ask for the rest again, once until progress.
 */
static bool sroce_comp_read_in_order(struct sroce_qp *qp,
				     struct sroce_swqe *wqe, u32 psn)
{
	u32 expect = sroce_comp_read_next(qp, wqe);

	if (psn != expect) {
		if (sroce_psn_diff(psn, expect) > 0 && !qp->comp.read_rewound) {
			/* A response was lost: ask for the rest again. */
			qp->comp.read_rewound = true;
			sroce_comp_rewind(qp, expect);
		}
		sroce_qp_rx_drop(qp, SROCE_STAT_RX_STALE_RESPONSE, psn);
		return false;
	}
	qp->comp.read_rewound = false;
	return true;
}

/* Whether a response carries as many bytes as its place in the READ says. */
static bool sroce_comp_read_len_ok(struct sroce_qp *qp,
				   const struct sroce_opcode_info *info,
				   const struct sroce_swqe *wqe, u32 payload)
{
	u32 left = wqe->length - wqe->sent;

	return payload == min(left, qp->mtu) &&
	       !(payload < left && (info->flags & (SROCE_OPF_LAST |
						   SROCE_OPF_ONLY)));
}

/*
 * Scatter a response's payload into the READ's buffers. Return: false when
 * it was not placed, because pages are missing (the response is then kept
 * or dropped, see sroce_comp_miss()) or the WQE failed.
 */
static bool sroce_comp_read_place(struct sroce_qp *qp, struct sk_buff *skb,
				  const struct sroce_opcode_info *info,
				  struct sroce_swqe *wqe, u32 psn, u32 payload)
{
	int off = sizeof(struct udphdr) + info->hdr_len;
	bool recorded = !qp->req.miss.mr;
	u32 run, *crc;
	int err;

	crc = sroce_rx_icrc_begin(skb, &run);
	err = sroce_sge_scatter_skb(qp->sdev, qp->ibqp.pd, wqe->sge,
				    wqe->num_sge, wqe->sent, skb, off, payload,
				    crc, &qp->req.miss);
	if (!sroce_rx_icrc_end(qp->sdev, skb, err ? NULL : crc)) {
		/* A bad response leaves no fault behind it either. */
		if (err == -EAGAIN && recorded)
			sroce_odp_miss_clear(&qp->req.miss);
		return false;
	}
	if (err == -EAGAIN) {
		sroce_comp_miss(qp, skb, psn, recorded);
		return false;
	}
	if (err) {
		sroce_comp_fail(qp, psn, IB_WC_LOC_PROT_ERR);
		return false;
	}
	return true;
}

/* Account for a placed response; the last one completes the READ. */
static void sroce_comp_read_placed(struct sroce_qp *qp, struct sroce_swqe *wqe,
				   u32 idx, u32 psn, u32 payload)
{
	wqe->sent += payload;
	sroce_comp_progress(qp, psn);
	if (wqe->sent != wqe->length)
		return;
	if (wqe->state == SROCE_SWQE_SENDING) {
		/*
		 * Complete before its re-request went out: the requester goes
		 * on after the READ's PSNs, not from the response's, where a
		 * go-back left it.
		 */
		wqe->state = SROCE_SWQE_PENDING;
		qp->req.rd_atomic_out++;
		if (qp->req.next == idx)
			qp->req.next = sroce_queue_next(&qp->req.sq, idx);
		if (sroce_psn_diff(qp->req.psn, wqe->last_psn) <= 0)
			qp->req.psn = sroce_psn_add(wqe->last_psn, 1);
	}
	sroce_comp_rd_atomic_done(qp, wqe);
}

/*
 * Whether a READ response goes straight to the placement of its payload:
 * the next middle or last response of the oldest unacknowledged READ, of
 * the length expected. Only such a response may be placed before its
 * ICRC is checked (net.c), the copy computing it; this must imply every
 * check sroce_comp_recv() and sroce_comp_read_resp() make before they
 * place, since each of those acts on the packet.
 */
static bool sroce_comp_read_continues(struct sroce_qp *qp,
				      const struct sroce_opcode_info *info,
				      u32 psn, u32 payload)
{
	struct sroce_swqe *wqe;
	bool found;
	u32 idx;

	if (!(info->flags & SROCE_OPF_READ_RESP) ||
	    !(info->flags & (SROCE_OPF_MIDDLE | SROCE_OPF_LAST)) ||
	    !sroce_qp_req_active(qp) ||
	    !sroce_psn_outstanding(psn, qp->comp.una_psn, qp->req.sent_psn) ||
	    sroce_psn_diff(psn, qp->req.psn) >= 0)
		return false;
	idx = sroce_comp_find(qp, psn, &found);
	wqe = &qp->req.swqe[idx];
	return found && sroce_is_read_resp_wqe(wqe) &&
	       sroce_psn_diff(wqe->first_psn, qp->comp.una_psn) <= 0 &&
	       psn == sroce_comp_read_next(qp, wqe) &&
	       sroce_comp_read_len_ok(qp, info, wqe, payload);
}

static void sroce_comp_read_resp(struct sroce_qp *qp, struct sk_buff *skb,
				 const struct sroce_opcode_info *info, u32 psn,
				 u32 payload)
{
	struct sroce_swqe *wqe;
	u32 idx;

	wqe = sroce_comp_read_wqe(qp, psn, &idx);
	if (!wqe || !sroce_comp_read_ack_before(qp, wqe) ||
	    !sroce_comp_read_in_order(qp, wqe, psn))
		return;
	if (!sroce_comp_read_len_ok(qp, info, wqe, payload)) {
		sroce_comp_fail(qp, psn, IB_WC_BAD_RESP_ERR);
		return;
	}
	if (sroce_comp_read_place(qp, skb, info, wqe, psn, payload))
		sroce_comp_read_placed(qp, wqe, idx, psn, payload);
}

static void sroce_comp_atomic_ack(struct sroce_qp *qp, struct sk_buff *skb,
				  const struct sroce_opcode_info *info, u32 psn)
{
	const struct sroce_atmack *ack;
	struct sroce_swqe *wqe;
	bool found, recorded;
	u64 orig;
	u32 idx;
	int err;

	if (psn != qp->comp.una_psn &&
	    !sroce_comp_ack(qp, sroce_psn_add(psn, -1)))
		return;
	idx = sroce_comp_find(qp, psn, &found);
	wqe = &qp->req.swqe[idx];
	if (!found || wqe->state != SROCE_SWQE_PENDING ||
	    !sroce_swqe_is_rd_atomic(wqe) || sroce_is_read_resp_wqe(wqe)) {
		sroce_qp_rx_drop(qp, SROCE_STAT_RX_STALE_RESPONSE, psn);
		return;
	}
	ack = (void *)skb->data + sizeof(struct udphdr) +
	      info->offset[SROCE_HDR_ATMACK];
	orig = be64_to_cpu(ack->orig);
	wqe->atomic_orig = orig;
	recorded = !qp->req.miss.mr;
	err = sroce_sge_scatter(qp->sdev, qp->ibqp.pd, wqe->sge, wqe->num_sge,
				0, &orig, sizeof(orig), &qp->req.miss);
	if (err == -EAGAIN) {
		sroce_comp_miss(qp, skb, psn, recorded);
		return;
	}
	if (err) {
		sroce_comp_fail(qp, psn, IB_WC_LOC_PROT_ERR);
		return;
	}
	sroce_comp_progress(qp, psn);
	sroce_comp_rd_atomic_done(qp, wqe);
}

static void sroce_comp_rnr(struct sroce_qp *qp, u32 psn, u8 code)
{
	sroce_stat_inc(qp->sdev, SROCE_STAT_RNR_NAK_RCVD);
	if (psn != qp->comp.una_psn &&
	    !sroce_comp_ack(qp, sroce_psn_add(psn, -1)))
		return;
	if (!qp->comp.rnr_retries) {
		sroce_stat_inc(qp->sdev, SROCE_STAT_RNR_RETRY_EXCEEDED);
		sroce_comp_fail(qp, psn, IB_WC_RNR_RETRY_EXC_ERR);
		return;
	}
	/* An RNR retry count of 7 means "retry forever". */
	if (qp->rnr_retry != 7)
		qp->comp.rnr_retries--;
	trace_sroce_rnr_wait(qp, psn, code, sroce_rnr_timer_us(code),
			     qp->comp.rnr_retries);
	trace_sroce_retransmit(qp, psn, SROCE_RETRANS_RNR);
	sroce_comp_rewind(qp, psn);
	qp->comp.rnr_wait = true;
	del_timer(&qp->comp.retrans_timer);
	mod_timer(&qp->comp.rnr_timer,
		  jiffies + usecs_to_jiffies(sroce_rnr_timer_us(code)) + 1);
}

static void sroce_comp_nak(struct sroce_qp *qp, u32 psn, u8 code)
{
	enum ib_wc_status status;

	if (code == SROCE_NAK_PSN_SEQ_ERR) {
		sroce_stat_inc(qp->sdev, SROCE_STAT_SEQ_NAK_RCVD);
		qp->req.cwnd = max_t(u32, qp->req.cwnd / 2, SROCE_WINDOW_MIN);
		if (psn == qp->comp.una_psn ||
		    sroce_comp_ack(qp, sroce_psn_add(psn, -1))) {
			trace_sroce_retransmit(qp, psn, SROCE_RETRANS_NAK);
			sroce_comp_rewind(qp, psn);
		}
		return;
	}

	sroce_stat_inc(qp->sdev, SROCE_STAT_ERR_NAK_RCVD);
	switch (code) {
	case SROCE_NAK_REM_ACCESS:
		status = IB_WC_REM_ACCESS_ERR;
		break;
	case SROCE_NAK_REM_OP_ERR:
		status = IB_WC_REM_OP_ERR;
		break;
	case SROCE_NAK_INV_RD_REQ:
		status = IB_WC_REM_INV_RD_REQ_ERR;
		break;
	default:
		status = IB_WC_REM_INV_REQ_ERR;
		break;
	}
	if (psn == qp->comp.una_psn ||
	    sroce_comp_ack(qp, sroce_psn_add(psn, -1)))
		sroce_comp_fail(qp, psn, status);
}

static void sroce_comp_aeth(struct sroce_qp *qp, u32 psn, u8 syndrome)
{
	switch (syndrome & SROCE_AETH_KIND_MASK) {
	case SROCE_AETH_ACK:
		sroce_comp_ack(qp, psn);
		break;
	case SROCE_AETH_RNR_NAK:
		trace_sroce_nak_recv(qp, psn, syndrome);
		sroce_comp_rnr(qp, psn, syndrome & SROCE_AETH_VALUE_MASK);
		break;
	case SROCE_AETH_NAK:
		trace_sroce_nak_recv(qp, psn, syndrome);
		sroce_comp_nak(qp, psn, syndrome & SROCE_AETH_VALUE_MASK);
		break;
	default:
		/* Reserved syndromes are ignored (IBTA C9-141). */
		sroce_qp_rx_drop(qp, SROCE_STAT_RX_BAD_HEADER, psn);
		break;
	}
}

/**
 * sroce_comp_recv() - handle a response packet for one of our requests
 * @qp: the QP, RC
 * @skb: the packet; data starts at the UDP header
 * @bth: its BTH
 * @info: its opcode
 * @payload: payload bytes
 *
 * Context: softirq.
 */
void sroce_comp_recv(struct sroce_qp *qp, struct sk_buff *skb,
		     const struct sroce_bth *bth,
		     const struct sroce_opcode_info *info, u32 payload)
{
	u32 psn = sroce_bth_psn(bth);

	/* A response the fault injector may hold back is checked first. */
	if (sroce_finj_armed(qp->sdev) &&
	    !sroce_rx_icrc_end(qp->sdev, skb, NULL))
		return;
	if (sroce_finj_comp_stall(qp, skb))
		return;
	spin_lock(&qp->req.lock);
	if (!sroce_comp_read_continues(qp, info, psn, payload) &&
	    !sroce_rx_icrc_end(qp->sdev, skb, NULL))
		goto out;
	if (!sroce_qp_req_active(qp)) {
		sroce_qp_rx_drop(qp, SROCE_STAT_RX_BAD_QP_STATE, psn);
		goto out;
	}
	/* Only PSNs of requests sent and not yet acknowledged count. */
	if (!sroce_psn_outstanding(psn, qp->comp.una_psn, qp->req.sent_psn)) {
		sroce_qp_rx_drop(qp, SROCE_STAT_RX_STALE_RESPONSE, psn);
		goto out;
	}
	/* Requests sent before a go-back arrived after all: skip them. */
	if (sroce_psn_diff(psn, qp->req.psn) >= 0)
		sroce_comp_seek(qp, (info->flags & SROCE_OPF_READ_RESP) ? psn :
				    sroce_psn_add(psn, 1));

	if (info->flags & SROCE_OPF_READ_RESP) {
		sroce_comp_read_resp(qp, skb, info, psn, payload);
	} else if (bth->opcode == SROCE_OP_ATOMIC_ACK) {
		sroce_comp_atomic_ack(qp, skb, info, psn);
	} else {
		const struct sroce_aeth *aeth = (void *)skb->data +
			sizeof(struct udphdr) + info->offset[SROCE_HDR_AETH];

		sroce_comp_aeth(qp, psn, sroce_aeth_syndrome(aeth));
	}

	sroce_comp_retire(qp);
	sroce_comp_arm_retrans(qp);
	sroce_req_kick(qp);
out:
	spin_unlock(&qp->req.lock);
}

/**
 * sroce_comp_replay() - handle again a response kept for a page fault
 * @qp: the QP; no lock held
 * @skb: the response
 *
 * It goes through every check again: what happened meanwhile may have
 * made it stale.
 */
void sroce_comp_replay(struct sroce_qp *qp, struct sk_buff *skb)
{
	const struct sroce_bth *bth = (void *)skb->data + sizeof(struct udphdr);
	const struct sroce_opcode_info *info = sroce_opcode_get(bth->opcode);

	local_bh_disable();
	sroce_comp_recv(qp, skb, bth, info, sroce_skb_payload(skb, bth, info));
	local_bh_enable();
}

void sroce_retrans_timer(struct timer_list *t)
{
	struct sroce_qp *qp = from_timer(qp, t, comp.retrans_timer);

	spin_lock_bh(&qp->req.lock);
	if (!sroce_qp_req_active(qp) || !sroce_comp_outstanding(qp) ||
	    qp->comp.rnr_wait)
		goto out;
	if (sroce_rto_defer(qp)) {
		sroce_stat_inc(qp->sdev, SROCE_STAT_RETRANS_DEFERRED);
		mod_timer(&qp->comp.retrans_timer,
			  jiffies + sroce_rto_interval(qp));
		goto out;
	}

	sroce_stat_inc(qp->sdev, SROCE_STAT_RETRANS_TIMEOUT);
	if (!qp->comp.retries) {
		sroce_stat_inc(qp->sdev, SROCE_STAT_RETRY_EXCEEDED);
		sroce_comp_fail(qp, qp->comp.una_psn, IB_WC_RETRY_EXC_ERR);
		sroce_comp_retire(qp);
		goto out;
	}
	qp->comp.retries--;
	qp->comp.read_rewound = false;
	qp->req.cwnd = SROCE_WINDOW_MIN;
	sroce_rto_expired(qp);
	trace_sroce_retransmit(qp, qp->comp.una_psn, SROCE_RETRANS_TIMEOUT);
	sroce_comp_rewind(qp, qp->comp.una_psn);
	/*
	 * Resend from the work item: many QPs timing out at once must not
	 * keep the timer softirq busy with all their packets.
	 */
	sroce_req_schedule(qp);
out:
	spin_unlock_bh(&qp->req.lock);
}

void sroce_rnr_timer(struct timer_list *t)
{
	struct sroce_qp *qp = from_timer(qp, t, comp.rnr_timer);

	spin_lock_bh(&qp->req.lock);
	qp->comp.rnr_wait = false;
	if (sroce_qp_req_active(qp))
		sroce_req_schedule(qp);
	spin_unlock_bh(&qp->req.lock);
}
