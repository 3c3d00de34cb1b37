// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The requester: turns send WQEs into request packets.
 *
 * It runs in the doorbell's system call, and in a work item at high
 * priority (sroce_qp_wq) when a response lets more go: sending from the
 * response's softirq would leave it to ksoftirqd under load, which a
 * process polling its completion queue gets half the CPU from (see
 * Documentation/performance.rst). It stops at the end of the ring,
 * when the window of unacknowledged packets is full, when the READ/atomic
 * limit is reached, when a fence or local operation must wait, and after a
 * budget of packets (a work item then carries on). An RC QP also stops
 * while ECN congestion control holds it below its rate (cc.c); a timer
 * restarts it.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <sroce/transport.h>

#include "ack.h"
#include "ah.h"
#include "burst.h"
#include "cc.h"
#include "comp.h"
#include "finj.h"
#include "limits.h"
#include "mr.h"
#include "mw.h"
#include "odp.h"
#include "qp.h"
#include "queue.h"
#include "req.h"
#include "sroce.h"
#include "stats.h"
#include "txflow.h"
#include "wqe.h"
#include "xmit.h"

/* An RC request asks for an ACK at least this often, besides message ends. */
#define SROCE_ACKREQ_INTERVAL	16
/* Packets one call sends before leaving the rest to the work item. */
#define SROCE_REQ_BUDGET	256
/* A UD work request's Q_Key with this bit set means "use the QP's". */
#define SROCE_QKEY_USE_QP	BIT(31)

/* User opcodes (IB_UVERBS_WR_*) each QP type accepts from the ring. */
#define WR(op)			BIT(IB_UVERBS_WR_##op)
#define SROCE_RC_WR_OPS		(WR(RDMA_WRITE) | WR(RDMA_WRITE_WITH_IMM) | \
				 WR(SEND) | WR(SEND_WITH_IMM) |		\
				 WR(RDMA_READ) | WR(ATOMIC_CMP_AND_SWP) |	\
				 WR(ATOMIC_FETCH_AND_ADD) | WR(LOCAL_INV) |	\
				 WR(SEND_WITH_INV) | WR(BIND_MW) |		\
				 BIT(SROCE_WR_FLUSH) |				\
				 BIT(SROCE_WR_ATOMIC_WRITE))
/* UC carries no SEND with Invalidate (IBTA 9.2, Table 38): RC only. */
#define SROCE_UC_WR_OPS		(WR(RDMA_WRITE) | WR(RDMA_WRITE_WITH_IMM) | \
				 WR(SEND) | WR(SEND_WITH_IMM) |		\
				 WR(LOCAL_INV) | WR(BIND_MW))
#define SROCE_UD_WR_OPS		(WR(SEND) | WR(SEND_WITH_IMM))
#define SROCE_INLINE_WR_OPS	(WR(RDMA_WRITE) | WR(RDMA_WRITE_WITH_IMM) | \
				 WR(SEND) | WR(SEND_WITH_IMM) |		\
				 WR(SEND_WITH_INV))

static u32 sroce_wr_ops(enum ib_qp_type type)
{
	switch (type) {
	case IB_QPT_RC:
		return SROCE_RC_WR_OPS;
	case IB_QPT_UC:
		return SROCE_UC_WR_OPS;
	case IB_QPT_UD:
		return SROCE_UD_WR_OPS;
	default:
		return 0;
	}
}

/*
 * Fast registration is for kernel consumers, on connected QPs; FLUSH has
 * fields only in the user ABI's WQE.
 */
static bool sroce_wr_allowed(struct sroce_qp *qp, u32 opcode)
{
	if (opcode == IB_WR_REG_MR)
		return !qp->is_user && qp->type != IB_QPT_UD;
	if (opcode == SROCE_WR_FLUSH && !qp->is_user)
		return false;
	return opcode < 32 && (BIT(opcode) & sroce_wr_ops(qp->type));
}

static bool sroce_wr_is_atomic(u32 opcode)
{
	return opcode == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP ||
	       opcode == IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD;
}

/* Copy the gather list or inline data of a WQE out of the ring and check it. */
static enum ib_wc_status sroce_req_copy_data(struct sroce_qp *qp,
					     const struct rxe_send_wqe *uwqe,
					     struct sroce_swqe *wqe)
{
	u32 opcode = wqe->wr.opcode;
	u64 length = 0;
	u32 i, num_sge;

	if (opcode == SROCE_WR_FLUSH) {
		const struct sroce_flush_wr *flush = sroce_swqe_flush(wqe);

		/* No data: the answer is an empty READ response. */
		if (!flush->type ||
		    (flush->type & ~(SROCE_FLUSH_GLOBAL |
				     SROCE_FLUSH_PERSISTENT)) ||
		    flush->level > SROCE_FLUSH_MR)
			return IB_WC_LOC_QP_OP_ERR;
		wqe->inline_data = false;
		wqe->num_sge = 0;
		wqe->length = 0;
		return IB_WC_SUCCESS;
	}
	if (opcode == SROCE_WR_ATOMIC_WRITE) {
		/* The 8 bytes travel in the slot, where inline data goes. */
		if (READ_ONCE(uwqe->dma.length) != SROCE_ATOMIC_WRITE_LEN ||
		    (wqe->wr.wr.rdma.remote_addr & (SROCE_ATOMIC_WRITE_LEN - 1)))
			return IB_WC_LOC_QP_OP_ERR;
		memcpy(wqe->inline_buf, uwqe->dma.inline_data,
		       SROCE_ATOMIC_WRITE_LEN);
		wqe->inline_data = true;
		wqe->num_sge = 0;
		wqe->length = SROCE_ATOMIC_WRITE_LEN;
		return IB_WC_SUCCESS;
	}
	wqe->inline_data = wqe->wr.send_flags & IB_SEND_INLINE;
	if (wqe->inline_data) {
		if (!(BIT(opcode) & SROCE_INLINE_WR_OPS))
			return IB_WC_LOC_QP_OP_ERR;
		length = READ_ONCE(uwqe->dma.length);
		if (length > qp->req.max_inline)
			return IB_WC_LOC_LEN_ERR;
		memcpy(wqe->inline_buf, uwqe->dma.inline_data, length);
		wqe->num_sge = 0;
		wqe->length = length;
		return IB_WC_SUCCESS;
	}

	num_sge = READ_ONCE(uwqe->dma.num_sge);
	if (num_sge > qp->req.max_sge)
		return IB_WC_LOC_LEN_ERR;
	memcpy(wqe->sge, uwqe->dma.sge, num_sge * sizeof(struct ib_sge));
	for (i = 0; i < num_sge; i++)
		length += wqe->sge[i].length;
	if (length > SROCE_MAX_MSG_SIZE)
		return IB_WC_LOC_LEN_ERR;
	wqe->num_sge = num_sge;
	wqe->length = length;
	return IB_WC_SUCCESS;
}

/*
 * A UD WQE keeps a copy of its AH's address, not the AH: the process may
 * destroy the AH while the WQE waits (in SQD, say), and destroying it must
 * not wait for the WQE. A kernel consumer's WQE carries its AH (@kah); a
 * process's names it by number.
 */
static enum ib_wc_status sroce_req_take_av(struct sroce_qp *qp,
					   struct sroce_swqe *wqe,
					   struct sroce_ah *kah)
{
	struct sroce_ah *ah = kah;
	enum ib_wc_status status = IB_WC_LOC_QP_OP_ERR;

	if (qp->is_user)
		ah = sroce_ah_get(qp->sdev, wqe->wr.wr.ud.ah_num);
	if (ah && ah->ibah.pd == qp->ibqp.pd) {
		sroce_av_copy(&wqe->av, &ah->av);
		status = IB_WC_SUCCESS;
	}
	if (ah && qp->is_user)
		sroce_ah_put(ah);
	return status;
}

static enum ib_wc_status sroce_req_check(struct sroce_qp *qp,
					 struct sroce_swqe *wqe,
					 struct sroce_ah *kah)
{
	u32 opcode = wqe->wr.opcode;

	if (sroce_wr_is_atomic(opcode)) {
		if (wqe->length < sizeof(u64) ||
		    (wqe->wr.wr.atomic.remote_addr & (sizeof(u64) - 1)))
			return IB_WC_LOC_QP_OP_ERR;
		wqe->length = sizeof(u64);
	}
	if (qp->type == IB_QPT_UD)
		return sroce_req_take_av(qp, wqe, kah);
	return IB_WC_SUCCESS;
}

/*
 * The send queue's producer index, as far as the requester may go. The
 * process writes it, any value at all: one that went back behind the
 * WQEs already started would take the requester round the ring, over
 * WQEs still outstanding. Then there is no new WQE, until it is right.
 */
static u32 sroce_req_producer(struct sroce_qp *qp)
{
	u32 prod = sroce_queue_load_producer(&qp->req.sq);
	u32 mask = qp->req.sq.mask;

	if (((prod - qp->req.tail) & mask) >=
	    ((qp->req.next - qp->req.tail) & mask))
		return prod;
	ibdev_warn_ratelimited(&qp->sdev->ibdev,
			       "QP %u: send queue producer %u behind WQE %u already started: ignored\n",
			       qp->ibqp.qp_num, prod, qp->req.next);
	return qp->req.next;
}

/*
 * Copy WQE @idx out of the ring and validate it. The slot belongs to the
 * kernel until retired, but the process can still write it: nothing is
 * read from the ring again.
 */
static void sroce_req_fetch(struct sroce_qp *qp, u32 idx)
{
	const struct rxe_send_wqe *uwqe = sroce_queue_slot(&qp->req.sq, idx);
	struct sroce_swqe *wqe = &qp->req.swqe[idx];
	/*
	 * A kernel consumer posts a UD WQE with the AH itself and a
	 * reference, dropped here, once its address is copied or the WQE
	 * refused.
	 */
	struct sroce_ah *kah = wqe->kah;
	enum ib_wc_status status;

	memcpy(&wqe->wr, &uwqe->wr, sizeof(wqe->wr));
	wqe->state = SROCE_SWQE_NEW;
	wqe->psn_valid = false;
	wqe->sent = 0;
	wqe->injected = false;
	wqe->kah = NULL;
	wqe->length = 0;

	status = IB_WC_LOC_QP_OP_ERR;
	if (sroce_wr_allowed(qp, wqe->wr.opcode))
		status = sroce_req_copy_data(qp, uwqe, wqe);
	if (status == IB_WC_SUCCESS)
		status = sroce_req_check(qp, wqe, kah);
	if (kah)
		sroce_ah_put(kah);
	if (status == IB_WC_SUCCESS) {
		wqe->status = IB_WC_SUCCESS;
		return;
	}
	ibdev_warn_ratelimited(&qp->sdev->ibdev,
			       "QP %u: invalid send WQE (opcode %u): status %d\n",
			       qp->ibqp.qp_num, wqe->wr.opcode, status);
	wqe->status = status;
	wqe->state = SROCE_SWQE_DONE;
}

/*
 * Copy @len bytes of the message from offset @offset to @dst, continuing
 * the ICRC @crc over them.
 *
 * Return: IB_WC_SUCCESS; IB_WC_GENERAL_ERR (try again later) when pages of
 * an on-demand region must be faulted in first, which req.work does; or
 * the error status of the WQE.
 */
static enum ib_wc_status sroce_req_gather(struct sroce_qp *qp,
					  const struct sroce_swqe *wqe,
					  u8 *dst, u32 offset, u32 len,
					  u32 *crc)
{
	bool recorded = !qp->req.miss.mr;
	int err;

	if (wqe->inline_data) {
		*crc = sroce_icrc_copy(*crc, dst, wqe->inline_buf + offset, len);
		return IB_WC_SUCCESS;
	}
	err = sroce_sge_gather(qp->sdev, qp->ibqp.pd, wqe->sge, wqe->num_sge,
			       offset, dst, len, crc, &qp->req.miss);
	switch (err) {
	case 0:
		return IB_WC_SUCCESS;
	case -EAGAIN:
		if (!qp->req.nofault)
			return IB_WC_GENERAL_ERR;
		/* The fault just failed: no use trying again. */
		if (recorded)
			sroce_odp_miss_clear(&qp->req.miss);
		return IB_WC_LOC_PROT_ERR;
	case -EMSGSIZE:
		/* Not past the WQE's length, the sum of its SGEs'. */
		return IB_WC_LOC_LEN_ERR;
	default:
		return IB_WC_LOC_PROT_ERR;
	}
}

/* The opcode of the packet at byte @sent of a SEND or WRITE of @len bytes. */
static u8 sroce_req_opcode(struct sroce_qp *qp, const struct sroce_swqe *wqe,
			   bool first, bool last)
{
	u8 t = qp->type == IB_QPT_UC ? SROCE_OP_UC :
	       qp->type == IB_QPT_UD ? SROCE_OP_UD : SROCE_OP_RC;

	return sroce_send_opcode(t, wqe->wr.opcode, first, last);
}

/* Whether @opcode is a packet the QP's transport service sends. */
static bool sroce_req_carries(struct sroce_qp *qp, u8 opcode)
{
	const struct sroce_opcode_info *info = sroce_opcode_get(opcode);
	u8 qpt;

	switch (qp->type) {
	case IB_QPT_RC:
		qpt = SROCE_QPT_RC;
		break;
	case IB_QPT_UC:
		qpt = SROCE_QPT_UC;
		break;
	case IB_QPT_UD:
		qpt = SROCE_QPT_UD;
		break;
	default:
		return false;
	}
	return info && (info->qpts & qpt) && (info->flags & SROCE_OPF_REQ);
}

static const struct sroce_av *sroce_req_av(struct sroce_qp *qp,
					   const struct sroce_swqe *wqe,
					   u32 *dqpn)
{
	if (qp->type == IB_QPT_UD) {
		*dqpn = wqe->wr.wr.ud.remote_qpn;
		return &wqe->av;
	}
	*dqpn = qp->dest_qpn;
	return &qp->av;
}

static void sroce_req_fill_ext(struct sroce_qp *qp, struct sroce_pkt *pkt,
			       const struct sroce_swqe *wqe)
{
	const struct sroce_opcode_info *info = pkt->info;

	if (info->hdrs & BIT(SROCE_HDR_RETH))
		sroce_reth_pack(sroce_pkt_hdr(pkt, SROCE_HDR_RETH),
				wqe->wr.wr.rdma.remote_addr, wqe->wr.wr.rdma.rkey,
				wqe->length);
	if (info->hdrs & BIT(SROCE_HDR_IMMDT)) {
		struct sroce_immdt *imm = sroce_pkt_hdr(pkt, SROCE_HDR_IMMDT);

		imm->imm = (__force __be32)wqe->wr.ex.imm_data;
	}
	if (info->hdrs & BIT(SROCE_HDR_IETH)) {
		struct sroce_ieth *ieth = sroce_pkt_hdr(pkt, SROCE_HDR_IETH);

		ieth->rkey = cpu_to_be32(wqe->wr.ex.invalidate_rkey);
	}
	if (info->hdrs & BIT(SROCE_HDR_DETH)) {
		u32 qkey = wqe->wr.wr.ud.remote_qkey;

		if (qkey & SROCE_QKEY_USE_QP)
			qkey = qp->qkey;
		sroce_deth_pack(sroce_pkt_hdr(pkt, SROCE_HDR_DETH), qkey,
				qp->ibqp.qp_num);
	}
}

static u32 sroce_req_mtu(struct sroce_qp *qp)
{
	if (qp->type == IB_QPT_UD)
		return ib_mtu_enum_to_int(sroce_active_mtu(qp->sdev));
	return qp->mtu;
}

/* Pause sending for a tick, with a smaller window. */
static void sroce_req_backoff(struct sroce_qp *qp)
{
	qp->req.cwnd = max_t(u32, qp->req.cwnd / 2, SROCE_WINDOW_MIN);
	qp->comp.rnr_wait = true;
	mod_timer(&qp->comp.rnr_timer, jiffies + 1);
}

/*
 * Build the packet at byte @offset of a message with its payload attached
 * by page from the gather list's memory. The WQE's gather list stays what
 * it was at posting, so a retransmission attaches the same bytes again.
 *
 * Return: 0; -ENOMEM; or another negative errno when the bytes are to be
 * copied instead: inline data, a short payload, memory a packet may not
 * reference, or an error that the copy then reports with its status.
 */
static int sroce_req_attach(struct sroce_qp *qp, const struct sroce_swqe *wqe,
			    struct sroce_pkt *pkt, u8 opcode, u32 offset,
			    u32 payload)
{
	int err;

	if (wqe->inline_data || !sroce_pkt_zcopy_wanted(qp, payload))
		return -EOPNOTSUPP;
	err = sroce_pkt_alloc_frags(qp, pkt, opcode, payload);
	if (err)
		return err;
	err = sroce_sge_attach(qp->sdev, qp->ibqp.pd, wqe->sge, wqe->num_sge,
			       offset, pkt, payload);
	if (err) {
		/* The copy reports a bad gather list with the right status. */
		sroce_pkt_free(pkt);
		return -EOPNOTSUPP;
	}
	return 0;
}

/* Send the next packet of a SEND or WRITE. */
static enum ib_wc_status sroce_req_send_data(struct sroce_qp *qp,
					     struct sroce_swqe *wqe)
{
	u32 mtu = sroce_req_mtu(qp);
	u32 left = wqe->length - wqe->sent;
	u32 payload = min(left, mtu);
	bool first = wqe->sent == 0, last = left <= mtu;
	enum ib_wc_status status;
	const struct sroce_av *av;
	struct sroce_pkt pkt;
	u8 opcode = sroce_req_opcode(qp, wqe, first, last);
	u32 dqpn;
	u8 *data;
	int err;

	/* Validation refused what the QP cannot carry; stay safe regardless. */
	if (!sroce_req_carries(qp, opcode))
		return IB_WC_LOC_QP_OP_ERR;
	err = sroce_req_attach(qp, wqe, &pkt, opcode, wqe->sent, payload);
	if (err == -ENOMEM) {
		sroce_stat_inc(qp->sdev, SROCE_STAT_TX_NOMEM);
		return IB_WC_GENERAL_ERR;
	}
	if (err) {
		data = sroce_pkt_alloc(qp, &pkt, opcode, payload);
		if (!data) {
			sroce_stat_inc(qp->sdev, SROCE_STAT_TX_NOMEM);
			return IB_WC_GENERAL_ERR;
		}
		status = sroce_req_gather(qp, wqe, data, wqe->sent, payload,
					  &pkt.payload_crc);
		if (status != IB_WC_SUCCESS) {
			sroce_pkt_free(&pkt);
			return status;
		}
		pkt.payload_crc_set = true;
	}
	sroce_req_fill_ext(qp, &pkt, wqe);

	pkt.bth.psn = qp->type == IB_QPT_UD ? qp->req.psn :
		      sroce_psn_add(wqe->first_psn, wqe->sent / mtu);
	pkt.bth.se = last && (wqe->wr.send_flags & IB_SEND_SOLICITED);
	if (qp->type == IB_QPT_RC &&
	    (last || ++qp->req.pkts_since_ackreq >= SROCE_ACKREQ_INTERVAL)) {
		pkt.bth.ackreq = true;
		qp->req.pkts_since_ackreq = 0;
	}
	av = sroce_req_av(qp, wqe, &dqpn);
	if (sroce_pkt_queue(qp, av, &pkt, dqpn, &qp->req.burst) == -ENOBUFS &&
	    qp->type == IB_QPT_RC) {
		/* The local queue is full: pause, then send this packet again. */
		sroce_req_backoff(qp);
		return IB_WC_GENERAL_ERR;
	}

	wqe->sent += payload;
	qp->req.psn = sroce_psn_add(pkt.bth.psn, 1);
	return IB_WC_SUCCESS;
}

/* Send a READ request for the part of the message not yet received. */
static enum ib_wc_status sroce_req_send_read(struct sroce_qp *qp,
					     struct sroce_swqe *wqe)
{
	u32 left = wqe->length - wqe->sent;
	u32 npkts = max(1U, DIV_ROUND_UP(left, qp->mtu));
	struct sroce_pkt pkt;

	if (!sroce_pkt_alloc(qp, &pkt, SROCE_OP_READ_REQ, 0)) {
		sroce_stat_inc(qp->sdev, SROCE_STAT_TX_NOMEM);
		return IB_WC_GENERAL_ERR;
	}
	sroce_reth_pack(sroce_pkt_hdr(&pkt, SROCE_HDR_RETH),
			wqe->wr.wr.rdma.remote_addr + wqe->sent,
			wqe->wr.wr.rdma.rkey, left);
	pkt.bth.psn = sroce_psn_add(wqe->first_psn, wqe->sent / qp->mtu);
	pkt.bth.ackreq = true;
	sroce_pkt_queue(qp, &qp->av, &pkt, qp->dest_qpn, &qp->req.burst);
	qp->req.psn = sroce_psn_add(pkt.bth.psn, npkts);
	return IB_WC_SUCCESS;
}

static enum ib_wc_status sroce_req_send_atomic(struct sroce_qp *qp,
					       struct sroce_swqe *wqe)
{
	bool cas = wqe->wr.opcode == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP;
	struct sroce_pkt pkt;

	if (!sroce_pkt_alloc(qp, &pkt, cas ? SROCE_OP_CMP_SWAP :
					     SROCE_OP_FETCH_ADD, 0)) {
		sroce_stat_inc(qp->sdev, SROCE_STAT_TX_NOMEM);
		return IB_WC_GENERAL_ERR;
	}
	sroce_atmeth_pack(sroce_pkt_hdr(&pkt, SROCE_HDR_ATMETH),
			  wqe->wr.wr.atomic.remote_addr,
			  wqe->wr.wr.atomic.rkey,
			  cas ? wqe->wr.wr.atomic.swap :
				wqe->wr.wr.atomic.compare_add,
			  cas ? wqe->wr.wr.atomic.compare_add : 0);
	pkt.bth.psn = wqe->first_psn;
	pkt.bth.ackreq = true;
	sroce_pkt_queue(qp, &qp->av, &pkt, qp->dest_qpn, &qp->req.burst);
	qp->req.psn = sroce_psn_add(wqe->first_psn, 1);
	return IB_WC_SUCCESS;
}

/* A FLUSH: one request, answered by an empty READ response. */
static enum ib_wc_status sroce_req_send_flush(struct sroce_qp *qp,
					      struct sroce_swqe *wqe)
{
	const struct sroce_flush_wr *flush = sroce_swqe_flush(wqe);
	struct sroce_pkt pkt;

	if (!sroce_pkt_alloc(qp, &pkt, SROCE_OP_FLUSH, 0)) {
		sroce_stat_inc(qp->sdev, SROCE_STAT_TX_NOMEM);
		return IB_WC_GENERAL_ERR;
	}
	sroce_feth_pack(sroce_pkt_hdr(&pkt, SROCE_HDR_FETH), flush->type,
			flush->level);
	sroce_reth_pack(sroce_pkt_hdr(&pkt, SROCE_HDR_RETH),
			flush->remote_addr, flush->rkey, flush->length);
	pkt.bth.psn = wqe->first_psn;
	pkt.bth.ackreq = true;
	sroce_pkt_queue(qp, &qp->av, &pkt, qp->dest_qpn, &qp->req.burst);
	qp->req.psn = sroce_psn_add(wqe->first_psn, 1);
	return IB_WC_SUCCESS;
}

/* PSNs a WQE takes: one per packet (a READ: one per response packet). */
static u32 sroce_req_npsn(struct sroce_qp *qp, const struct sroce_swqe *wqe)
{
	u32 mtu = sroce_req_mtu(qp);

	if (sroce_wr_is_atomic(wqe->wr.opcode))
		return 1;
	return sroce_msg_npkts(wqe->length, mtu);
}

/* Local operations complete once everything before them has. */
static bool sroce_req_local_op(struct sroce_qp *qp, struct sroce_swqe *wqe,
			       u32 idx)
{
	int err;

	/*
	 * Local operations before this one (a chain of REG_MRs) are done
	 * but wait for a retirement that no acknowledgment may ever bring
	 * when nothing is on the wire: retire them, or the tail would never
	 * reach this one and the queue would stall.
	 */
	sroce_comp_retire(qp);
	if (idx != qp->req.tail)
		return false;
	if (wqe->wr.opcode == IB_WR_REG_MR)
		/* A kernel QP's ring: the MR pointer is the consumer's. */
		err = sroce_mr_fast_reg(qp->ibqp.pd, wqe->wr.wr.reg.mr,
					wqe->wr.wr.reg.key,
					wqe->wr.wr.reg.access);
	else if (wqe->wr.opcode == IB_UVERBS_WR_BIND_MW)
		err = sroce_mw_bind(qp, wqe->wr.wr.mw.mw_rkey,
				    wqe->wr.wr.mw.rkey, wqe->wr.wr.mw.mr_lkey,
				    wqe->wr.wr.mw.addr, wqe->wr.wr.mw.length,
				    wqe->wr.wr.mw.access);
	else
		err = sroce_mr_invalidate(qp->sdev,
					  wqe->wr.ex.invalidate_rkey,
					  qp->ibqp.pd, NULL);
	if (err)
		wqe->status = wqe->wr.opcode == IB_UVERBS_WR_BIND_MW ?
			      IB_WC_MW_BIND_ERR : IB_WC_LOC_PROT_ERR;
	wqe->state = SROCE_SWQE_DONE;
	return true;
}

/*
 * May @wqe start now? In SQD only one begun before the drain may: one a
 * go-back has to send again.
 */
static bool sroce_req_may_start(struct sroce_qp *qp, struct sroce_swqe *wqe)
{
	enum ib_qp_state state = READ_ONCE(qp->state);

	if (state != IB_QPS_RTS && !(state == IB_QPS_SQD && wqe->psn_valid))
		return false;
	if ((wqe->wr.send_flags & IB_SEND_FENCE) && qp->req.rd_atomic_out)
		return false;
	if (sroce_swqe_is_rd_atomic(wqe) &&
	    qp->req.rd_atomic_out >= qp->max_rd_atomic)
		return false;
	return true;
}

static bool sroce_req_window_full(struct sroce_qp *qp)
{
	return qp->type == IB_QPT_RC &&
	       sroce_psn_diff(qp->req.psn, qp->comp.una_psn) >= qp->req.cwnd;
}

static enum ib_wc_status sroce_req_step(struct sroce_qp *qp,
					struct sroce_swqe *wqe)
{
	switch (wqe->wr.opcode) {
	case IB_UVERBS_WR_RDMA_READ:
		return sroce_req_send_read(qp, wqe);
	case IB_UVERBS_WR_ATOMIC_CMP_AND_SWP:
	case IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD:
		return sroce_req_send_atomic(qp, wqe);
	case SROCE_WR_FLUSH:
		return sroce_req_send_flush(qp, wqe);
	default:
		return sroce_req_send_data(qp, wqe);
	}
}

/* After a WQE's last request packet went out. */
static void sroce_req_wqe_sent(struct sroce_qp *qp, struct sroce_swqe *wqe)
{
	if (qp->type != IB_QPT_RC) {
		/* Nothing will acknowledge it: it is complete. */
		wqe->state = SROCE_SWQE_DONE;
		return;
	}
	wqe->state = SROCE_SWQE_PENDING;
	if (sroce_swqe_is_rd_atomic(wqe))
		qp->req.rd_atomic_out++;
}

/* Whether the WQE's last request packet has gone out. */
static bool sroce_req_wqe_done_sending(struct sroce_qp *qp,
				       struct sroce_swqe *wqe)
{
	return sroce_swqe_is_rd_atomic(wqe) ||
	       wqe->sent >= wqe->length;
}

/* A UD message longer than the MTU is dropped and reported sent (C10-93.1.1). */
static bool sroce_req_ud_too_long(struct sroce_qp *qp, struct sroce_swqe *wqe)
{
	return qp->type == IB_QPT_UD && wqe->length > sroce_req_mtu(qp);
}

/* What sroce_req_run() does after each step on the WQE at req.next. */
enum sroce_req_verdict {
	SROCE_REQ_SEND,		/* send its next packet */
	SROCE_REQ_NEXT,		/* go round again */
	SROCE_REQ_STOP,		/* stop for now */
	SROCE_REQ_FAILED,	/* stop: a WQE failed */
};

/* Move on from the WQE at @idx. */
static void sroce_req_advance(struct sroce_qp *qp, u32 idx)
{
	qp->req.next = sroce_queue_next(&qp->req.sq, idx);
}

/* The private copy of the WQE at @idx, copied from the ring on first use. */
static struct sroce_swqe *sroce_req_wqe(struct sroce_qp *qp, u32 idx)
{
	if (idx == qp->req.seen) {
		sroce_req_fetch(qp, idx);
		qp->req.seen = sroce_queue_next(&qp->req.sq, idx);
	}
	return &qp->req.swqe[idx];
}

/*
 * Start a WQE not yet looked at: run a local operation, drop a UD message
 * too long for the path, or assign the PSNs of a WQE that goes on the wire.
 */
static enum sroce_req_verdict sroce_req_begin(struct sroce_qp *qp,
					      struct sroce_swqe *wqe, u32 idx)
{
	if (wqe->state == SROCE_SWQE_DONE) {
		/* Rejected by validation. */
		sroce_req_advance(qp, idx);
		return SROCE_REQ_FAILED;
	}
	if (wqe->state != SROCE_SWQE_NEW)
		return SROCE_REQ_SEND;
	if (!sroce_req_may_start(qp, wqe))
		return SROCE_REQ_STOP;
	if (sroce_finj_fail_wqe(qp, wqe)) {
		sroce_req_advance(qp, idx);
		return SROCE_REQ_NEXT;
	}
	if (wqe->wr.opcode == IB_UVERBS_WR_LOCAL_INV ||
	    wqe->wr.opcode == IB_UVERBS_WR_BIND_MW ||
	    wqe->wr.opcode == IB_WR_REG_MR) {
		if (!sroce_req_local_op(qp, wqe, idx))
			return SROCE_REQ_STOP;
		sroce_req_advance(qp, idx);
		return wqe->status != IB_WC_SUCCESS ? SROCE_REQ_FAILED :
						      SROCE_REQ_NEXT;
	}
	if (sroce_req_ud_too_long(qp, wqe)) {
		sroce_stat_inc(qp->sdev, SROCE_STAT_TX_UD_TOO_LONG);
		wqe->state = SROCE_SWQE_DONE;
		sroce_req_advance(qp, idx);
		return SROCE_REQ_NEXT;
	}
	wqe->first_psn = qp->req.psn;
	wqe->last_psn = sroce_psn_add(qp->req.psn,
				      sroce_req_npsn(qp, wqe) - 1);
	wqe->psn_valid = true;
	wqe->sent = 0;
	wqe->state = SROCE_SWQE_SENDING;
	return SROCE_REQ_SEND;
}

/**
 * sroce_req_schedule() - have the requester's work item carry on
 * @qp: the QP
 */
void sroce_req_schedule(struct sroce_qp *qp)
{
	queue_work(sroce_qp_wq, &qp->req.work);
}

/**
 * sroce_req_draining() - whether WQEs begun before a drain are unfinished
 * @qp: the QP
 *
 * Those sent and not yet completed, and the one whose packets are being
 * sent; WQEs not begun wait in the queue.
 *
 * Return: what ib_query_qp() reports as sq_draining in the SQD state.
 */
bool sroce_req_draining(struct sroce_qp *qp)
{
	bool draining;

	spin_lock_bh(&qp->req.lock);
	draining = qp->req.tail != qp->req.next ||
		   (qp->req.swqe &&
		    qp->req.swqe[qp->req.next].state == SROCE_SWQE_SENDING);
	spin_unlock_bh(&qp->req.lock);
	return draining;
}

/**
 * sroce_req_kick() - let the requester go on after a response
 * @qp: the QP, RC; req.lock held
 *
 * Schedules the work item when the send queue holds WQEs not yet sent
 * and the window has room: the response that got here may have opened
 * it, ended a wait for READ responses, or rewound the requester.
 */
void sroce_req_kick(struct sroce_qp *qp)
{
	lockdep_assert_held(&qp->req.lock);
	if (qp->req.next != sroce_req_producer(qp) &&
	    !qp->comp.rnr_wait && !sroce_req_window_full(qp))
		sroce_req_schedule(qp);
}

/*
 * Whether another packet may go now: the window, the budget of this run
 * (the work item takes over when it is spent), an RC QP's rate and the
 * queues below.
 */
static bool sroce_req_may_send(struct sroce_qp *qp, unsigned int *budget)
{
	if (sroce_req_window_full(qp))
		return false;
	if (!*budget) {
		sroce_req_schedule(qp);
		return false;
	}
	if (qp->type == IB_QPT_RC && !sroce_cc_may_send(qp))
		return false;
	if (sroce_tx_throttled(qp, SROCE_TXW_REQ))
		return false;
	(*budget)--;
	return true;
}

/* Send the next packet of @wqe, and account for it. */
static enum sroce_req_verdict sroce_req_send(struct sroce_qp *qp,
					     struct sroce_swqe *wqe, u32 idx)
{
	u32 sent = wqe->sent;
	enum ib_wc_status status = sroce_req_step(qp, wqe);

	if (status == IB_WC_GENERAL_ERR) {
		/* No memory, queue space or mapped page: try later. */
		if (!qp->comp.rnr_wait)
			sroce_req_schedule(qp);
		return SROCE_REQ_STOP;
	}
	if (status != IB_WC_SUCCESS) {
		wqe->status = status;
		wqe->state = SROCE_SWQE_DONE;
		sroce_req_advance(qp, idx);
		return SROCE_REQ_FAILED;
	}
	if (qp->type == IB_QPT_RC)
		sroce_cc_sent(qp, wqe->sent - sent);
	if (sroce_psn_diff(qp->req.psn, qp->req.sent_psn) > 0) {
		qp->req.sent_psn = qp->req.psn;
		if (qp->type == IB_QPT_RC)
			sroce_rto_sent(qp, sroce_psn_add(qp->req.psn, -1));
	}
	if (sroce_req_wqe_done_sending(qp, wqe)) {
		sroce_req_wqe_sent(qp, wqe);
		sroce_req_advance(qp, idx);
	}
	return SROCE_REQ_NEXT;
}

/*
 * Send the packets of this run gathered in the burst. When the local queue
 * dropped some, an RC QP pauses and goes back to the oldest unacknowledged
 * packet, as it would for a single packet the queue refused (see
 * sroce_req_send_data()), rather than wait for the retransmission timer.
 */
static void sroce_req_flush(struct sroce_qp *qp)
{
	if (sroce_burst_flush(qp, &qp->req.burst) == -ENOBUFS &&
	    qp->type == IB_QPT_RC) {
		sroce_req_backoff(qp);
		sroce_comp_resend(qp);
	}
}

/*
 * A doorbell that posts one single-packet message to an RC QP whose earlier
 * packets are still in this host's queues (the NIC has not yet taken them)
 * leaves it for their destructor to run the work item (sroce_tx_cork()):
 * messages posted meanwhile then leave as one burst, one notification of
 * the NIC, instead of one each. A stream of small messages posted one at a
 * time has the NIC busy anyway; what waits is a few microseconds of
 * queueing. A QP with nothing unacknowledged (a ping-pong's turn) and a
 * multi-packet message send at once.
 */
static bool sroce_tx_cork_on = true;
module_param_named(tx_cork, sroce_tx_cork_on, bool, 0644);
MODULE_PARM_DESC(tx_cork,
		 "Let single-packet messages of a streaming RC QP wait for its packets in the NIC's queue to go, and leave together (default: on)");

/* Whether a doorbell leaves the WQE at req.next to the work item; see above. */
static bool sroce_req_corks(struct sroce_qp *qp)
{
	const struct sroce_swqe *wqe;
	u32 idx = qp->req.next;

	if (!READ_ONCE(sroce_tx_cork_on) || qp->type != IB_QPT_RC ||
	    idx == sroce_req_producer(qp) ||
	    qp->comp.rnr_wait || qp->req.fatal ||
	    qp->req.psn == qp->comp.una_psn)
		return false;
	wqe = sroce_req_wqe(qp, idx);
	if (wqe->state != SROCE_SWQE_NEW || wqe->wr.opcode >= 32 ||
	    !(BIT(wqe->wr.opcode) & SROCE_INLINE_WR_OPS) ||
	    wqe->length > sroce_req_mtu(qp))
		return false;
	if (!sroce_tx_cork(qp))
		return false;
	sroce_stat_inc(qp->sdev, SROCE_STAT_TX_CORKED);
	return true;
}

/**
 * sroce_req_doorbell() - send what a doorbell posted, or leave it to the
 * packets in flight
 * @qp: the QP; req.lock held
 */
void sroce_req_doorbell(struct sroce_qp *qp)
{
	if (!sroce_req_corks(qp))
		sroce_req_run(qp);
}

/**
 * sroce_req_run() - send what the send queue holds, as far as allowed
 * @qp: the QP; req.lock held
 */
void sroce_req_run(struct sroce_qp *qp)
{
	unsigned int budget = SROCE_REQ_BUDGET;
	bool error = false;
	u32 prod;

	lockdep_assert_held(&qp->req.lock);
	prod = sroce_req_producer(qp);
	/* The responder's owed ACK goes to the same peer: it leads the burst. */
	if (qp->type == IB_QPT_RC && qp->req.next != prod)
		sroce_ack_join(qp, &qp->req.burst);

	while (qp->req.next != prod && !qp->comp.rnr_wait && !qp->req.fatal) {
		u32 idx = qp->req.next;
		struct sroce_swqe *wqe = sroce_req_wqe(qp, idx);
		enum sroce_req_verdict verdict;

		verdict = sroce_req_begin(qp, wqe, idx);
		if (verdict == SROCE_REQ_SEND)
			verdict = sroce_req_may_send(qp, &budget) ?
				  sroce_req_send(qp, wqe, idx) : SROCE_REQ_STOP;
		if (verdict == SROCE_REQ_FAILED)
			error = true;
		if (verdict != SROCE_REQ_NEXT)
			break;
	}
	sroce_req_flush(qp);
	if (qp->type == IB_QPT_RC)
		sroce_comp_arm_retrans(qp);
	if (error)
		sroce_stat_inc(qp->sdev, SROCE_STAT_BAD_SEND_WQE);
	sroce_comp_retire(qp);
}

/*
 * Fault in the pages the requester or completer found missing. The response
 * kept for them is handled again; those dropped meanwhile are asked for
 * again, as after a timeout but without using up a retry.
 */
static void sroce_req_fault(struct sroce_qp *qp)
{
	struct sroce_odp_miss miss;
	struct sk_buff *skb;
	bool rewind, resp;
	u32 psn;
	int err;

	spin_lock_bh(&qp->req.lock);
	miss = qp->req.miss;
	rewind = qp->req.miss_rewind;
	psn = qp->req.miss_psn;
	skb = qp->req.miss_skb;
	resp = skb;
	qp->req.miss.mr = NULL;
	qp->req.miss_rewind = false;
	qp->req.miss_skb = NULL;
	spin_unlock_bh(&qp->req.lock);
	if (!miss.mr)
		return;

	err = sroce_odp_fault(&miss);
	if (skb) {
		if (!err)
			sroce_comp_replay(qp, skb);
		kfree_skb(skb);
	}
	spin_lock_bh(&qp->req.lock);
	if (sroce_qp_req_active(qp)) {
		if (err && resp)
			sroce_comp_fault_failed(qp, psn);
		else if (rewind)
			sroce_comp_resend(qp);
		/* A send's gather that still misses fails its WQE. */
		qp->req.nofault = err && !resp;
		sroce_req_run(qp);
		qp->req.nofault = false;
	}
	spin_unlock_bh(&qp->req.lock);
}

/**
 * sroce_req_work() - carry on sending from process context
 * @work: the QP's req.work
 *
 * Also faults in pages of on-demand regions, and moves the QP to the error
 * state after a failed WQE: both take locks the data path cannot.
 */
void sroce_req_work(struct work_struct *work)
{
	struct sroce_qp *qp = container_of(work, struct sroce_qp, req.work);
	bool fatal;

	sroce_req_fault(qp);
	spin_lock_bh(&qp->req.lock);
	fatal = qp->req.fatal;
	if (!fatal && sroce_qp_req_active(qp))
		sroce_req_run(qp);
	spin_unlock_bh(&qp->req.lock);
	if (fatal) {
		sroce_qp_error(qp);
	} else if (READ_ONCE(qp->state) == IB_QPS_ERR) {
		/* Posted by a kernel consumer in a context that cannot flush. */
		sroce_qp_flush_sq(qp);
		sroce_qp_flush_rq(qp);
	}
}
