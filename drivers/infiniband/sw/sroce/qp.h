/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Queue pairs (qp.c): the QP object, its state machine, the doorbell and
 * the receive WQEs.
 */
#ifndef _SROCE_QP_H
#define _SROCE_QP_H

#include <linux/completion.h>
#include <linux/ktime.h>
#include <linux/mutex.h>
#include <linux/refcount.h>
#include <linux/skbuff.h>
#include <linux/spinlock.h>
#include <linux/timer.h>
#include <linux/workqueue.h>
#include <net/dst_cache.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_user_rxe.h>

#include <sroce/rto.h>
#include "ah.h"
#include "odp.h"
#include "queue.h"
#include "sroce.h"
#include "wqe.h"

struct sroce_cq;
struct sroce_pd;
struct sroce_rd_res;
struct sroce_srq;

/**
 * struct sroce_qp - a queue pair
 * @ibqp: the RDMA core's QP
 * @sdev: the device
 * @ref: lookups and timers in flight, plus one for the table
 * @released: completed when @ref reaches zero
 * @state: the IB state; written under both @sq_lock and @rq_lock
 * @type: IB_QPT_RC, IB_QPT_UC or IB_QPT_UD (the GSI QP is a UD QP)
 * @is_user: the rings are mapped by a process
 * @kpost_lock: serializes a kernel consumer's posts into the rings, which
 *	it may do from any context
 * @sig_all: every send WQE completes
 * @pd: the protection domain
 * @scq: send CQ
 * @rcq: receive CQ
 * @attr_lock: serializes modify_qp, query_qp and destroy
 * @qkey: UD Q_Key
 * @access_flags: remote operations the responder allows (IB_ACCESS_REMOTE_*)
 * @dest_qpn: RC/UC remote QP number
 * @mtu: path MTU in bytes
 * @av: RC/UC path; set on RTR
 * @src_port: UDP source port, chosen per QP for ECMP entropy
 * @dst_cache: route cache for @av
 * @timeout: local ACK timeout, IB encoding
 * @retry_cnt: transport retries allowed
 * @rnr_retry: RNR retries allowed (7: forever)
 * @min_rnr_timer: the RNR NAK timer value sent to the peer
 * @max_rd_atomic: outstanding READ/atomic requests allowed to send
 * @max_dest_rd_atomic: responder resources for the peer's READs/atomics
 * @sq: the send ring
 * @swqe: private copies of the send WQEs, one per ring slot
 * @max_send_sge: SGEs per send WQE
 * @max_inline: inline bytes per send WQE
 * @sq_lock: protects the requester and completer state below
 * @sq_tail: oldest WQE not retired, the ring's consumer index
 * @sq_next: next WQE the requester starts or continues
 * @sq_seen: WQEs before this index have been copied from the ring
 * @req_psn: PSN of the next request packet
 * @sent_psn: the PSN after the highest ever sent; @req_psn is behind it
 *	after a go-back
 * @una_psn: oldest unacknowledged PSN
 * @cwnd: the current window, see SROCE_WINDOW_MAX
 * @rd_atomic_out: READ/atomic requests outstanding
 * @retries: transport retries left
 * @backoff: retransmission timeouts in a row without progress
 * @rto_deferred: timer expiries in a row put off by sroce_rto_defer()
 * @rtt_timing: a round trip is being timed, that of @rtt_psn
 * @rtt_psn: the request PSN being timed, sent once only
 * @rtt_start: when it was sent
 * @rtt: the round-trip estimate, see rto.c
 * @rnr_retries: RNR retries left
 * @retrans_timer: local ACK timeout
 * @rnr_timer: RNR back-off
 * @rnr_wait: sending is paused by an RNR NAK
 * @sq_fatal: a WQE failed; the QP moves to the error state from process
 *	context
 * @read_rewound: a READ or atomic response was found missing and the
 *	request re-issued; later responses (sent before the responder saw the
 *	re-request) are ignored instead of re-issuing it again, until progress
 * @req_miss: pages of an on-demand region the requester or completer
 *	found unmapped; @req_work faults them in
 * @req_miss_rewind: a response was dropped for want of pages: ask again
 *	once @req_miss is mapped
 * @req_miss_skb: when @req_miss is a response's, the response, handled
 *	again once the pages are mapped; its WQE fails if the fault fails
 * @req_miss_psn: the PSN of @req_miss_skb
 * @req_nofault: the last fault failed: a missing page is an access error
 * @pkts_since_ackreq: packets sent since the last with AckReq
 * @srq: the shared receive queue the QP takes receive WQEs from, or NULL
 * @rq: the receive ring (none with an SRQ)
 * @max_recv_sge: SGEs per receive WQE
 * @rq_lock: protects the responder state below
 * @rq_tail: private consumer index of @rq
 * @epsn: expected PSN of the next request
 * @msn: message sequence number
 * @rwqe: the receive WQE being filled
 * @rwqe_valid: @rwqe holds a WQE
 * @recv_offset: bytes placed into @rwqe so far
 * @resp_in: the kind of multi-packet message in progress (SROCE_OPF_SEND,
 *	SROCE_OPF_WRITE or 0)
 * @nak_sent: a sequence error NAK was sent for @epsn
 * @resp_busy: READ responses are being sent from @resp_work; requests wait
 *	in @resp_backlog meanwhile, to keep responses in PSN order
 * @resp_congested: the transmit queue refused a READ response; the work
 *	item pauses before going on
 * @resp_fatal: the responder failed; the QP moves to the error state from
 *	@resp_work
 * @resp_backlog: requests received while @resp_busy
 * @resp_miss: pages of an on-demand region a request found unmapped; the
 *	request waits at the head of @resp_backlog, with @resp_busy set,
 *	while @resp_work faults them in
 * @resp_nofault: the last fault failed: a missing page is an access error
 * @active_res: the READ whose responses @resp_work sends
 * @write_mr: the region an RDMA WRITE in progress targets; a reference
 * @write_va: where the next WRITE payload goes
 * @write_resid: WRITE bytes still expected
 * @write_len: the WRITE's whole length
 * @rd_res: responder resources (@max_dest_rd_atomic of them)
 * @rd_res_head: next resource to use
 * @resp_work: continues READ responses beyond the softirq budget
 * @req_work: restarts the requester from a timer or a received ACK
 * @tx_inflight: packets of this QP handed to the IP layer and not yet freed
 *	(sent by the NIC, or dropped)
 * @tx_waiters: SROCE_TXW_* bits: who waits for @tx_inflight, or the
 *	device's, to go down
 * @tx_wait_entry: entry in the device's list of QPs waiting to send; empty
 *	when not on it
 * @tx_wait_closed: the QP is being destroyed and may not join that list
 *	again; under the device's tx_wait_lock
 * @resp_throttled: @resp_work waits for @tx_inflight to go down
 * @counters: per-QP error counts for diagnostics
 */
struct sroce_qp {
	struct ib_qp		ibqp;
	struct sroce_dev	*sdev;
	refcount_t		ref;
	struct completion	released;
	enum ib_qp_state	state;
	enum ib_qp_type		type;
	bool			is_user;
	bool			sig_all;
	spinlock_t		kpost_lock;	/* see above */
	struct sroce_pd		*pd;
	struct sroce_cq		*scq;
	struct sroce_cq		*rcq;

	struct mutex		attr_lock;	/* see above */
	u32			qkey;
	int			access_flags;
	u32			dest_qpn;
	u32			mtu;
	struct sroce_av		av;
	u16			src_port;
	struct dst_cache	dst_cache;
	u8			timeout;
	u8			retry_cnt;
	u8			rnr_retry;
	u8			min_rnr_timer;
	u8			max_rd_atomic;
	u8			max_dest_rd_atomic;

	struct sroce_queue	sq;
	struct sroce_swqe	*swqe;
	u32			max_send_sge;
	u32			max_inline;
	spinlock_t		sq_lock;	/* see above */
	u32			sq_tail;
	u32			sq_next;
	u32			sq_seen;
	u32			req_psn;
	u32			sent_psn;
	u32			una_psn;
	u32			cwnd;
	u32			rd_atomic_out;
	u8			retries;
	u8			rnr_retries;
	u8			backoff;
	u8			rto_deferred;
	bool			rtt_timing;
	u32			rtt_psn;
	ktime_t			rtt_start;
	struct sroce_rtt	rtt;
	struct timer_list	retrans_timer;
	struct timer_list	rnr_timer;
	bool			rnr_wait;
	bool			sq_fatal;
	bool			read_rewound;
	struct sroce_odp_miss	req_miss;
	bool			req_miss_rewind;
	u32			req_miss_psn;
	struct sk_buff		*req_miss_skb;
	bool			req_nofault;
	u32			pkts_since_ackreq;

	struct sroce_srq	*srq;
	struct sroce_queue	rq;
	u32			max_recv_sge;
	spinlock_t		rq_lock;	/* see above */
	u32			rq_tail;
	u32			epsn;
	u32			msn;
	struct sroce_rwqe	rwqe;
	bool			rwqe_valid;
	u32			recv_offset;
	u32			resp_in;
	bool			nak_sent;
	bool			resp_busy;
	bool			resp_congested;
	bool			resp_fatal;
	struct sk_buff_head	resp_backlog;
	struct sroce_odp_miss	resp_miss;
	bool			resp_nofault;
	struct sroce_rd_res	*active_res;
	struct sroce_mr		*write_mr;
	u64			write_va;
	u32			write_resid;
	u32			write_len;
	struct sroce_rd_res	*rd_res;
	u32			rd_res_head;

	struct work_struct	resp_work;
	struct work_struct	req_work;
	atomic_t		tx_inflight;
	unsigned long		tx_waiters;
	struct list_head	tx_wait_entry;
	bool			tx_wait_closed;
	bool			resp_throttled;
};

static inline struct sroce_qp *to_sqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct sroce_qp, ibqp);
}

static inline bool sroce_qp_get(struct sroce_qp *qp)
{
	return refcount_inc_not_zero(&qp->ref);
}

static inline void sroce_qp_put(struct sroce_qp *qp)
{
	if (refcount_dec_and_test(&qp->ref))
		complete(&qp->released);
}

/* The verbs, for verbs.c's operations table. */
int sroce_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata);
int sroce_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata);
int sroce_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init);
int sroce_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);

struct sroce_qp *sroce_qp_lookup(struct sroce_dev *sdev, u32 qpn);
void sroce_qp_error(struct sroce_qp *qp);
void sroce_qp_flush_sq(struct sroce_qp *qp);
void sroce_qp_flush_rq(struct sroce_qp *qp);
int sroce_qp_fetch_rwqe(struct sroce_qp *qp, struct sroce_rwqe *rwqe);
int sroce_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr);
int sroce_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr);

#endif /* _SROCE_QP_H */
