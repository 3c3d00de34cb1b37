/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Shared receive queues (srq.c).
 */
#ifndef _SROCE_SRQ_H
#define _SROCE_SRQ_H

#include <linux/spinlock.h>
#include <rdma/ib_verbs.h>

#include "queue.h"

struct sroce_rwqe;

/**
 * struct sroce_srq - a shared receive queue
 * @ibsrq: the RDMA core's SRQ
 * @lock: protects @q (replaced on resize), @tail and @limit; taken by the
 *	responders of every QP using the SRQ, in softirq context
 * @q: the ring of struct rxe_recv_wqe
 * @tail: private consumer index of @q
 * @max_sge: SGEs per WQE the ring's slots hold
 * @limit: the armed SRQ limit, 0 when disarmed
 * @srq_num: the SRQ's number, from the device's srq_ida
 * @is_user: the ring is mapped by a process, which posts into it
 * @kpost_lock: serializes kernel consumers posting into the ring
 */
struct sroce_srq {
	struct ib_srq		ibsrq;
	spinlock_t		lock;	/* see above */
	struct sroce_queue	q;
	u32			tail;
	u32			max_sge;
	u32			limit;
	u32			srq_num;
	bool			is_user;
	spinlock_t		kpost_lock;	/* see above */
};

static inline struct sroce_srq *to_ssrq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct sroce_srq, ibsrq);
}

int sroce_srq_fetch(struct sroce_srq *srq, struct sroce_rwqe *rwqe);

/* The verbs, for verbs.c's operations table. */
int sroce_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata);
int sroce_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata);
int sroce_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int sroce_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);

#endif /* _SROCE_SRQ_H */
