/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The skb work of receive aggregation (drivers/.../sroce/gro.c, which
 * explains when packets are chained): how a RoCEv2 packet joins the chain
 * of its flow in the GRO engine, and how sroce takes a chain apart again
 * into the packets that arrived.
 *
 * Pure functions of the skbs, no module state, so that the KUnit suites can
 * check that every packet comes out of a chain as it went in.
 */
#ifndef _SROCE_INCLUDE_GRO_H
#define _SROCE_INCLUDE_GRO_H

#include <linux/err.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/skbuff.h>
#include <linux/udp.h>
#include <net/checksum.h>
#include <net/gro.h>

/* A chain's IP length and UDP length must hold it. */
#define SROCE_GRO_MAX_LEN	65535

/**
 * sroce_gro_chain() - append a packet to the chain of its flow
 * @p: the chain's first packet, held by the GRO engine
 * @skb: the packet, its headers up to the UDP payload in the linear part
 *	(skb_gro_offset() bytes from skb->data)
 *
 * The packet keeps its own headers, in front of its data: the chain holds
 * it from its UDP payload on, as the kernel's own fraglist GRO does, and
 * its network and transport header offsets still point at them.
 *
 * Return: true when @skb joined the chain (the GRO engine no longer owns
 * it), false when the chain is full.
 */
static inline bool sroce_gro_chain(struct sk_buff *p, struct sk_buff *skb)
{
	unsigned int len = skb->len - skb_gro_offset(skb);

	if (p->len + len > SROCE_GRO_MAX_LEN)
		return false;
	if (NAPI_GRO_CB(p)->last == p)
		skb_shinfo(p)->frag_list = skb;
	else
		NAPI_GRO_CB(p)->last->next = skb;
	__skb_pull(skb, skb_gro_offset(skb));
	NAPI_GRO_CB(p)->last = skb;
	NAPI_GRO_CB(p)->count++;
	p->len += len;
	p->data_len += len;
	p->truesize += skb->truesize;
	skb_shinfo(p)->flags |= skb_shinfo(skb)->flags & SKBFL_SHARED_FRAG;
	skb->destructor = NULL;
	NAPI_GRO_CB(skb)->same_flow = 1;
	return true;
}

/**
 * sroce_gro_is_chain() - whether a received datagram is a chain
 * @skb: a datagram the UDP socket delivered
 *
 * Return: true for a chain sroce_gro_chain() built and the GRO engine
 * completed: a UDP tunnel GSO packet (what udp_gro_complete() makes of a
 * chain a tunnel socket's GRO hook built), with packets on its frag_list:
 * of IPv4 without a UDP checksum, or of IPv6 with one.
 */
static inline bool sroce_gro_is_chain(const struct sk_buff *skb)
{
	unsigned int type;

	if (!skb_is_gso(skb) || !skb_has_frag_list(skb))
		return false;
	type = skb_shinfo(skb)->gso_type;
	if (skb->protocol == htons(ETH_P_IP))
		return type == SKB_GSO_UDP_TUNNEL;
	return skb->protocol == htons(ETH_P_IPV6) &&
	       type == SKB_GSO_UDP_TUNNEL_CSUM;
}

/*
 * Give the first packet of a chain the IP length (IPv4 total length, IPv6
 * payload length) and UDP length it arrived with, which the GRO engine set
 * to the whole chain's: the ICRC covers them. An IPv4 header checksum is
 * made to match. An IPv6 packet's UDP checksum stays as completion wrote
 * it: GRO checked it on the way in, and the ICRC leaves it out.
 */
static inline void sroce_gro_restore_lengths(struct sk_buff *skb)
{
	unsigned int ulen = skb->len + (skb->data - skb_transport_header(skb));
	__be16 tot_len;

	if (skb->protocol == htons(ETH_P_IP)) {
		struct iphdr *iph = ip_hdr(skb);

		tot_len = htons(ulen + skb_network_header_len(skb));
		csum_replace2(&iph->check, iph->tot_len, tot_len);
		iph->tot_len = tot_len;
	} else {
		ipv6_hdr(skb)->payload_len = htons(ulen);
	}
	udp_hdr(skb)->len = htons(ulen);
}

/*
 * The rest of a chain whose first packet had a clone: the clone's frag_list
 * still holds every packet and links them through their ->next, which
 * neither side may change. Each packet another holder still has is cloned
 * (the data is shared, and sroce never writes a packet it received without
 * making it private first) and the reference to it let go; the link is read
 * before, as the other side does when it frees the list.
 */
static inline struct sk_buff *sroce_gro_unshare(struct sk_buff *list)
{
	struct sk_buff *head = NULL, **tail = &head, *seg, *next, *own;

	for (seg = list; seg; seg = next) {
		next = seg->next;
		own = seg;
		if (skb_shared(seg)) {
			own = skb_clone(seg, GFP_ATOMIC);
			consume_skb(seg);
			if (!own)
				continue;
		}
		own->next = NULL;
		*tail = own;
		tail = &own->next;
	}
	return head;
}

/**
 * sroce_gro_split() - take a chain apart into the packets that arrived
 * @skb: a chain (sroce_gro_is_chain()), headers in the linear part, its
 *	data at or after its UDP header
 *
 * @skb becomes the first packet alone, a plain datagram again with the
 * lengths it arrived with. The others are returned as a list linked by
 * ->next, in order, each from its UDP payload on, its own headers in front
 * of its data, and each the caller's alone. When @skb had a clone (a packet
 * capture keeps one), a packet that could not be given its own skb is
 * lost.
 *
 * Return: the rest of the chain, or an ERR_PTR() when @skb is not a chain
 * or could not be made private; @skb is then left as it was.
 */
static inline struct sk_buff *sroce_gro_split(struct sk_buff *skb)
{
	unsigned int len = 0, truesize = 0;
	struct sk_buff *list, *seg;
	bool cloned;

	if (!sroce_gro_is_chain(skb))
		return ERR_PTR(-EPROTO);
	/* A clone shares the frag_list and the headers changed here. */
	cloned = skb_cloned(skb);
	if (skb_unclone(skb, GFP_ATOMIC))
		return ERR_PTR(-ENOMEM);
	list = skb_shinfo(skb)->frag_list;
	for (seg = list; seg; seg = seg->next) {
		len += seg->len;
		truesize += seg->truesize;
	}
	if (len > skb->data_len)
		return ERR_PTR(-EPROTO);
	skb_shinfo(skb)->frag_list = NULL;
	skb->len -= len;
	skb->data_len -= len;
	skb->truesize -= truesize;
	skb_gso_reset(skb);
	skb->encapsulation = 0;
	sroce_gro_restore_lengths(skb);
	return cloned ? sroce_gro_unshare(list) : list;
}

#endif /* _SROCE_INCLUDE_GRO_H */
