// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The responder: validates request packets, places their payload into
 * registered memory with one copy, answers with ACKs and NAKs, and
 * completes receive WQEs. READ, FLUSH and atomic requests and duplicates
 * are answered by resp_read.c.
 *
 * It runs in the receive softirq. Only READ responses beyond a budget are
 * sent from a work item (of high priority, as the requester's: see qp.c),
 * with later requests held back until it is done so that responses leave
 * in PSN order.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>

#include <sroce/transport.h>

#include "ack.h"
#include "burst.h"
#include "cq.h"
#include "finj.h"
#include "limits.h"
#include "mr.h"
#include "odp.h"
#include "qp.h"
#include "resp.h"
#include "rx.h"
#include "sroce.h"
#include "stats.h"
#include "trace.h"
#include "txflow.h"
#include "wqe.h"
#include "xmit.h"

/* Requests held back while READ responses are being sent. */
#define SROCE_RESP_BACKLOG	4096
/* The GRH image at the start of a UD receive buffer. */
#define SROCE_GRH_LEN		40

/*
 * What a UD receive completion's SL says about the GRH image in front of
 * the payload: the L3 header the datagram came with. The verbs API has no
 * other field for it in user space, and consumers need it to find the
 * addresses in the image: an IPv4 header fills only its last 20 bytes.
 * These are the values ConnectX adapters report there, which UCX relies
 * on (it drops datagrams whose image does not name a local address, and
 * read as IPv6 an IPv4 image never does). Kernel consumers get the
 * network header type instead, and an SL of 0 (sroce_cqe_to_wc()).
 */
#define SROCE_WC_SL_GRH		0	/* RoCE v1: a GRH */
#define SROCE_WC_SL_IPV6	1
#define SROCE_WC_SL_IPV4	2

/*
 * Build an ACK or a NAK and send it, or add it to @burst when there is one;
 * a NAK is traced.
 */
static void sroce_resp_put_ack(struct sroce_qp *qp, u32 psn, u8 syndrome,
			       u32 msn, struct sroce_burst *burst)
{
	struct sroce_pkt pkt;

	sroce_resp_tx_pending(qp);
	if (!sroce_pkt_alloc(qp, &pkt, SROCE_OP_ACK, 0)) {
		sroce_stat_inc(qp->sdev, SROCE_STAT_TX_NOMEM);
		return;
	}
	sroce_aeth_pack(sroce_pkt_hdr(&pkt, SROCE_HDR_AETH), syndrome, msn);
	if ((syndrome & SROCE_AETH_KIND_MASK) != SROCE_AETH_ACK)
		trace_sroce_nak_send(qp, psn, syndrome);
	pkt.bth.psn = psn;
	if (burst)
		sroce_pkt_queue(qp, &qp->av, &pkt, qp->dest_qpn, burst);
	else
		sroce_pkt_send(qp, &qp->av, &pkt, qp->dest_qpn);
}

/* Send the owed ACK, or add it to @burst. */
static void sroce_resp_ack_owed(struct sroce_qp *qp, struct sroce_burst *burst)
{
	qp->resp.ack_due = false;
	sroce_resp_put_ack(qp, qp->resp.ack_psn,
			   SROCE_AETH_ACK | SROCE_AETH_CREDIT_INVALID,
			   qp->resp.ack_msn, burst);
}

/**
 * sroce_resp_ack_flush() - send the ACK the responder owes, if any
 * @qp: the QP; resp.lock held
 *
 * Called at the end of a receive batch (ack.c), and before any other
 * response, so that responses leave in the order they were decided.
 */
void sroce_resp_ack_flush(struct sroce_qp *qp)
{
	lockdep_assert_held(&qp->resp.lock);
	if (!qp->resp.ack_due)
		return;
	sroce_resp_ack_owed(qp, NULL);
	sroce_ack_sent(qp);
}

/**
 * sroce_resp_ack_join() - add the ACK the responder owes to the requester's
 *	packets
 * @qp: an RC QP; req.lock and resp.lock held
 * @burst: the requester's burst
 *
 * The ACK goes to the peer the requests go to, in the same transmit burst,
 * ahead of them.
 */
void sroce_resp_ack_join(struct sroce_qp *qp, struct sroce_burst *burst)
{
	lockdep_assert_held(&qp->resp.lock);
	if (!qp->resp.ack_due)
		return;
	sroce_resp_ack_owed(qp, burst);
	sroce_stat_inc(qp->sdev, SROCE_STAT_ACK_JOINED);
}

/**
 * sroce_resp_batch_burst() - the burst in which READ responses and atomic
 *	ACKs may wait for the end of the receive batch
 * @qp: the QP; resp.lock held, bottom halves off
 *
 * Under emulation a packet's cost is mostly the notification of the
 * device, and a stream of small READs or of atomics asks for one response
 * a request: the responses to the requests of one batch leave together,
 * as the ACKs of a batch do, once the batch has been taken in (ack.c).
 *
 * Return: the QP's batch burst, the QP queued on this CPU's batch, which
 * pushes it out; or NULL when responses go at once (ACK coalescing is off,
 * or the QP is being destroyed).
 */
struct sroce_burst *sroce_resp_batch_burst(struct sroce_qp *qp)
{
	lockdep_assert_held(&qp->resp.lock);
	if (!qp->resp.ack_queued) {
		if (!sroce_ack_coalescing() || !sroce_ack_queue(qp))
			return NULL;
		qp->resp.ack_queued = true;
	}
	return &qp->resp.batch_burst;
}

/**
 * sroce_resp_tx_pending() - hand on the responses waiting for the end of
 *	the receive batch
 * @qp: the QP; resp.lock held, bottom halves off
 *
 * Called at the end of the batch, before any other response, and as the
 * QP leaves RTS. Their requests are done: a response the local queue
 * drops is lost as on the wire, and the requester asks again for it (an
 * atomic's result is kept for the duplicate).
 */
void sroce_resp_tx_pending(struct sroce_qp *qp)
{
	struct sroce_burst *burst = &qp->resp.batch_burst;

	lockdep_assert_held(&qp->resp.lock);
	if (!burst->head)
		return;
	sroce_stat_add(qp->sdev, SROCE_STAT_RESP_BATCHED, burst->count);
	sroce_burst_flush(qp, burst);
}

/**
 * sroce_resp_send_ack() - send an ACK or a NAK as the QP's responder
 * @qp: the QP; resp.lock held
 * @psn: the PSN it answers
 * @syndrome: the AETH syndrome
 *
 * An ACK still owed goes first. A NAK is traced (sroce_nak_send); fault
 * injection sends its forced NAKs through here too.
 */
void sroce_resp_send_ack(struct sroce_qp *qp, u32 psn, u8 syndrome)
{
	sroce_resp_ack_flush(qp);
	sroce_resp_put_ack(qp, psn, syndrome, qp->resp.msn, NULL);
}

void sroce_resp_ack(struct sroce_qp *qp, u32 psn)
{
	sroce_resp_send_ack(qp, psn,
			    SROCE_AETH_ACK | SROCE_AETH_CREDIT_INVALID);
}

/*
 * Owe the requester an ACK for @psn, sent at the end of the receive batch:
 * a later request of the same batch that asks for one makes it redundant.
 */
static void sroce_resp_ack_later(struct sroce_qp *qp, u32 psn)
{
	if (!qp->resp.ack_queued) {
		if (!sroce_ack_coalescing() || !sroce_ack_queue(qp)) {
			sroce_resp_ack(qp, psn);
			return;
		}
		qp->resp.ack_queued = true;
	}
	if (qp->resp.ack_due)
		sroce_stat_inc(qp->sdev, SROCE_STAT_ACK_COALESCED);
	qp->resp.ack_due = true;
	qp->resp.ack_psn = psn;
	qp->resp.ack_msn = qp->resp.msn;
}

/**
 * sroce_resp_schedule() - have the responder's work item carry on
 * @qp: the QP
 */
void sroce_resp_schedule(struct sroce_qp *qp)
{
	queue_work(sroce_qp_wq, &qp->resp.work);
}

/* Fail the QP from the responder: NAK the request, then error the QP. */
void sroce_resp_fatal(struct sroce_qp *qp, u32 psn, u8 nak)
{
	static const u8 stat[] = {
		[SROCE_NAK_INVALID_REQ] = SROCE_STAT_INVALID_NAK_SENT,
		[SROCE_NAK_REM_ACCESS] = SROCE_STAT_ACCESS_NAK_SENT,
		[SROCE_NAK_REM_OP_ERR] = SROCE_STAT_INVALID_NAK_SENT,
	};

	if (qp->type == IB_QPT_RC) {
		sroce_stat_inc(qp->sdev, stat[nak]);
		sroce_resp_send_ack(qp, psn, SROCE_AETH_NAK | nak);
	}
	qp->resp.fatal = true;
	sroce_resp_schedule(qp);
}

/*
 * UC: forget the message in progress; the next FIRST or ONLY starts again.
 * The receive WQE, if one was taken, waits for that message.
 */
static void sroce_resp_uc_abandon(struct sroce_qp *qp)
{
	qp->resp.in_msg = 0;
	qp->resp.recv_offset = 0;
	qp->resp.write_resid = 0;
}

/*
 * UC: drop a malformed message, which the IBTA asks of a UC responder
 * (IBTA 9.9.3): the peer's garbage never fails the QP.
 * Return: true for a UC QP, whose message was dropped.
 */
static bool sroce_resp_uc_drop(struct sroce_qp *qp, u32 psn)
{
	if (qp->type != IB_QPT_UC)
		return false;
	sroce_qp_rx_drop(qp, SROCE_STAT_RX_UC_MALFORMED, psn);
	sroce_resp_uc_abandon(qp);
	return true;
}

/*
 * Refuse a request. RC: it came in sequence from the QP's peer, so it is
 * NAKed and the QP fails. UC: the message is dropped.
 */
static void sroce_resp_refuse(struct sroce_qp *qp, u32 psn, u8 nak)
{
	if (!sroce_resp_uc_drop(qp, psn))
		sroce_resp_fatal(qp, psn, nak);
}

static int sroce_resp_complete(struct sroce_qp *qp, struct ib_uverbs_wc *wc,
			       bool solicited, const struct sk_buff *rx)
{
	wc->qp_num = qp->ibqp.qp_num;
	wc->port_num = 1;
	if (sroce_cq_post(qp->rcq, wc, solicited, rx)) {
		/* An overflowed receive CQ fails the QP (IBTA C11-?). */
		qp->resp.fatal = true;
		sroce_resp_schedule(qp);
		return -EBUSY;
	}
	return 0;
}

static void sroce_resp_complete_error(struct sroce_qp *qp,
				      enum ib_wc_status status)
{
	struct ib_uverbs_wc wc = {
		.wr_id = qp->resp.rwqe.wr_id,
		.status = status,
	};

	if (!qp->resp.rwqe_valid)
		return;
	qp->resp.rwqe_valid = false;
	sroce_resp_complete(qp, &wc, true, NULL);
}

/**
 * sroce_resp_release() - drop the responder's references and progress
 * @qp: the QP; resp.lock held
 */
void sroce_resp_release(struct sroce_qp *qp)
{
	u32 i;

	/* Responses decided before the QP stopped still leave. */
	sroce_resp_tx_pending(qp);
	for (i = 0; i < SROCE_MAX_RD_ATOMIC; i++)
		sroce_rd_res_clear(&qp->resp.rd_res[i]);
	qp->resp.active_res = NULL;
	qp->resp.busy = false;
	qp->resp.throttled = false;
	qp->resp.in_msg = 0;
	qp->resp.nak_sent = false;
	qp->resp.rd_res_head = 0;
	sroce_resp_discard_backlog(qp);
	sroce_odp_miss_clear(&qp->resp.miss);
	qp->resp.nofault = false;
}

/*
 * A request found pages of an on-demand region unmapped (recorded in
 * resp.miss). It waits at the head of the backlog, later requests behind
 * it, while the work item faults the pages in; then it is handled again.
 *
 * Return: false when the fault already failed: the request fails instead.
 */
bool sroce_resp_defer(struct sroce_qp *qp, struct sk_buff *skb)
{
	if (qp->resp.nofault) {
		sroce_odp_miss_clear(&qp->resp.miss);
		return false;
	}
	skb_queue_head(&qp->resp.backlog, skb_get(skb));
	qp->resp.busy = true;
	sroce_resp_schedule(qp);
	return true;
}

/*
 * Finish the ICRC check of a request whose payload was placed with result
 * @err. A packet that turns out bad changes nothing: not even the fault of
 * pages it found missing, which no deferral would then clear (and which
 * would hold the region, keeping its deregistration waiting).
 */
static bool sroce_resp_icrc_end(struct sroce_qp *qp, struct sk_buff *skb,
				int err, u32 *crc)
{
	if (sroce_rx_icrc_end(qp->sdev, skb, err ? NULL : crc))
		return true;
	if (err == -EAGAIN)
		sroce_odp_miss_clear(&qp->resp.miss);
	return false;
}

static int sroce_resp_payload_off(const struct sroce_opcode_info *info)
{
	return sizeof(struct udphdr) + info->hdr_len;
}

/* Is the opcode a valid continuation of the message in progress? */
static bool sroce_resp_opcode_ok(struct sroce_qp *qp,
				 const struct sroce_opcode_info *info)
{
	u32 kind = info->flags & (SROCE_OPF_SEND | SROCE_OPF_WRITE);

	if (info->flags & (SROCE_OPF_FIRST | SROCE_OPF_ONLY))
		return !qp->resp.in_msg;
	if (info->flags & (SROCE_OPF_MIDDLE | SROCE_OPF_LAST))
		return qp->resp.in_msg == kind;
	return !qp->resp.in_msg;
}

/* Is the payload size right for the packet's place in its message? */
static bool sroce_resp_size_ok(struct sroce_qp *qp,
			       const struct sroce_opcode_info *info,
			       u32 payload)
{
	if (info->flags & (SROCE_OPF_FIRST | SROCE_OPF_MIDDLE))
		return payload == qp->mtu;
	return payload <= qp->mtu;
}

static int sroce_resp_take_rwqe(struct sroce_qp *qp, u32 psn)
{
	int err;

	if (qp->resp.rwqe_valid)
		return 0;
	err = sroce_qp_fetch_rwqe(qp, &qp->resp.rwqe);
	if (err == -EAGAIN) {
		if (qp->type == IB_QPT_RC) {
			sroce_stat_inc(qp->sdev, SROCE_STAT_RNR_NAK_SENT);
			sroce_resp_send_ack(qp, psn, SROCE_AETH_RNR_NAK |
					    qp->min_rnr_timer);
		} else {
			/* UC: the message is lost; the QP goes on. */
			sroce_qp_rx_drop(qp, SROCE_STAT_RX_UC_DROPPED, psn);
			sroce_resp_uc_abandon(qp);
		}
		return err;
	}
	if (err) {
		qp->resp.rwqe_valid = true;
		sroce_resp_complete_error(qp, IB_WC_LOC_QP_OP_ERR);
		sroce_resp_fatal(qp, psn, SROCE_NAK_REM_OP_ERR);
		return err;
	}
	qp->resp.rwqe_valid = true;
	qp->resp.recv_offset = 0;
	return 0;
}

/* Finish the message of a SEND's last packet or a WRITE with immediate. */
static void sroce_resp_recv_done(struct sroce_qp *qp, struct sk_buff *skb,
				 const struct sroce_bth *bth,
				 const struct sroce_opcode_info *info, u32 psn,
				 u32 byte_len, u32 opcode)
{
	struct ib_uverbs_wc wc = {
		.wr_id = qp->resp.rwqe.wr_id,
		.opcode = opcode,
		.byte_len = byte_len,
	};

	if (info->hdrs & BIT(SROCE_HDR_IMMDT)) {
		const struct sroce_immdt *imm =
			sroce_resp_hdr(skb, info, SROCE_HDR_IMMDT);

		wc.ex.imm_data = imm->imm;
		wc.wc_flags |= SROCE_UWC_WITH_IMM;
	}
	if (info->hdrs & BIT(SROCE_HDR_IETH)) {
		const struct sroce_ieth *ieth =
			sroce_resp_hdr(skb, info, SROCE_HDR_IETH);
		u32 rkey = be32_to_cpu(ieth->rkey);

		/* A refused invalidation is the peer's invalid request. */
		if (sroce_mr_invalidate(qp->sdev, rkey, qp->ibqp.pd, qp)) {
			sroce_resp_complete_error(qp, IB_WC_REM_INV_REQ_ERR);
			sroce_resp_fatal(qp, psn, SROCE_NAK_INVALID_REQ);
			return;
		}
		wc.ex.invalidate_rkey = rkey;
		wc.wc_flags |= SROCE_UWC_WITH_INV;
	}
	qp->resp.rwqe_valid = false;
	qp->resp.msn = (qp->resp.msn + 1) & SROCE_MSN_MASK;
	sroce_resp_complete(qp, &wc, bth->flags & SROCE_BTH_SE, NULL);
}

static void sroce_resp_send(struct sroce_qp *qp, struct sk_buff *skb,
			    const struct sroce_bth *bth,
			    const struct sroce_opcode_info *info, u32 psn,
			    u32 payload)
{
	u32 run, *crc;
	int err;

	if (sroce_resp_take_rwqe(qp, psn))
		return;
	if (payload > qp->resp.rwqe.length - qp->resp.recv_offset) {
		if (sroce_resp_uc_drop(qp, psn))
			return;
		sroce_resp_complete_error(qp, IB_WC_LOC_LEN_ERR);
		sroce_resp_fatal(qp, psn, SROCE_NAK_INVALID_REQ);
		return;
	}
	crc = sroce_rx_icrc_begin(skb, &run);
	err = sroce_sge_scatter_skb(qp->sdev, qp->ibqp.pd, qp->resp.rwqe.sge,
				    qp->resp.rwqe.num_sge,
				    qp->resp.recv_offset, skb,
				    sroce_resp_payload_off(info), payload, crc,
				    &qp->resp.miss);
	if (!sroce_resp_icrc_end(qp, skb, err, crc))
		return;
	if (err == -EAGAIN && sroce_resp_defer(qp, skb))
		return;
	if (err) {
		sroce_resp_complete_error(qp, err == -EMSGSIZE ?
					  IB_WC_LOC_LEN_ERR :
					  IB_WC_LOC_PROT_ERR);
		sroce_resp_fatal(qp, psn, SROCE_NAK_REM_OP_ERR);
		return;
	}
	qp->resp.recv_offset += payload;
	qp->resp.epsn = sroce_psn_add(psn, 1);

	if (info->flags & (SROCE_OPF_LAST | SROCE_OPF_ONLY)) {
		qp->resp.in_msg = 0;
		sroce_resp_recv_done(qp, skb, bth, info, psn,
				     qp->resp.recv_offset, IB_WC_RECV);
	} else {
		qp->resp.in_msg = SROCE_OPF_SEND;
	}
}

/* Check a WRITE's RETH and take a reference on its target region. */
static bool sroce_resp_write_start(struct sroce_qp *qp, struct sk_buff *skb,
				   const struct sroce_opcode_info *info,
				   u32 psn)
{
	const struct sroce_reth *reth = sroce_resp_hdr(skb, info,
						       SROCE_HDR_RETH);
	u64 va = be64_to_cpu(reth->va);
	u32 len = be32_to_cpu(reth->len);
	u32 rkey = be32_to_cpu(reth->rkey);
	struct sroce_mr *mr;

	if (!(qp->access_flags & IB_ACCESS_REMOTE_WRITE)) {
		sroce_resp_refuse(qp, psn, SROCE_NAK_INVALID_REQ);
		return false;
	}
	if (len) {
		mr = sroce_mr_get(qp->sdev, rkey, qp->ibqp.pd,
				  IB_ACCESS_REMOTE_WRITE, va, len, qp);
		if (!mr) {
			sroce_resp_refuse(qp, psn, SROCE_NAK_REM_ACCESS);
			return false;
		}
		sroce_mr_put(mr);
	}
	qp->resp.write_rkey = rkey;
	qp->resp.write_va = va;
	qp->resp.write_resid = len;
	qp->resp.write_len = len;
	return true;
}

/*
 * IBTA 1.5 atomic write: eight bytes, aligned, written in one store that
 * no concurrent atomic operation can split. Needs remote write rights.
 */
static void sroce_resp_atomic_write(struct sroce_qp *qp, struct sk_buff *skb,
				    const struct sroce_opcode_info *info,
				    u32 psn, u32 payload)
{
	const struct sroce_reth *reth = sroce_resp_hdr(skb, info,
						       SROCE_HDR_RETH);
	u64 va = be64_to_cpu(reth->va);
	struct sroce_atomic_op op = { .opcode = SROCE_OP_ATOMIC_WRITE };

	if (!(qp->access_flags & IB_ACCESS_REMOTE_WRITE) ||
	    payload != SROCE_ATOMIC_WRITE_LEN ||
	    be32_to_cpu(reth->len) != SROCE_ATOMIC_WRITE_LEN ||
	    (va & (SROCE_ATOMIC_WRITE_LEN - 1)) ||
	    skb_copy_bits(skb, sroce_resp_payload_off(info), &op.val,
			  sizeof(op.val))) {
		sroce_resp_fatal(qp, psn, SROCE_NAK_INVALID_REQ);
		return;
	}
	if (!sroce_resp_atomic_exec(qp, skb, psn, be32_to_cpu(reth->rkey),
				    IB_ACCESS_REMOTE_WRITE, va, &op))
		return;
	qp->resp.epsn = sroce_psn_add(psn, 1);
	qp->resp.msn = (qp->resp.msn + 1) & SROCE_MSN_MASK;
}

static void sroce_resp_write_end(struct sroce_qp *qp)
{
	qp->resp.in_msg = 0;
	qp->resp.write_resid = 0;
}

/*
 * Place a WRITE packet's payload. The rkey is looked up again for each
 * packet: a region deregistered or invalidated in the middle of a message
 * takes no more data, and nothing the peer does (or fails to do) keeps a
 * region from being deregistered.
 */
static int sroce_resp_write_data(struct sroce_qp *qp, struct sk_buff *skb,
				 const struct sroce_opcode_info *info,
				 u32 payload, u32 *crc)
{
	struct sroce_mr *mr;
	u64 mr_iova;
	int err;

	if (!payload)
		return 0;
	mr = sroce_rkey_get(qp, qp->resp.write_rkey, IB_ACCESS_REMOTE_WRITE,
			    qp->resp.write_va, payload, &mr_iova);
	if (!mr)
		return -EACCES;
	err = sroce_mr_copy_skb(mr, mr_iova, skb,
				sroce_resp_payload_off(info), payload, crc,
				&qp->resp.miss);
	sroce_mr_put(mr);
	return err;
}

static void sroce_resp_write(struct sroce_qp *qp, struct sk_buff *skb,
			     const struct sroce_bth *bth,
			     const struct sroce_opcode_info *info, u32 psn,
			     u32 payload)
{
	bool last = info->flags & (SROCE_OPF_LAST | SROCE_OPF_ONLY);
	u32 run, *crc;
	int err;

	if ((info->flags & (SROCE_OPF_FIRST | SROCE_OPF_ONLY)) &&
	    !sroce_resp_write_start(qp, skb, info, psn))
		return;
	if (payload > qp->resp.write_resid ||
	    (last && payload != qp->resp.write_resid)) {
		sroce_resp_write_end(qp);
		sroce_resp_refuse(qp, psn, SROCE_NAK_INVALID_REQ);
		return;
	}
	/* The receive WQE an immediate needs must exist before data lands. */
	if ((info->flags & SROCE_OPF_IMM) && sroce_resp_take_rwqe(qp, psn)) {
		if (info->flags & SROCE_OPF_ONLY)
			sroce_resp_write_end(qp);
		return;
	}
	crc = sroce_rx_icrc_begin(skb, &run);
	err = sroce_resp_write_data(qp, skb, info, payload, crc);
	if (!sroce_resp_icrc_end(qp, skb, err, crc))
		return;
	/* A first packet is checked again when retried after a fault. */
	if (err == -EAGAIN && sroce_resp_defer(qp, skb))
		return;
	if (err) {
		sroce_resp_write_end(qp);
		sroce_resp_refuse(qp, psn, err == -EACCES || err == -EAGAIN ?
				  SROCE_NAK_REM_ACCESS : SROCE_NAK_INVALID_REQ);
		return;
	}
	qp->resp.write_va += payload;
	qp->resp.write_resid -= payload;
	qp->resp.epsn = sroce_psn_add(psn, 1);

	if (!last) {
		qp->resp.in_msg = SROCE_OPF_WRITE;
		return;
	}
	sroce_resp_write_end(qp);
	if (info->flags & SROCE_OPF_IMM)
		sroce_resp_recv_done(qp, skb, bth, info, psn,
				     qp->resp.write_len,
				     IB_WC_RECV_RDMA_WITH_IMM);
	else
		qp->resp.msn = (qp->resp.msn + 1) & SROCE_MSN_MASK;
}

/*
 * UC: a gap abandons the message in progress (IBTA 9.7.5.1.7), and so
 * does a FIRST or ONLY, which always starts a new message; a MIDDLE or
 * LAST of no message in progress is dropped. The expected PSN moves on
 * only when a packet is placed, so that one waiting for a page fault is
 * still in sequence when it is handled again.
 */
static bool sroce_resp_uc_psn(struct sroce_qp *qp,
			      const struct sroce_opcode_info *info, u32 psn)
{
	bool starts = info->flags & (SROCE_OPF_FIRST | SROCE_OPF_ONLY);

	if (qp->resp.in_msg && (psn != qp->resp.epsn || starts)) {
		sroce_qp_rx_drop(qp, SROCE_STAT_RX_UC_DROPPED, psn);
		sroce_resp_uc_abandon(qp);
	}
	if (!sroce_resp_opcode_ok(qp, info)) {
		sroce_qp_rx_drop(qp, SROCE_STAT_RX_UC_DROPPED, psn);
		sroce_resp_uc_abandon(qp);
		return false;
	}
	return true;
}

static bool sroce_resp_rc_psn(struct sroce_qp *qp, struct sk_buff *skb,
			      const struct sroce_bth *bth,
			      const struct sroce_opcode_info *info, u32 psn)
{
	enum sroce_psn_class class = sroce_psn_classify(psn, qp->resp.epsn);

	if (!sroce_psn_in_window(psn, qp->resp.epsn)) {
		sroce_qp_rx_drop(qp, SROCE_STAT_RX_PSN_OUT_OF_WINDOW, psn);
		return false;
	}
	if (class == SROCE_PSN_AHEAD) {
		sroce_qp_rx_drop(qp, SROCE_STAT_RX_OUT_OF_SEQUENCE, psn);
		if (!qp->resp.nak_sent) {
			qp->resp.nak_sent = true;
			sroce_stat_inc(qp->sdev, SROCE_STAT_SEQ_NAK_SENT);
			sroce_resp_send_ack(qp, qp->resp.epsn, SROCE_AETH_NAK |
					    SROCE_NAK_PSN_SEQ_ERR);
		}
		return false;
	}
	if (class == SROCE_PSN_DUPLICATE) {
		sroce_resp_duplicate(qp, skb, bth, info, psn);
		return false;
	}
	qp->resp.nak_sent = false;
	if (!sroce_resp_opcode_ok(qp, info)) {
		sroce_resp_fatal(qp, psn, SROCE_NAK_INVALID_REQ);
		return false;
	}
	return true;
}

static void sroce_resp_ud(struct sroce_qp *qp, struct sk_buff *skb,
			  const struct sroce_bth *bth,
			  const struct sroce_opcode_info *info, u32 payload)
{
	const struct sroce_deth *deth = sroce_resp_hdr(skb, info,
						       SROCE_HDR_DETH);
	u32 psn = sroce_bth_psn(bth);
	u8 grh[SROCE_GRH_LEN] = {};
	struct ib_uverbs_wc wc = {};
	u8 sl;
	int err;

	if (be32_to_cpu(deth->qkey) != qp->qkey) {
		sroce_qp_rx_drop(qp, SROCE_STAT_RX_BAD_QKEY, psn);
		return;
	}
	/* A WQE kept from a packet that waited for a page fault. */
	if (!qp->resp.rwqe_valid) {
		if (sroce_qp_fetch_rwqe(qp, &qp->resp.rwqe)) {
			sroce_qp_rx_drop(qp, SROCE_STAT_RX_UC_DROPPED, psn);
			return;
		}
		qp->resp.rwqe_valid = true;
	}
	wc.wr_id = qp->resp.rwqe.wr_id;
	if (payload + SROCE_GRH_LEN > qp->resp.rwqe.length) {
		qp->resp.rwqe_valid = false;
		wc.status = IB_WC_LOC_LEN_ERR;
		sroce_resp_complete(qp, &wc, true, NULL);
		return;
	}

	/* An IPv4 header sits in the last 20 bytes of the GRH image. */
	if (ip_hdr(skb)->version == 4) {
		memcpy(grh + SROCE_GRH_LEN - sizeof(struct iphdr),
		       skb_network_header(skb), sizeof(struct iphdr));
		sl = SROCE_WC_SL_IPV4;
	} else {
		memcpy(grh, skb_network_header(skb), sizeof(struct ipv6hdr));
		sl = skb->protocol == htons(ETH_P_IBOE) ? SROCE_WC_SL_GRH :
							  SROCE_WC_SL_IPV6;
	}
	err = sroce_sge_scatter(qp->sdev, qp->ibqp.pd, qp->resp.rwqe.sge,
				qp->resp.rwqe.num_sge, 0, grh, sizeof(grh),
				&qp->resp.miss);
	if (!err)
		err = sroce_sge_scatter_skb(qp->sdev, qp->ibqp.pd,
					    qp->resp.rwqe.sge,
					    qp->resp.rwqe.num_sge,
					    SROCE_GRH_LEN, skb,
					    sroce_resp_payload_off(info),
					    payload, NULL, &qp->resp.miss);
	if (err == -EAGAIN && sroce_resp_defer(qp, skb))
		return;
	qp->resp.rwqe_valid = false;
	if (err) {
		wc.status = IB_WC_LOC_PROT_ERR;
		sroce_resp_complete(qp, &wc, true, NULL);
		return;
	}

	wc.opcode = IB_WC_RECV;
	wc.byte_len = payload + SROCE_GRH_LEN;
	wc.src_qp = sroce_deth_sqpn(deth);
	wc.wc_flags = SROCE_UWC_GRH;
	wc.sl = sl;
	if (info->hdrs & BIT(SROCE_HDR_IMMDT)) {
		const struct sroce_immdt *imm =
			sroce_resp_hdr(skb, info, SROCE_HDR_IMMDT);

		wc.ex.imm_data = imm->imm;
		wc.wc_flags |= SROCE_UWC_WITH_IMM;
	}
	sroce_resp_complete(qp, &wc, bth->flags & SROCE_BTH_SE, skb);
}

static bool sroce_resp_state_ok(struct sroce_qp *qp)
{
	switch (READ_ONCE(qp->state)) {
	case IB_QPS_RTR:
	case IB_QPS_RTS:
	case IB_QPS_SQD:
	case IB_QPS_SQE:
		return !qp->resp.fatal;
	default:
		return false;
	}
}

/*
 * Whether a request goes straight to the placement of its payload: the
 * expected middle or last packet of the RC or UC message in progress, of
 * a size that message takes. Only such a packet may be placed before its
 * ICRC is checked (net.c), the copy computing it; this must imply every
 * check sroce_resp_handle(), sroce_resp_send() and sroce_resp_write() make
 * before they place, since each of those acts on the packet. Fault
 * injection's NAKs are the exception: they answer the PSN, not the packet.
 */
static bool sroce_resp_continues(struct sroce_qp *qp,
				 const struct sroce_opcode_info *info, u32 psn,
				 u32 payload)
{
	bool last = info->flags & SROCE_OPF_LAST;

	if (qp->type == IB_QPT_UD || !sroce_resp_state_ok(qp) ||
	    !(info->flags & (SROCE_OPF_MIDDLE | SROCE_OPF_LAST)) ||
	    psn != qp->resp.epsn || !sroce_resp_opcode_ok(qp, info) ||
	    !sroce_resp_size_ok(qp, info, payload))
		return false;
	if (info->flags & SROCE_OPF_SEND)
		return qp->resp.rwqe_valid &&
		       payload <= qp->resp.rwqe.length - qp->resp.recv_offset;
	if (!(info->flags & SROCE_OPF_WRITE))
		return false;
	return payload <= qp->resp.write_resid &&
	       (!last || payload == qp->resp.write_resid) &&
	       (!(info->flags & SROCE_OPF_IMM) || qp->resp.rwqe_valid);
}

static void sroce_resp_handle(struct sroce_qp *qp, struct sk_buff *skb,
			      const struct sroce_bth *bth,
			      const struct sroce_opcode_info *info, u32 payload)
{
	u32 psn = sroce_bth_psn(bth);

	lockdep_assert_held(&qp->resp.lock);
	if (!sroce_resp_continues(qp, info, psn, payload) &&
	    !sroce_rx_icrc_end(qp->sdev, skb, NULL))
		return;
	if (!sroce_resp_state_ok(qp)) {
		sroce_qp_rx_drop(qp, SROCE_STAT_RX_BAD_QP_STATE, psn);
		return;
	}
	if (qp->type == IB_QPT_UD) {
		sroce_resp_ud(qp, skb, bth, info, payload);
		return;
	}
	if (qp->type == IB_QPT_UC ? !sroce_resp_uc_psn(qp, info, psn) :
				    !sroce_resp_rc_psn(qp, skb, bth, info, psn))
		return;
	if (sroce_finj_resp_nak(qp, info, psn))
		return;
	if (!sroce_resp_size_ok(qp, info, payload)) {
		sroce_resp_refuse(qp, psn, SROCE_NAK_INVALID_REQ);
		return;
	}

	if (info->flags & SROCE_OPF_SEND)
		sroce_resp_send(qp, skb, bth, info, psn, payload);
	else if (info->flags & SROCE_OPF_WRITE)
		sroce_resp_write(qp, skb, bth, info, psn, payload);
	else if (info->flags & SROCE_OPF_READ)
		sroce_resp_read(qp, skb, info, psn);
	else if (info->flags & SROCE_OPF_ATOMIC)
		sroce_resp_atomic(qp, skb, bth, info, psn);
	else if (info->flags & SROCE_OPF_ATOMIC_WRITE)
		sroce_resp_atomic_write(qp, skb, info, psn, payload);
	else if (info->flags & SROCE_OPF_FLUSH)
		sroce_resp_flush(qp, skb, info, psn);
	else
		sroce_resp_refuse(qp, psn, SROCE_NAK_INVALID_REQ);

	/* ACKs are coalesced: the requester asks for them. */
	if (qp->type == IB_QPT_RC && sroce_bth_ackreq(bth) && !qp->resp.fatal &&
	    (info->flags & (SROCE_OPF_SEND | SROCE_OPF_WRITE |
			    SROCE_OPF_ATOMIC_WRITE)) &&
	    qp->resp.epsn == sroce_psn_add(psn, 1))
		sroce_resp_ack_later(qp, psn);
}

/**
 * sroce_resp_recv() - handle a request packet for a QP
 * @qp: the QP
 * @skb: the packet, validated; data starts at the UDP header
 * @bth: its BTH
 * @info: its opcode
 * @payload: payload bytes
 *
 * Context: softirq.
 */
void sroce_resp_recv(struct sroce_qp *qp, struct sk_buff *skb,
		     const struct sroce_bth *bth,
		     const struct sroce_opcode_info *info, u32 payload)
{
	spin_lock(&qp->resp.lock);
	if (qp->resp.busy && sroce_resp_rereads(qp, skb, bth, info))
		sroce_resp_abort_read(qp);
	if (qp->resp.busy) {
		if (skb_queue_len(&qp->resp.backlog) < SROCE_RESP_BACKLOG)
			skb_queue_tail(&qp->resp.backlog, skb_get(skb));
		else if (sroce_rx_icrc_end(qp->sdev, skb, NULL))
			sroce_qp_rx_drop(qp, SROCE_STAT_RX_BACKLOG_FULL,
					 sroce_bth_psn(bth));
	} else {
		sroce_resp_handle(qp, skb, bth, info, payload);
	}
	spin_unlock(&qp->resp.lock);
}

/**
 * sroce_resp_discard_backlog() - drop the requests held back, counted
 * @qp: the QP; resp.lock held
 *
 * The QP is reset or destroyed, or the READ they waited behind starts
 * again (its requester then sends them again): each is a drop of its own,
 * counted and traced as rx_backlog_discarded.
 */
void sroce_resp_discard_backlog(struct sroce_qp *qp)
{
	struct sk_buff *skb;

	while ((skb = skb_dequeue(&qp->resp.backlog))) {
		const struct sroce_bth *bth = (void *)skb->data +
					      sizeof(struct udphdr);

		if (sroce_rx_icrc_end(qp->sdev, skb, NULL))
			sroce_qp_rx_drop(qp, SROCE_STAT_RX_BACKLOG_DISCARDED,
					 sroce_bth_psn(bth));
		kfree_skb(skb);
	}
}

/* Handle requests held back while READ responses were being sent. */
static void sroce_resp_drain_backlog(struct sroce_qp *qp)
{
	struct sk_buff *skb;

	while (!qp->resp.busy && (skb = skb_dequeue(&qp->resp.backlog))) {
		const struct sroce_bth *bth = (void *)skb->data +
					      sizeof(struct udphdr);
		const struct sroce_opcode_info *info =
			sroce_opcode_get(bth->opcode);

		sroce_resp_handle(qp, skb, bth, info,
				  sroce_skb_payload(skb, bth, info));
		kfree_skb(skb);
	}
}

/*
 * Fault in the pages a request found missing; the caller retries it.
 * Return: whether a fault failed.
 */
static bool sroce_resp_fault(struct sroce_qp *qp)
{
	struct sroce_odp_miss miss;

	spin_lock_bh(&qp->resp.lock);
	miss = qp->resp.miss;
	qp->resp.miss.mr = NULL;
	spin_unlock_bh(&qp->resp.lock);
	return miss.mr && sroce_odp_fault(&miss);
}

/**
 * sroce_resp_work() - send READ responses beyond the softirq budget, fault
 * in pages of on-demand regions, and move a failed QP to the error state
 * @work: the QP's resp.work
 */
void sroce_resp_work(struct work_struct *work)
{
	struct sroce_qp *qp = container_of(work, struct sroce_qp, resp.work);
	bool fatal, again, nofault;

	nofault = sroce_resp_fault(qp);
	spin_lock_bh(&qp->resp.lock);
	/* Only the retry below may take a missing page for an error. */
	qp->resp.nofault = nofault;
	if (qp->resp.busy && qp->resp.active_res && sroce_resp_state_ok(qp)) {
		if (sroce_resp_read_resume(qp)) {
			qp->resp.busy = false;
			qp->resp.active_res = NULL;
			sroce_resp_drain_backlog(qp);
		}
	} else if (qp->resp.busy && !qp->resp.active_res && !qp->resp.miss.mr) {
		/* A request waited for a page fault: handle it again. */
		qp->resp.busy = false;
		sroce_resp_drain_backlog(qp);
	}
	qp->resp.nofault = false;
	again = qp->resp.busy && !qp->resp.throttled && sroce_resp_state_ok(qp);
	fatal = qp->resp.fatal && READ_ONCE(qp->state) != IB_QPS_ERR &&
		READ_ONCE(qp->state) != IB_QPS_RESET;
	if (again && qp->resp.congested) {
		qp->resp.congested = false;
		spin_unlock_bh(&qp->resp.lock);
		/* Let the transmit queue drain before the next burst. */
		usleep_range(200, 400);
	} else {
		spin_unlock_bh(&qp->resp.lock);
	}
	if (again)
		sroce_resp_schedule(qp);

	if (fatal)
		sroce_qp_error(qp);
}
