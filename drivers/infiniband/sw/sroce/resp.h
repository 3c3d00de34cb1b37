/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The responder: validation and placement of incoming requests, ACKs and
 * NAKs (resp.c); READ responses, atomics and duplicates (resp_read.c).
 */
#ifndef _SROCE_RESP_H
#define _SROCE_RESP_H

#include <linux/llist.h>
#include <linux/skbuff.h>
#include <linux/spinlock.h>
#include <linux/timer.h>
#include <linux/types.h>
#include <linux/udp.h>
#include <linux/workqueue.h>

#include <sroce/burst.h>
#include <sroce/wire.h>
#include "odp.h"
#include "queue.h"
#include "wqe.h"

struct sroce_atomic_op;
struct sroce_mr;
struct sroce_qp;
struct sroce_srq;

/* What a responder resource keeps. */
enum sroce_rd_res_kind {
	SROCE_RES_NONE,
	SROCE_RES_READ,
	SROCE_RES_FLUSH,
	SROCE_RES_ATOMIC,
};

/**
 * struct sroce_rd_res - a responder resource: a READ, FLUSH or atomic
 * request carried out, kept so that a duplicate of it can be answered
 * @kind: enum sroce_rd_res_kind
 * @psn: PSN of the request (READ: of the first response)
 * @last_psn: PSN of the last response
 * @rkey: the request's rkey
 * @req_va: the request's address
 * @req_len: READ: the request's length
 * @atomic_orig: the value returned for an atomic
 * @replay: the READ responses answer a duplicate request
 * @va: READ: the address of the next byte to send
 * @resid: READ: bytes left to send
 * @next_psn: READ: PSN of the next response
 * @length: READ: the length of the request being answered
 *
 * No reference on a region is kept: each READ response looks the rkey up
 * again, so that a region can be deregistered whatever the peer does.
 */
struct sroce_rd_res {
	u8			kind;
	bool			replay;
	u32			psn;
	u32			last_psn;
	u32			rkey;
	u64			req_va;
	u32			req_len;
	u64			atomic_orig;
	u64			va;
	u32			resid;
	u32			next_psn;
	u32			length;
};

/**
 * struct sroce_resp - the receive queue of a QP and the responder's state
 * @srq: the shared receive queue the QP takes receive WQEs from, or NULL
 * @rq: the receive ring (none with an SRQ)
 * @max_sge: SGEs per receive WQE
 * @lock: protects every field below it; the three fields above it are set
 *	when the QP is created and do not change
 * @tail: private consumer index of @rq
 * @epsn: expected PSN of the next request
 * @msn: message sequence number
 * @rwqe: the receive WQE being filled
 * @rwqe_valid: @rwqe holds a WQE
 * @recv_offset: bytes placed into @rwqe so far
 * @in_msg: the kind of multi-packet message in progress (SROCE_OPF_SEND,
 *	SROCE_OPF_WRITE or 0)
 * @nak_sent: a sequence error NAK was sent for @epsn
 * @busy: READ responses are being sent from @work; requests wait in
 *	@backlog meanwhile, to keep responses in PSN order
 * @congested: the transmit queue refused a READ response; the work item
 *	pauses before going on
 * @fatal: the responder failed; the QP moves to the error state from @work
 * @backlog: requests received while @busy
 * @miss: pages of an on-demand region a request found unmapped; the
 *	request waits at the head of @backlog, with @busy set, while @work
 *	faults them in
 * @nofault: the last fault failed: a missing page is an access error
 * @active_res: the READ whose responses @work sends
 * @write_rkey: the rkey of the RDMA WRITE in progress, looked up again for
 *	each packet: no reference on the region is held between packets
 * @write_va: where the next WRITE payload goes
 * @write_resid: WRITE bytes still expected
 * @write_len: the WRITE's whole length
 * @rd_res: responder resources (max_dest_rd_atomic of them)
 * @rd_res_head: next resource to use
 * @work: continues READ responses beyond the softirq budget
 * @throttled: @work waits for the QP's packets in flight to go down
 * @ack_due: an ACK is owed, for @ack_psn and @ack_msn; it is sent at the
 *	end of the receive batch, or before any other response (ack.c)
 * @ack_psn: the PSN the owed ACK acknowledges
 * @ack_msn: the MSN it carries
 * @ack_queued: the QP is on a CPU's ACK batch, through @ack_node
 * @ack_node: the link on that batch
 * @ack_streak: how many ACKs in a row, sent at once, the QP's requester
 *	answered by sending within ack_hold_us; from SROCE_ACK_STREAK on, the
 *	batch holds the owed ACK for the requester's next packets (ack.c)
 * @ack_held: the owed ACK waits for the requester, at most until
 *	@ack_timer fires
 * @ack_sent_ns: when the responder sent the last owed ACK at once that the
 *	requester has not answered yet; 0 when there is none
 * @ack_timer: ends a hold
 * @batch_burst: READ responses and atomic ACKs, decided in the receive
 *	batch, that wait for its end to leave in one burst with those of the
 *	batch's later requests; the QP is on a CPU's batch meanwhile. Every
 *	other response pushes them out first (sroce_resp_tx_pending()), so
 *	that responses keep the order in which they were decided.
 *
 * The responder runs in the receive softirq and in @work; qp.c fetches
 * receive WQEs and flushes them under @lock too.
 */
struct sroce_resp {
	struct sroce_srq	*srq;
	struct sroce_queue	rq;
	u32			max_sge;
	spinlock_t		lock;	/* see above */
	u32			tail;
	u32			epsn;
	u32			msn;
	struct sroce_rwqe	rwqe;
	bool			rwqe_valid;
	u32			recv_offset;
	u32			in_msg;
	bool			nak_sent;
	bool			busy;
	bool			congested;
	bool			fatal;
	struct sk_buff_head	backlog;
	struct sroce_odp_miss	miss;
	bool			nofault;
	struct sroce_rd_res	*active_res;
	u32			write_rkey;
	u64			write_va;
	u32			write_resid;
	u32			write_len;
	struct sroce_rd_res	*rd_res;
	u32			rd_res_head;
	struct work_struct	work;
	bool			throttled;
	bool			ack_due;
	bool			ack_queued;
	u32			ack_psn;
	u32			ack_msn;
	struct llist_node	ack_node;
	u8			ack_streak;
	bool			ack_held;
	u64			ack_sent_ns;
	struct timer_list	ack_timer;
	struct sroce_burst	batch_burst;
};

void sroce_resp_recv(struct sroce_qp *qp, struct sk_buff *skb,
		     const struct sroce_bth *bth,
		     const struct sroce_opcode_info *info, u32 payload);
void sroce_resp_work(struct work_struct *work);
void sroce_resp_schedule(struct sroce_qp *qp);
void sroce_resp_release(struct sroce_qp *qp);
void sroce_resp_discard_backlog(struct sroce_qp *qp);

/* Between resp.c and the READ and atomic side in resp_read.c. */
static inline const void *sroce_resp_hdr(const struct sk_buff *skb,
					 const struct sroce_opcode_info *info,
					 enum sroce_hdr hdr)
{
	return skb->data + sizeof(struct udphdr) + info->offset[hdr];
}

void sroce_resp_ack(struct sroce_qp *qp, u32 psn);
void sroce_resp_ack_flush(struct sroce_qp *qp);
void sroce_resp_ack_join(struct sroce_qp *qp, struct sroce_burst *burst);
struct sroce_burst *sroce_resp_batch_burst(struct sroce_qp *qp);
void sroce_resp_tx_pending(struct sroce_qp *qp);
void sroce_resp_send_ack(struct sroce_qp *qp, u32 psn, u8 syndrome);
void sroce_resp_fatal(struct sroce_qp *qp, u32 psn, u8 nak);
bool sroce_resp_defer(struct sroce_qp *qp, struct sk_buff *skb);
void sroce_rd_res_clear(struct sroce_rd_res *res);
void sroce_resp_read(struct sroce_qp *qp, struct sk_buff *skb,
		     const struct sroce_opcode_info *info, u32 psn);
void sroce_resp_flush(struct sroce_qp *qp, struct sk_buff *skb,
		      const struct sroce_opcode_info *info, u32 psn);
bool sroce_resp_atomic_exec(struct sroce_qp *qp, struct sk_buff *skb, u32 psn,
			    u32 rkey, int access, u64 va,
			    struct sroce_atomic_op *op);
void sroce_resp_atomic(struct sroce_qp *qp, struct sk_buff *skb,
		       const struct sroce_bth *bth,
		       const struct sroce_opcode_info *info, u32 psn);
void sroce_resp_duplicate(struct sroce_qp *qp, struct sk_buff *skb,
			  const struct sroce_bth *bth,
			  const struct sroce_opcode_info *info, u32 psn);
bool sroce_resp_rereads(struct sroce_qp *qp, struct sk_buff *skb,
			const struct sroce_bth *bth,
			const struct sroce_opcode_info *info);
void sroce_resp_abort_read(struct sroce_qp *qp);
bool sroce_resp_read_resume(struct sroce_qp *qp);

#endif /* _SROCE_RESP_H */
