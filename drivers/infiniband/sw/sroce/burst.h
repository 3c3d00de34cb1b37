/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Transmit bursts: the packets one run of a requester or responder sends
 * to its connected peer, handed to the IP layer together (burst.c).
 */
#ifndef _SROCE_BURST_H
#define _SROCE_BURST_H

#include <linux/skbuff.h>

struct dst_entry;
struct sroce_qp;

/**
 * struct sroce_burst - finished RoCEv2 packets waiting to leave together
 * @head: the first packet, or NULL when the burst is empty; the others
 *	hang on its frag_list
 * @tail: the last packet on @head's frag_list, NULL while there is none
 * @count: packets in the burst, @head included
 * @mss: UDP payload bytes of @head: no later packet may be longer
 * @dropped: the local queue dropped a burst pushed since the owner last
 *	flushed (sroce_burst_flush())
 *
 * The owner of a burst (a requester or a READ responder) serialises its
 * use with its own lock and flushes it before letting that lock go, so
 * that no packet of the same QP overtakes those of a burst.
 */
struct sroce_burst {
	struct sk_buff	*head;
	struct sk_buff	*tail;
	unsigned int	count;
	unsigned int	mss;
	bool		dropped;
};

bool sroce_burst_enabled(void);
bool sroce_burst_route_ok(const struct dst_entry *dst);
bool sroce_burst_may_join(const struct sroce_burst *burst,
			  const struct sk_buff *skb,
			  const struct dst_entry *dst);
void sroce_burst_add(struct sroce_burst *burst, struct sk_buff *skb);
void sroce_burst_push(struct sroce_qp *qp, struct sroce_burst *burst);
int sroce_burst_flush(struct sroce_qp *qp, struct sroce_burst *burst);

#endif /* _SROCE_BURST_H */
