// SPDX-License-Identifier: GPL-2.0
/*
 * sroce_burst: transmit bursts (include/sroce/burst.h) against the kernel's
 * own segmentation. RoCEv2 packets are built as xmit.c builds them, chained
 * and sealed by the helpers sroce uses, given the lengths and checksum the
 * IP layer writes and an Ethernet header, then split by __skb_gso_segment()
 * as a device without GSO (validate_xmit_skb()) or the UDP receive path
 * (udp_rcv_segment()) would. Every packet must come out as it went in.
 */

#include <kunit/test.h>
#include <linux/etherdevice.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/netdevice.h>
#include <linux/prandom.h>
#include <linux/skbuff.h>
#include <linux/udp.h>
#include <net/ip.h>
#include <net/ip6_checksum.h>
#include <net/ipv6.h>
#include <net/udp.h>

#include <sroce/burst.h>
#include <sroce/wire.h>

#include "sroce_kunit.h"

/* Room for the Ethernet header and more, as xmit.c reserves. */
#define BURST_HEADROOM		128
#define BURST_BTH_LEN		12
#define BURST_RETH_LEN		16
/* The limits sroce runs with by default (burst.c). */
#define BURST_MAX_COUNT		64
#define BURST_MAX_LEN		(63 * 1024)
#define BURST_SPORT		0xc123

/* RC RDMA WRITE opcodes (IBA Table 38), written out independently. */
#define OP_WRITE_FIRST		0x06
#define OP_WRITE_MIDDLE		0x07
#define OP_WRITE_LAST		0x08

static const u8 burst_src_mac[ETH_ALEN] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };
static const u8 burst_dst_mac[ETH_ALEN] = { 0x52, 0x54, 0x00, 0xab, 0xcd, 0xef };

/* The shape of one packet of a test burst. */
struct burst_pkt_spec {
	u8		opcode;
	bool		reth;
	unsigned int	payload;	/* a multiple of 4: no pad */
};

/* A packet built for a burst, and a copy of its bytes from the IP header. */
struct burst_pkt {
	struct sk_buff	*skb;
	u8		*bytes;
	unsigned int	len;
};

static void burst_put_rnd(struct rnd_state *rnd, u8 *p, unsigned int len)
{
	prandom_bytes_state(rnd, p, len);
}

/*
 * Build a finished RoCEv2 packet the way sroce_pkt_xmit() does: transport
 * headers and payload, then UDP and IP headers pushed in front, data at the
 * IP header, the IPv4 ID its index in the burst, the ICRC computed with
 * it, and for IPv6 the full UDP checksum over the ICRC.
 */
static struct sk_buff *burst_build(struct kunit *test, struct rnd_state *rnd,
				   bool ipv6, unsigned int idx,
				   const struct burst_pkt_spec *spec)
{
	unsigned int tlen = BURST_BTH_LEN + (spec->reth ? BURST_RETH_LEN : 0) +
			    spec->payload + SROCE_ICRC_LEN;
	struct sk_buff *skb;
	struct udphdr *udp;
	__le32 *icrc;
	u8 *p;

	skb = alloc_skb(BURST_HEADROOM + sizeof(struct ipv6hdr) +
			sizeof(*udp) + tlen, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	skb_reserve(skb, BURST_HEADROOM + sizeof(struct ipv6hdr) + sizeof(*udp));

	p = skb_put(skb, BURST_BTH_LEN);
	p[0] = spec->opcode;
	p[1] = 0;				/* no SE, no pad, TVer 0 */
	sroce_put_be(p + 2, 0xffff, 2);		/* default P_Key */
	sroce_put_be(p + 4, 0x000011, 4);	/* destination QP */
	sroce_put_be(p + 8, (0x123400 + idx) |
		     (spec->opcode == OP_WRITE_LAST ? BIT(31) : 0), 4);
	if (spec->reth)
		burst_put_rnd(rnd, skb_put(skb, BURST_RETH_LEN), BURST_RETH_LEN);
	burst_put_rnd(rnd, skb_put(skb, spec->payload), spec->payload);
	icrc = skb_put(skb, SROCE_ICRC_LEN);

	udp = skb_push(skb, sizeof(*udp));
	skb_reset_transport_header(skb);
	udp->source = htons(BURST_SPORT);
	udp->dest = htons(SROCE_UDP_PORT);
	udp->len = htons(skb->len);
	udp->check = 0;

	if (ipv6) {
		struct ipv6hdr *ip6 = skb_push(skb, sizeof(*ip6));

		skb_reset_network_header(skb);
		sroce_kunit_ip6_hdr(ip6, 0x02, 0x5a5a5,
				    skb->len - sizeof(*ip6));
		skb->protocol = htons(ETH_P_IPV6);
	} else {
		struct iphdr *ip = skb_push(skb, sizeof(*ip));

		skb_reset_network_header(skb);
		ip->version = 4;
		ip->ihl = sizeof(*ip) >> 2;
		ip->tos = 0x02;
		ip->tot_len = htons(skb->len);
		/* The ID the split will give it (burst.c). */
		ip->id = htons(idx);
		ip->frag_off = htons(IP_DF);
		ip->ttl = 64;
		ip->protocol = IPPROTO_UDP;
		ip->check = 0;
		ip->saddr = htonl(0x0a000001);
		ip->daddr = htonl(0x0a000002);
		skb->protocol = htons(ETH_P_IP);
	}
	*icrc = sroce_icrc_packet(skb->data, ipv6, skb->len - SROCE_ICRC_LEN);
	if (ipv6) {
		const struct ipv6hdr *ip6 = ipv6_hdr(skb);
		unsigned int len = skb->len - sizeof(*ip6);

		udp->check = csum_ipv6_magic(&ip6->saddr, &ip6->daddr, len,
					     IPPROTO_UDP,
					     skb_checksum(skb, sizeof(*ip6),
							  len, 0));
		if (!udp->check)
			udp->check = CSUM_MANGLED_0;
	}
	skb->ip_summed = CHECKSUM_NONE;
	return skb;
}

/* Build @n packets and keep a copy of each as it was finished. */
static void burst_build_all(struct kunit *test, bool ipv6,
			    const struct burst_pkt_spec *specs,
			    struct burst_pkt *pkts, unsigned int n)
{
	struct rnd_state rnd;
	unsigned int i;

	prandom_seed_state(&rnd, SROCE_KUNIT_SEED + n + ipv6);
	for (i = 0; i < n; i++) {
		pkts[i].skb = burst_build(test, &rnd, ipv6, i, &specs[i]);
		pkts[i].len = pkts[i].skb->len;
		pkts[i].bytes = kunit_kmalloc(test, pkts[i].len, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, pkts[i].bytes);
		memcpy(pkts[i].bytes, pkts[i].skb->data, pkts[i].len);
	}
}

/*
 * What the stack does to a sealed burst before the device: the length and
 * header checksum __ip_local_out() or the payload length __ip6_local_out()
 * writes for the whole burst, then the Ethernet header neigh_output() puts
 * in front, data at the MAC header as dev_queue_xmit() gets it.
 */
static void burst_to_device(struct sk_buff *head, bool ipv6)
{
	struct ethhdr *eth;

	if (ipv6) {
		ipv6_hdr(head)->payload_len =
			htons(head->len - sizeof(struct ipv6hdr));
	} else {
		ip_hdr(head)->tot_len = htons(head->len);
		ip_send_check(ip_hdr(head));
	}
	eth = skb_push(head, ETH_HLEN);
	skb_reset_mac_header(head);
	ether_addr_copy(eth->h_dest, burst_dst_mac);
	ether_addr_copy(eth->h_source, burst_src_mac);
	eth->h_proto = head->protocol;
}

/* Check that segment @idx of a split is the packet @pkt went in as. */
static void burst_check_segment(struct kunit *test, struct sk_buff *seg,
				const struct burst_pkt *pkt, unsigned int idx,
				bool ipv6)
{
	unsigned int l3 = ipv6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr);
	const struct udphdr *udp;
	const struct ethhdr *eth;
	const u8 *ip;
	unsigned int len;
	__sum16 check;
	__le32 icrc;

	KUNIT_ASSERT_FALSE_MSG(test, skb_is_nonlinear(seg), "segment %u", idx);
	KUNIT_EXPECT_FALSE_MSG(test, skb_is_gso(seg), "segment %u", idx);
	KUNIT_ASSERT_PTR_EQ_MSG(test, skb_mac_header(seg), seg->data,
				"segment %u", idx);
	KUNIT_ASSERT_EQ_MSG(test, skb_network_offset(seg), ETH_HLEN,
			    "segment %u", idx);
	KUNIT_ASSERT_EQ_MSG(test, skb_transport_offset(seg),
			    (int)(ETH_HLEN + l3), "segment %u", idx);
	eth = (const struct ethhdr *)seg->data;
	SROCE_EXPECT_BYTES(test, eth->h_dest, burst_dst_mac, ETH_ALEN,
			   "destination MAC");
	SROCE_EXPECT_BYTES(test, eth->h_source, burst_src_mac, ETH_ALEN,
			   "source MAC");
	KUNIT_EXPECT_EQ(test, eth->h_proto,
			htons(ipv6 ? ETH_P_IPV6 : ETH_P_IP));

	len = seg->len - ETH_HLEN;
	KUNIT_ASSERT_EQ_MSG(test, len, pkt->len, "segment %u", idx);
	ip = skb_network_header(seg);
	udp = udp_hdr(seg);
	KUNIT_EXPECT_EQ_MSG(test, ntohs(udp->len), len - l3, "segment %u", idx);
	if (ipv6) {
		const struct ipv6hdr *ip6 = ipv6_hdr(seg);

		KUNIT_EXPECT_EQ_MSG(test, ntohs(ip6->payload_len), len - l3,
				    "segment %u", idx);
		/* The UDP checksum sroce computed still holds. */
		check = csum_ipv6_magic(&ip6->saddr, &ip6->daddr, len - l3,
					IPPROTO_UDP,
					skb_checksum(seg, ETH_HLEN + l3,
						     len - l3, 0));
		KUNIT_EXPECT_EQ_MSG(test, (__force u16)check, 0,
				    "segment %u: UDP checksum", idx);
		SROCE_EXPECT_BYTES(test, ip, pkt->bytes, len, "IPv6 packet");
	} else {
		const struct iphdr *iph = ip_hdr(seg);

		KUNIT_EXPECT_EQ_MSG(test, ntohs(iph->tot_len), len,
				    "segment %u", idx);
		KUNIT_EXPECT_EQ_MSG(test, ntohs(iph->id), idx, "segment %u", idx);
		check = ip_fast_csum(iph, iph->ihl);
		KUNIT_EXPECT_EQ_MSG(test, (__force u16)check, 0,
				    "segment %u: header checksum", idx);
		/* All but the header checksum, which sroce leaves to IP. */
		SROCE_EXPECT_BYTES(test, ip, pkt->bytes,
				   offsetof(struct iphdr, check),
				   "IPv4 header before its checksum");
		SROCE_EXPECT_BYTES(test, ip + offsetof(struct iphdr, saddr),
				   pkt->bytes + offsetof(struct iphdr, saddr),
				   len - offsetof(struct iphdr, saddr),
				   "IPv4 packet after the header checksum");
	}
	/* The ICRC, over the segment as it will leave, still verifies. */
	memcpy(&icrc, ip + len - SROCE_ICRC_LEN, sizeof(icrc));
	KUNIT_EXPECT_EQ_MSG(test, le32_to_cpu(icrc),
			    le32_to_cpu(sroce_icrc_packet(ip, ipv6,
							  len - SROCE_ICRC_LEN)),
			    "segment %u: ICRC", idx);
}

/*
 * Build the packets of @specs, chain and seal them, split the burst as the
 * transmit path (@tx_path) or the UDP receive path does, and check that
 * the segments are the packets, in order.
 */
static void burst_split(struct kunit *test, bool ipv6, bool tx_path,
			const struct burst_pkt_spec *specs, unsigned int n)
{
	/* As validate_xmit_skb() for virtio-net without host offloads. */
	netdev_features_t features = NETIF_F_SG | NETIF_F_HW_CSUM;
	struct sroce_burst burst = {};
	struct sk_buff *head, *segs, *seg;
	struct burst_pkt *pkts;
	unsigned int i, thoff;

	pkts = kunit_kcalloc(test, n, sizeof(*pkts), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, pkts);
	burst_build_all(test, ipv6, specs, pkts, n);
	for (i = 0; i < n; i++) {
		KUNIT_EXPECT_TRUE_MSG(test,
				      sroce_burst_fits(&burst, pkts[i].skb,
						       NULL, BURST_MAX_COUNT,
						       BURST_MAX_LEN),
				      "packet %u", i);
		sroce_burst_add(&burst, pkts[i].skb);
	}
	head = burst.head;
	KUNIT_ASSERT_EQ(test, burst.count, n);
	thoff = skb_transport_offset(head);
	KUNIT_EXPECT_EQ(test, burst.mss, pkts[0].len - thoff - 8);
	KUNIT_ASSERT_TRUE(test, sroce_burst_seal(&burst));

	/* Sealed: one UDP fraglist GSO packet holding all the others. */
	KUNIT_EXPECT_EQ(test, skb_shinfo(head)->gso_type,
			(unsigned int)(SKB_GSO_UDP_L4 | SKB_GSO_FRAGLIST));
	KUNIT_EXPECT_EQ(test, (unsigned int)skb_shinfo(head)->gso_size,
			burst.mss);
	KUNIT_EXPECT_EQ(test, (unsigned int)skb_shinfo(head)->gso_segs, n);
	KUNIT_EXPECT_EQ(test, ntohs(udp_hdr(head)->len), head->len - thoff);
	KUNIT_EXPECT_EQ(test, skb_headlen(head), pkts[0].len);

	burst_to_device(head, ipv6);
	if (tx_path) {
		segs = __skb_gso_segment(head, features, true);
	} else {
		/* As udp_rcv_segment() for a socket that does not convert. */
		segs = __skb_gso_segment(head, NETIF_F_SG | NETIF_F_IP_CSUM |
					 NETIF_F_IPV6_CSUM, false);
	}
	if (IS_ERR_OR_NULL(segs)) {
		kfree_skb(head);
		KUNIT_FAIL(test, "the split failed: %ld", PTR_ERR(segs));
		return;
	}
	/* The first segment is the head, with a reference for the list. */
	if (segs != head)
		KUNIT_FAIL(test, "the first segment is not the burst's head");
	consume_skb(head);

	for (i = 0, seg = segs; seg; seg = seg->next, i++)
		if (i < n)
			burst_check_segment(test, seg, &pkts[i], i, ipv6);
	KUNIT_EXPECT_EQ(test, i, n);
	kfree_skb_list(segs);
}

/* A RDMA WRITE of 7 KiB on a 1024-byte MTU, and a short last packet. */
static const struct burst_pkt_spec burst_write[] = {
	{ OP_WRITE_FIRST, true, 1024 },
	{ OP_WRITE_MIDDLE, false, 1024 },
	{ OP_WRITE_MIDDLE, false, 1024 },
	{ OP_WRITE_MIDDLE, false, 1024 },
	{ OP_WRITE_MIDDLE, false, 1024 },
	{ OP_WRITE_MIDDLE, false, 1024 },
	{ OP_WRITE_MIDDLE, false, 1024 },
	{ OP_WRITE_LAST, false, 200 },
};

static void burst_split_ipv4_tx(struct kunit *test)
{
	burst_split(test, false, true, burst_write, ARRAY_SIZE(burst_write));
}

static void burst_split_ipv4_rx(struct kunit *test)
{
	burst_split(test, false, false, burst_write, ARRAY_SIZE(burst_write));
}

static void burst_split_ipv6_tx(struct kunit *test)
{
	burst_split(test, true, true, burst_write, ARRAY_SIZE(burst_write));
}

static void burst_split_ipv6_rx(struct kunit *test)
{
	burst_split(test, true, false, burst_write, ARRAY_SIZE(burst_write));
}

/* Two packets of one length, then the most a burst holds, 64. */
static void burst_split_counts(struct kunit *test)
{
	struct burst_pkt_spec *specs;
	unsigned int i;

	specs = kunit_kcalloc(test, BURST_MAX_COUNT, sizeof(*specs),
			      GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, specs);
	for (i = 0; i < BURST_MAX_COUNT; i++)
		specs[i] = (struct burst_pkt_spec){ OP_WRITE_MIDDLE, false, 900 };
	burst_split(test, false, true, specs, 2);
	burst_split(test, true, true, specs, 2);
	burst_split(test, false, true, specs, BURST_MAX_COUNT);
	burst_split(test, true, true, specs, BURST_MAX_COUNT);
}

/* Free the packets of a burst that was never sent. */
static void burst_free(struct sroce_burst *burst)
{
	kfree_skb(burst->head);
	*burst = (struct sroce_burst){};
}

/* What sroce_burst_fits() refuses, each just past what it takes. */
static void burst_fits_limits(struct kunit *test)
{
	static const struct burst_pkt_spec specs[] = {
		{ OP_WRITE_FIRST, true, 512 },
		{ OP_WRITE_MIDDLE, false, 512 },
		{ OP_WRITE_MIDDLE, false, 512 },
		{ OP_WRITE_MIDDLE, false, 528 },	/* = the first's */
		{ OP_WRITE_MIDDLE, false, 532 },	/* 4 more */
	};
	struct burst_pkt pkts[ARRAY_SIZE(specs)];
	struct sroce_burst burst = {};
	static struct dst_entry other;
	unsigned int len, i;

	burst_build_all(test, false, specs, pkts, ARRAY_SIZE(specs));
	/* An empty burst takes anything. */
	KUNIT_EXPECT_TRUE(test, sroce_burst_fits(&burst, pkts[4].skb, &other,
						 0, 0));
	sroce_burst_add(&burst, pkts[0].skb);
	KUNIT_EXPECT_EQ(test, burst.mss, 12U + 16 + 512 + 4);

	/* Longer than the first: refused; as long: taken. */
	KUNIT_EXPECT_FALSE(test, sroce_burst_fits(&burst, pkts[4].skb, NULL,
						  BURST_MAX_COUNT,
						  BURST_MAX_LEN));
	KUNIT_EXPECT_TRUE(test, sroce_burst_fits(&burst, pkts[3].skb, NULL,
						 BURST_MAX_COUNT,
						 BURST_MAX_LEN));
	/* Another route: refused. */
	KUNIT_EXPECT_FALSE(test, sroce_burst_fits(&burst, pkts[1].skb, &other,
						  BURST_MAX_COUNT,
						  BURST_MAX_LEN));

	sroce_burst_add(&burst, pkts[1].skb);
	KUNIT_EXPECT_EQ(test, burst.count, 2U);
	/* The count limit: a third joins under 3, not under 2. */
	KUNIT_EXPECT_TRUE(test, sroce_burst_fits(&burst, pkts[2].skb, NULL,
						 3, BURST_MAX_LEN));
	KUNIT_EXPECT_FALSE(test, sroce_burst_fits(&burst, pkts[2].skb, NULL,
						  2, BURST_MAX_LEN));
	/* The byte limit counts from the first IP header: exactly fits. */
	len = burst.head->len + 12 + 512 + 4;
	KUNIT_EXPECT_EQ(test, len, 20U + 8 + 12 + 16 + 512 + 4 + 12 + 512 + 4 +
			12 + 512 + 4);
	KUNIT_EXPECT_TRUE(test, sroce_burst_fits(&burst, pkts[2].skb, NULL,
						 BURST_MAX_COUNT, len));
	KUNIT_EXPECT_FALSE(test, sroce_burst_fits(&burst, pkts[2].skb, NULL,
						  BURST_MAX_COUNT, len - 1));
	sroce_burst_add(&burst, pkts[2].skb);
	KUNIT_EXPECT_EQ(test, burst.head->len, len);
	KUNIT_EXPECT_EQ(test, burst.head->data_len, len - pkts[0].len);
	KUNIT_EXPECT_PTR_EQ(test, skb_shinfo(burst.head)->frag_list,
			    pkts[1].skb);
	KUNIT_EXPECT_PTR_EQ(test, burst.tail, pkts[2].skb);
	KUNIT_EXPECT_PTR_EQ(test, pkts[1].skb->next, pkts[2].skb);
	/* Joined packets start at their UDP payload, as GRO leaves them. */
	for (i = 1; i < 3; i++)
		KUNIT_EXPECT_EQ(test, pkts[i].skb->data[0], OP_WRITE_MIDDLE);
	burst_free(&burst);
	kfree_skb(pkts[3].skb);
	kfree_skb(pkts[4].skb);
}

/* A burst of one leaves as the plain packet it is. */
static void burst_one_not_sealed(struct kunit *test)
{
	static const struct burst_pkt_spec spec = { OP_WRITE_FIRST, true, 256 };
	struct sroce_burst burst = {};
	struct burst_pkt pkt;

	burst_build_all(test, false, &spec, &pkt, 1);
	sroce_burst_add(&burst, pkt.skb);
	KUNIT_EXPECT_FALSE(test, sroce_burst_seal(&burst));
	KUNIT_EXPECT_FALSE(test, skb_is_gso(pkt.skb));
	KUNIT_EXPECT_EQ(test, skb_shinfo(pkt.skb)->gso_type, 0U);
	KUNIT_EXPECT_NULL(test, skb_shinfo(pkt.skb)->frag_list);
	KUNIT_EXPECT_EQ(test, (unsigned int)pkt.skb->ip_summed,
			(unsigned int)CHECKSUM_NONE);
	KUNIT_EXPECT_EQ(test, pkt.skb->len, pkt.len);
	SROCE_EXPECT_BYTES(test, pkt.skb->data, pkt.bytes, pkt.len, "packet");
	burst_free(&burst);
}

static struct kunit_case sroce_burst_cases[] = {
	KUNIT_CASE(burst_split_ipv4_tx),
	KUNIT_CASE(burst_split_ipv4_rx),
	KUNIT_CASE(burst_split_ipv6_tx),
	KUNIT_CASE(burst_split_ipv6_rx),
	KUNIT_CASE(burst_split_counts),
	KUNIT_CASE(burst_fits_limits),
	KUNIT_CASE(burst_one_not_sealed),
	{}
};

static struct kunit_suite sroce_burst_suite = {
	.name = "sroce_burst",
	.test_cases = sroce_burst_cases,
};

kunit_test_suite(sroce_burst_suite);
