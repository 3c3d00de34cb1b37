/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Queue pairs (qp.c): the QP object, its state machine, the doorbell and
 * the receive WQEs.
 */
#ifndef _SROCE_QP_H
#define _SROCE_QP_H

#include <linux/completion.h>
#include <linux/mutex.h>
#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <net/dst_cache.h>
#include <rdma/ib_verbs.h>

#include "ah.h"
#include "cc.h"
#include "comp.h"
#include "req.h"
#include "resp.h"
#include "sroce.h"
#include "txflow.h"

struct sroce_cq;
struct sroce_pd;
struct sroce_rwqe;

/**
 * struct sroce_qp - a queue pair
 * @ibqp: the RDMA core's QP
 * @sdev: the device
 * @ref: lookups and timers in flight, plus one for the table
 * @released: completed when @ref reaches zero
 * @state: the IB state; written under both req.lock and resp.lock
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
 * @req: the send queue and the requester's state, see req.h
 * @comp: the completer's state, see comp.h
 * @rto: the retransmission timeout's state, see comp.h
 * @resp: the receive queue and the responder's state, see resp.h
 * @tx: the QP's packets in the queues below, see txflow.h
 * @cc: ECN congestion control, see cc.h
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

	struct sroce_req	req;
	struct sroce_comp	comp;
	struct sroce_rto	rto;
	struct sroce_resp	resp;
	struct sroce_txflow	tx;
	struct sroce_cc		cc;
};

static inline struct sroce_qp *to_sqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct sroce_qp, ibqp);
}

/*
 * Whether the requester sends: in RTS, and in SQD, where it finishes the
 * messages it began (sroce_req_may_start() keeps new ones back) and sends
 * again what a loss or an RNR NAK asks for.
 */
static inline bool sroce_qp_req_active(const struct sroce_qp *qp)
{
	enum ib_qp_state state = READ_ONCE(qp->state);

	return state == IB_QPS_RTS || state == IB_QPS_SQD;
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

extern struct workqueue_struct *sroce_qp_wq;
int sroce_qp_wq_init(void);
void sroce_qp_wq_exit(void);

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
