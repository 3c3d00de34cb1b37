/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Posting for kernel consumers (kverbs.c): work requests translated into
 * WQEs in the same rings user space posts into.
 */
#ifndef _SROCE_KVERBS_H
#define _SROCE_KVERBS_H

#include <rdma/ib_verbs.h>

struct sroce_qp;

int sroce_kpost_send(struct sroce_qp *qp, const struct ib_send_wr *wr,
		     const struct ib_send_wr **bad_wr);
int sroce_kpost_recv(struct sroce_qp *qp, const struct ib_recv_wr *wr,
		     const struct ib_recv_wr **bad_wr);
bool sroce_kpost_can_run(void);
int sroce_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr);

#endif /* _SROCE_KVERBS_H */
