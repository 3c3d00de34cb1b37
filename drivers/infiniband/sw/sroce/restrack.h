/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The driver's state of QPs, MRs and CQs for the RDMA core's resource
 * tracking (restrack.c), shown by "rdma resource show ... -dd".
 */
#ifndef _SROCE_RESTRACK_H
#define _SROCE_RESTRACK_H

#include <linux/skbuff.h>
#include <rdma/ib_verbs.h>

int sroce_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp);
int sroce_fill_res_mr_entry(struct sk_buff *msg, struct ib_mr *ibmr);
int sroce_fill_res_cq_entry(struct sk_buff *msg, struct ib_cq *ibcq);

#endif /* _SROCE_RESTRACK_H */
