/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The skb work of a transmit burst (drivers/.../sroce/burst.c, which
 * explains what a burst is and what the kernel's split of it rewrites):
 * which packet may join, how it joins the first one's frag_list, and how
 * the first is marked as a fraglist GSO packet.
 *
 * Pure functions of the skbs, no module state, so that the KUnit suites can
 * hand what they build to the kernel's own segmentation.
 */
#ifndef _SROCE_INCLUDE_BURST_H
#define _SROCE_INCLUDE_BURST_H

#include <linux/skbuff.h>
#include <linux/udp.h>
#include <net/dst.h>

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

/**
 * sroce_burst_udp_payload() - UDP payload bytes of a finished packet
 * @skb: the packet, data at its IP header, transport header set
 *
 * Return: the bytes after the UDP header: BTH to ICRC.
 */
static inline unsigned int sroce_burst_udp_payload(const struct sk_buff *skb)
{
	return skb->len - skb_transport_offset(skb) - sizeof(struct udphdr);
}

/**
 * sroce_burst_fits() - whether a packet may go at the end of a burst
 * @burst: the burst
 * @skb: the packet: headers on, data at the IP header, not yet routed
 * @dst: the route the packet will take
 * @max_count: the most packets a burst holds
 * @max_len: the most bytes a burst holds from its first IP header on
 *
 * An empty burst takes any packet. Otherwise the packet must take the same
 * route (the split copies the first packet's link-layer header onto it),
 * be no longer than the first (whose UDP payload is the burst's gso_size),
 * and fit the limits.
 *
 * Return: true when sroce_burst_add() may add @skb.
 */
static inline bool sroce_burst_fits(const struct sroce_burst *burst,
				    const struct sk_buff *skb,
				    const struct dst_entry *dst,
				    unsigned int max_count,
				    unsigned int max_len)
{
	const struct sk_buff *head = burst->head;

	if (!head)
		return true;
	return skb_dst(head) == dst &&
	       burst->count < max_count &&
	       sroce_burst_udp_payload(skb) <= burst->mss &&
	       head->len + sroce_burst_udp_payload(skb) <= max_len;
}

/**
 * sroce_burst_add() - add a finished packet at the end of a burst
 * @burst: the burst; sroce_burst_fits() allowed @skb
 * @skb: the packet: complete, data at the IP header; the burst owns it.
 *	Built with the IPv4 ID the split will give it, its index in the
 *	burst, and for IPv6 with its full UDP checksum.
 */
static inline void sroce_burst_add(struct sroce_burst *burst,
				   struct sk_buff *skb)
{
	struct sk_buff *head = burst->head;

	if (!head) {
		burst->head = skb;
		burst->count = 1;
		burst->mss = sroce_burst_udp_payload(skb);
		return;
	}
	/* The first packet's route serves all; the split drops the others'. */
	skb_dst_drop(skb);
	/* As UDP's GRO leaves a fraglist: each part from its UDP payload on. */
	__skb_pull(skb, skb_transport_offset(skb) + sizeof(struct udphdr));
	if (burst->tail)
		burst->tail->next = skb;
	else
		skb_shinfo(head)->frag_list = skb;
	burst->tail = skb;
	head->len += skb->len;
	head->data_len += skb->len;
	head->truesize += skb->truesize;
	burst->count++;
}

/**
 * sroce_burst_seal() - mark the first packet of a burst for the split
 * @burst: the burst, not empty
 *
 * A burst of more than one packet becomes a UDP fraglist GSO packet whose
 * gso_size is the first packet's UDP payload, and the first packet's UDP
 * length that of the whole burst. A burst of one stays a plain packet.
 * The burst still holds its packets: the caller takes @burst->head.
 *
 * Return: true when the burst was marked for the split.
 */
static inline bool sroce_burst_seal(const struct sroce_burst *burst)
{
	struct sk_buff *skb = burst->head;
	struct skb_shared_info *shinfo;

	if (burst->count < 2)
		return false;
	shinfo = skb_shinfo(skb);
	shinfo->gso_type = SKB_GSO_UDP_L4 | SKB_GSO_FRAGLIST;
	shinfo->gso_size = burst->mss;
	shinfo->gso_segs = burst->count;
	udp_hdr(skb)->len = htons(skb->len - skb_transport_offset(skb));
	/* Every packet is complete: no checksum is left to offload. */
	skb->ip_summed = CHECKSUM_UNNECESSARY;
	return true;
}

#endif /* _SROCE_INCLUDE_BURST_H */
