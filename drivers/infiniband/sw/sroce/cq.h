/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Completion queues (cq.c).
 */
#ifndef _SROCE_CQ_H
#define _SROCE_CQ_H

#include <linux/spinlock.h>
#include <rdma/ib_verbs.h>

#include "compat.h"
#include "queue.h"

struct sk_buff;

/*
 * The wc_flags of the CQEs user space reads: libibverbs' values, which are
 * not all the kernel's IB_WC_* ones.
 */
#define SROCE_UWC_GRH		BIT(0)	/* IBV_WC_GRH */
#define SROCE_UWC_WITH_IMM	BIT(1)	/* IBV_WC_WITH_IMM */
#define SROCE_UWC_WITH_INV	BIT(3)	/* IBV_WC_WITH_INV */

/**
 * struct sroce_cq - a completion queue
 * @ibcq: the RDMA core's CQ
 * @lock: serializes producers; protects @q's kernel side, @prod and @armed
 * @q: the ring of struct ib_uverbs_wc entries
 * @prod: private producer index
 * @armed: IB_CQ_NEXT_COMP or IB_CQ_SOLICITED when a notification is wanted
 * @is_user: the ring is mapped by a process
 * @overflows: CQEs dropped because the ring was full
 * @overrun: the consumer has been told of an overflow (IB_EVENT_CQ_ERR);
 *	it is told once, however many completions are dropped afterwards
 */
struct sroce_cq {
	struct ib_cq		ibcq;
	spinlock_t		lock;	/* see above */
	struct sroce_queue	q;
	u32			prod;
	u8			armed;
	bool			is_user;
	bool			overrun;
	u64			overflows;
};

static inline struct sroce_cq *to_scq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct sroce_cq, ibcq);
}

/* The verbs, for verbs.c's operations table. */
int sroce_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    SROCE_CREATE_CQ_UDATA_ARG);
int sroce_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int sroce_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);
int sroce_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
int sroce_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc);

int sroce_cq_post(struct sroce_cq *cq, const struct ib_uverbs_wc *wc,
		  bool solicited, const struct sk_buff *rx);

#endif /* _SROCE_CQ_H */
