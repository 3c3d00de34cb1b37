/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Multicast groups (mcast.c): attaching UD QPs, and delivering a packet to
 * every QP attached to its group.
 */
#ifndef _SROCE_MCAST_H
#define _SROCE_MCAST_H

#include <rdma/ib_verbs.h>

#include <sroce/wire.h>

struct sk_buff;
struct sroce_dev;

/* The destination QP number of multicast packets. */
#define SROCE_MCAST_QPN		0xffffff

int sroce_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
int sroce_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
void sroce_mcast_rx(struct sroce_dev *sdev, struct sk_buff *skb,
		    const struct sroce_bth *bth,
		    const struct sroce_opcode_info *info, u32 payload);
void sroce_mcast_cleanup(struct sroce_dev *sdev);

#endif /* _SROCE_MCAST_H */
