/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Transmit bursts: the packets one run of a requester or responder sends
 * to its connected peer, handed to the IP layer together (burst.c).
 */
#ifndef _SROCE_BURST_H
#define _SROCE_BURST_H

#include <sroce/burst.h>

struct dst_entry;
struct sroce_qp;

bool sroce_burst_enabled(void);
bool sroce_burst_route_ok(const struct dst_entry *dst);
bool sroce_burst_may_join(const struct sroce_burst *burst,
			  const struct sk_buff *skb,
			  const struct dst_entry *dst);
void sroce_burst_push(struct sroce_qp *qp, struct sroce_burst *burst);
int sroce_burst_flush(struct sroce_qp *qp, struct sroce_burst *burst);

#endif /* _SROCE_BURST_H */
