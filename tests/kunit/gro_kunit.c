// SPDX-License-Identifier: GPL-2.0
/*
 * sroce_gro: receive chains (include/sroce/gro.h). RoCEv2 packets are built
 * as they arrive from a NIC (data at the IP header, IPv4 IDs and IPv6 flow
 * labels in no order),
 * chained by sroce_gro_chain() as the GRO engine calls it, completed as
 * inet_gro_complete() and udp_gro_complete() complete a chain, and handed
 * to sroce_gro_split() as the UDP receive path delivers it. Every packet
 * must come out as it went in, byte for byte, in order: the ICRC covers
 * the lengths that completion rewrites.
 */

#include <kunit/test.h>
#include <linux/ip.h>
#include <linux/prandom.h>
#include <linux/skbuff.h>
#include <linux/udp.h>
#include <net/gro.h>
#include <net/ip.h>
#include <net/ip6_checksum.h>
#include <net/ipv6.h>

#include <sroce/gro.h>
#include <sroce/wire.h>

#include "sroce_kunit.h"

#define GRO_HEADROOM		(NET_SKB_PAD + ETH_HLEN)
#define GRO_BTH_LEN		12
#define GRO_OP_WRITE_MIDDLE	0x07

/* The IP header's length: neither IPv4 options nor IPv6 extensions. */
static unsigned int gro_l3(bool ipv6)
{
	return ipv6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr);
}

/* IP and UDP headers: what skb_gro_offset() is past at the hook. */
static unsigned int gro_hdrs(bool ipv6)
{
	return gro_l3(ipv6) + sizeof(struct udphdr);
}

/* A received packet, and a copy of its bytes from the IP header on. */
struct gro_pkt {
	struct sk_buff	*skb;
	u8		*bytes;
	unsigned int	len;
};

/*
 * Build a RoCEv2 WRITE MIDDLE packet of @payload bytes as a NIC driver
 * hands it to GRO: headers and payload linear, data at the IP header, the
 * ICRC computed, for IPv4 the header checksum and no UDP checksum, for IPv6
 * the UDP checksum, and skb_gro_offset() past the UDP header as
 * udp_gro_receive() leaves it for a tunnel socket's hook.
 */
static struct sk_buff *gro_build(struct kunit *test, struct rnd_state *rnd,
				 bool ipv6, unsigned int idx,
				 unsigned int payload)
{
	unsigned int l3 = gro_l3(ipv6);
	unsigned int len = l3 + sizeof(struct udphdr) + GRO_BTH_LEN + payload +
			   SROCE_ICRC_LEN;
	struct sk_buff *skb;
	struct udphdr *udp;
	__le32 *icrc;
	u8 *p;

	skb = alloc_skb(GRO_HEADROOM + len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	skb_reserve(skb, GRO_HEADROOM);
	skb_reset_network_header(skb);
	skb_put(skb, l3);
	skb_set_transport_header(skb, l3);
	udp = skb_put(skb, sizeof(*udp));
	p = skb_put(skb, GRO_BTH_LEN);
	p[0] = GRO_OP_WRITE_MIDDLE;
	p[1] = 0;
	sroce_put_be(p + 2, 0xffff, 2);
	sroce_put_be(p + 4, 0x000011, 4);
	sroce_put_be(p + 8, 0x200000 + idx, 4);
	prandom_bytes_state(rnd, skb_put(skb, payload), payload);
	icrc = skb_put(skb, SROCE_ICRC_LEN);

	udp->source = htons(0xc001);
	udp->dest = htons(SROCE_UDP_PORT);
	udp->len = htons(len - l3);
	udp->check = 0;
	if (ipv6) {
		sroce_kunit_ip6_hdr(ipv6_hdr(skb), 0, prandom_u32_state(rnd),
				    len - l3);
		skb->protocol = htons(ETH_P_IPV6);
	} else {
		struct iphdr *ip = ip_hdr(skb);

		ip->version = 4;
		ip->ihl = sizeof(*ip) >> 2;
		ip->tos = 0;
		ip->tot_len = htons(len);
		/* A sender's IDs need not count up: each must stay its own. */
		ip->id = htons(prandom_u32_state(rnd));
		ip->frag_off = htons(IP_DF);
		ip->ttl = 64;
		ip->protocol = IPPROTO_UDP;
		ip->saddr = htonl(0xc6120001);
		ip->daddr = htonl(0xc6120002);
		ip_send_check(ip);
		skb->protocol = htons(ETH_P_IP);
	}
	*icrc = sroce_icrc_packet(skb->data, ipv6, len - SROCE_ICRC_LEN);
	if (ipv6) {
		const struct ipv6hdr *ip6 = ipv6_hdr(skb);

		udp->check = csum_ipv6_magic(&ip6->saddr, &ip6->daddr,
					     len - l3, IPPROTO_UDP,
					     skb_checksum(skb, l3, len - l3, 0));
		if (!udp->check)
			udp->check = CSUM_MANGLED_0;
	}

	memset(skb->cb, 0, sizeof(skb->cb));
	NAPI_GRO_CB(skb)->data_offset = l3 + sizeof(struct udphdr);
	return skb;
}

static void gro_build_all(struct kunit *test, bool ipv6, struct gro_pkt *pkts,
			  unsigned int n, unsigned int payload)
{
	struct rnd_state rnd;
	unsigned int i;

	prandom_seed_state(&rnd, SROCE_KUNIT_SEED + n + payload + ipv6);
	for (i = 0; i < n; i++) {
		pkts[i].skb = gro_build(test, &rnd, ipv6, i, payload);
		pkts[i].len = pkts[i].skb->len;
		pkts[i].bytes = kunit_kmalloc(test, pkts[i].len, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, pkts[i].bytes);
		memcpy(pkts[i].bytes, pkts[i].skb->data, pkts[i].len);
	}
}

/* The first packet of a chain, as dev_gro_receive() holds it. */
static void gro_hold(struct sk_buff *p)
{
	NAPI_GRO_CB(p)->last = p;
	NAPI_GRO_CB(p)->count = 1;
	skb_shinfo(p)->gso_size = p->len - NAPI_GRO_CB(p)->data_offset;
}

/*
 * What the kernel does to a chain between the hook and the socket: the
 * lengths (and the IPv4 header checksum) inet_gro_complete() or
 * ipv6_gro_complete() and udp_gro_complete() write, the UDP checksum
 * udp6_gro_complete() writes, the GSO type of a tunnel socket's chain, and
 * the IP layer's pull of its header.
 */
static void gro_complete_and_deliver(struct sk_buff *p)
{
	bool ipv6 = p->protocol == htons(ETH_P_IPV6);
	unsigned int l3 = gro_l3(ipv6);
	struct udphdr *udp = udp_hdr(p);

	if (ipv6) {
		struct ipv6hdr *ip6 = ipv6_hdr(p);

		ip6->payload_len = htons(p->len - l3);
		udp->check = ~csum_ipv6_magic(&ip6->saddr, &ip6->daddr,
					      p->len - l3, IPPROTO_UDP, 0);
		skb_shinfo(p)->gso_type = SKB_GSO_UDP_TUNNEL_CSUM;
	} else {
		struct iphdr *ip = ip_hdr(p);
		__be16 tot_len = htons(p->len);

		csum_replace2(&ip->check, ip->tot_len, tot_len);
		ip->tot_len = tot_len;
		skb_shinfo(p)->gso_type = SKB_GSO_UDP_TUNNEL;
	}
	udp->len = htons(p->len - l3);
	skb_shinfo(p)->gso_segs = NAPI_GRO_CB(p)->count;
	__skb_pull(p, l3);
}

/*
 * Check that packet @idx out of a split is the one that went in: every
 * byte, but for the first IPv6 packet its UDP checksum, which completion
 * rewrote for the chain and the split leaves (the ICRC does not cover it).
 */
static void gro_check_packet(struct kunit *test, struct sk_buff *skb,
			     const struct gro_pkt *pkt, unsigned int idx)
{
	bool ipv6 = skb->protocol == htons(ETH_P_IPV6);
	const u8 *ip = skb_network_header(skb);
	unsigned int l3 = gro_l3(ipv6), len, check_at;
	__le32 icrc;

	KUNIT_EXPECT_FALSE_MSG(test, skb_is_gso(skb), "packet %u", idx);
	KUNIT_EXPECT_FALSE_MSG(test, skb_has_frag_list(skb), "packet %u", idx);
	KUNIT_ASSERT_EQ_MSG(test, skb_transport_header(skb) - ip, (long)l3,
			    "packet %u", idx);
	/* From its UDP header, as sroce_udp_recv() takes a datagram. */
	len = skb->len + (skb->data - skb_transport_header(skb)) + l3;
	KUNIT_ASSERT_EQ_MSG(test, len, pkt->len, "packet %u", idx);
	KUNIT_ASSERT_TRUE_MSG(test, skb_headlen(skb) == skb->len,
			      "packet %u: linear", idx);
	check_at = l3 + offsetof(struct udphdr, check);
	if (ipv6 && idx == 0) {
		SROCE_EXPECT_BYTES(test, ip, pkt->bytes, check_at,
				   "packet up to its UDP checksum");
		SROCE_EXPECT_BYTES(test, ip + check_at + 2,
				   pkt->bytes + check_at + 2,
				   len - check_at - 2,
				   "packet after its UDP checksum");
	} else {
		SROCE_EXPECT_BYTES(test, ip, pkt->bytes, len, "packet");
	}
	if (!ipv6)
		KUNIT_EXPECT_EQ_MSG(test, (__force u16)ip_fast_csum(ip, 5), 0,
				    "packet %u: header checksum", idx);
	memcpy(&icrc, ip + len - SROCE_ICRC_LEN, sizeof(icrc));
	KUNIT_EXPECT_EQ_MSG(test, le32_to_cpu(icrc),
			    le32_to_cpu(sroce_icrc_packet(ip, ipv6,
							  len - SROCE_ICRC_LEN)),
			    "packet %u: ICRC", idx);
}

/*
 * Chain @n packets of @payload bytes, complete and deliver the chain,
 * clone it first when @cloned (as a packet capture does), split it, and
 * check every packet and the clone.
 */
static void gro_round_trip(struct kunit *test, bool ipv6, unsigned int n,
			   unsigned int payload, bool cloned)
{
	unsigned int l3 = gro_l3(ipv6);
	struct sk_buff *p, *rest, *skb, *next, *clone = NULL;
	unsigned int i, chain_len;
	struct gro_pkt *pkts;

	pkts = kunit_kcalloc(test, n, sizeof(*pkts), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, pkts);
	gro_build_all(test, ipv6, pkts, n, payload);
	p = pkts[0].skb;
	gro_hold(p);
	for (i = 1; i < n; i++)
		KUNIT_ASSERT_TRUE_MSG(test, sroce_gro_chain(p, pkts[i].skb),
				      "packet %u", i);
	KUNIT_EXPECT_EQ(test, NAPI_GRO_CB(p)->count, (u16)n);
	KUNIT_EXPECT_PTR_EQ(test, NAPI_GRO_CB(p)->last, pkts[n - 1].skb);
	chain_len = p->len;
	gro_complete_and_deliver(p);
	KUNIT_EXPECT_EQ(test, sroce_gro_is_chain(p), n > 1);
	if (cloned) {
		clone = skb_clone(p, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, clone);
	}

	rest = sroce_gro_split(p);
	if (n == 1) {
		KUNIT_EXPECT_EQ(test, PTR_ERR(rest), -EPROTO);
		KUNIT_EXPECT_EQ(test, p->len, chain_len - l3);
		kfree_skb(clone);
		kfree_skb(p);
		return;
	}
	KUNIT_ASSERT_FALSE(test, IS_ERR(rest));
	gro_check_packet(test, p, &pkts[0], 0);
	for (i = 1, skb = rest; skb; skb = next, i++) {
		next = skb->next;
		skb_mark_not_on_list(skb);
		if (i < n)
			gro_check_packet(test, skb, &pkts[i], i);
		kfree_skb(skb);
	}
	KUNIT_EXPECT_EQ(test, i, n);
	kfree_skb(p);
	if (clone) {
		/* The capture's view is the whole chain, untouched. */
		KUNIT_EXPECT_EQ(test, clone->len, chain_len - l3);
		KUNIT_EXPECT_TRUE(test, skb_has_frag_list(clone));
		KUNIT_EXPECT_EQ(test, ntohs(udp_hdr(clone)->len), chain_len - l3);
		kfree_skb(clone);
	}
}

/* Packets of a 1024-byte path MTU, and of 4096. */
static void gro_split_ipv4(struct kunit *test)
{
	gro_round_trip(test, false, 2, 1024, false);
	gro_round_trip(test, false, 8, 1024, false);
	gro_round_trip(test, false, 60, 1024, false);
	gro_round_trip(test, false, 15, 4096, false);
}

static void gro_split_ipv6(struct kunit *test)
{
	gro_round_trip(test, true, 2, 1024, false);
	gro_round_trip(test, true, 60, 1024, false);
	gro_round_trip(test, true, 15, 4096, false);
}

static void gro_split_cloned(struct kunit *test)
{
	gro_round_trip(test, false, 8, 1024, true);
	gro_round_trip(test, true, 8, 1024, true);
}

/* A lone packet is no chain: the split leaves it alone. */
static void gro_split_single(struct kunit *test)
{
	gro_round_trip(test, false, 1, 256, false);
	gro_round_trip(test, true, 1, 256, false);
}

/* A chain stops short of what a total length can say. */
static void gro_chain_limit(struct kunit *test)
{
	unsigned int n = 17, i, fit;
	struct gro_pkt *pkts;
	struct sk_buff *p;

	pkts = kunit_kcalloc(test, n, sizeof(*pkts), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, pkts);
	gro_build_all(test, false, pkts, n, 4096);
	/* Each adds its UDP payload: 12 + 4096 + 4 bytes. */
	fit = (SROCE_GRO_MAX_LEN - pkts[0].len) /
	      (pkts[0].len - gro_hdrs(false)) + 1;
	p = pkts[0].skb;
	gro_hold(p);
	for (i = 1; i < n; i++) {
		bool took = sroce_gro_chain(p, pkts[i].skb);

		KUNIT_EXPECT_EQ_MSG(test, took, i < fit, "packet %u", i);
		if (!took)
			kfree_skb(pkts[i].skb);
	}
	KUNIT_EXPECT_EQ(test, NAPI_GRO_CB(p)->count, (u16)fit);
	KUNIT_EXPECT_LE(test, p->len, SROCE_GRO_MAX_LEN);
	kfree_skb(p);
}

/* Other GSO packets are not chains: refused, left as they were. */
static void gro_split_refuses(struct kunit *test)
{
	struct gro_pkt pkts[2];
	struct sk_buff *p;

	gro_build_all(test, false, pkts, 2, 512);
	p = pkts[0].skb;
	gro_hold(p);
	KUNIT_ASSERT_TRUE(test, sroce_gro_chain(p, pkts[1].skb));
	gro_complete_and_deliver(p);
	skb_shinfo(p)->gso_type = SKB_GSO_UDP_L4 | SKB_GSO_FRAGLIST;
	KUNIT_EXPECT_EQ(test, PTR_ERR(sroce_gro_split(p)), -EPROTO);
	KUNIT_EXPECT_TRUE(test, skb_has_frag_list(p));
	/* The GSO type of the other IP version's chains. */
	skb_shinfo(p)->gso_type = SKB_GSO_UDP_TUNNEL_CSUM;
	KUNIT_EXPECT_EQ(test, PTR_ERR(sroce_gro_split(p)), -EPROTO);
	KUNIT_EXPECT_EQ(test, p->len, pkts[0].len - gro_l3(false) +
			pkts[1].len - gro_hdrs(false));
	kfree_skb(p);
}

static struct kunit_case gro_cases[] = {
	KUNIT_CASE(gro_split_ipv4),
	KUNIT_CASE(gro_split_ipv6),
	KUNIT_CASE(gro_split_cloned),
	KUNIT_CASE(gro_split_single),
	KUNIT_CASE(gro_chain_limit),
	KUNIT_CASE(gro_split_refuses),
	{}
};

static struct kunit_suite gro_suite = {
	.name = "sroce_gro",
	.test_cases = gro_cases,
};

kunit_test_suite(gro_suite);
