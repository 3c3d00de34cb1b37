// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Building and transmitting RoCEv2 packets: the transport headers, then
 * UDP, IP, the ICRC, a route and ip_local_out().
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/if_arp.h>
#include <linux/if_vlan.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/moduleparam.h>
#include <linux/udp.h>
#include <net/dst.h>
#include <net/ip.h>
#include <net/ip6_checksum.h>
#include <net/inet_ecn.h>
#include <net/ip6_route.h>
#include <net/ipv6.h>
#include <net/ipv6_stubs.h>
#include <net/neighbour.h>
#include <net/route.h>
#include <net/udp.h>
#include <rdma/ib_cache.h>

#include "ah.h"
#include "burst.h"
#include "cc.h"
#include "finj.h"
#include "qp.h"
#include "sroce.h"
#include "stats.h"
#include "txflow.h"
#include "xmit.h"

#define SROCE_L3_ROOM	(sizeof(struct ipv6hdr) + sizeof(struct udphdr))

/*
 * Zero-copy transmit: -1 (auto) attaches payload by page when the device's
 * netdev has scatter/gather, 1 always, 0 never. Without scatter/gather the
 * core linearises each such packet, a copy plus a reallocation, which
 * costs more than the copy it replaces.
 */
static int sroce_zcopy = -1;
module_param_named(zcopy, sroce_zcopy, int, 0644);
MODULE_PARM_DESC(zcopy,
		 "Attach the payload of large packets as page fragments of the registered memory: -1 when the netdev has scatter/gather (default), 1 always, 0 never (copy)");

/*
 * Below this a copy costs less than what a fragment adds: a page
 * reference, a fragment descriptor, the separate pad and ICRC buffer and
 * a fragment walk for the ICRC.
 */
static unsigned int sroce_zcopy_min_bytes = 512;
module_param_named(zcopy_min_bytes, sroce_zcopy_min_bytes, uint, 0644);
MODULE_PARM_DESC(zcopy_min_bytes,
		 "Payloads shorter than this are copied even with zero-copy transmit on (default: 512)");

/**
 * sroce_pkt_zcopy_wanted() - whether a payload is worth attaching by page
 * @qp: the sending QP
 * @payload: its bytes
 *
 * Below a few hundred bytes a copy costs less than the page references,
 * the fragment descriptors and the separate ICRC buffer. With the zcopy
 * parameter at auto, the netdev the device is bound to must have
 * scatter/gather: routed out of another device, a packet is linearised by
 * the core if that one lacks it, which is correct, only slower.
 *
 * Return: true when zero-copy transmit is on and @payload is large enough.
 */
bool sroce_pkt_zcopy_wanted(const struct sroce_qp *qp, u32 payload)
{
	int mode = READ_ONCE(sroce_zcopy);

	if (!mode || !payload || payload < READ_ONCE(sroce_zcopy_min_bytes))
		return false;
	return mode > 0 || (READ_ONCE(qp->sdev->ndev->features) & NETIF_F_SG);
}

/*
 * An skb with @size bytes of linear room. A packet of a full path MTU of
 * 4096 needs some 4.7 KiB with the skb's shared info, which kmalloc()
 * rounds up to 8 KiB; with init_on_alloc (on by default in Debian's
 * kernels) every such allocation is zeroed in full before the payload is
 * copied over it. Above a kilobyte the head comes instead from the per-CPU
 * page fragment cache, as the kernel's netdev_alloc_skb() does up to a
 * page: exact size, zeroed only when the cache takes a new 32 KiB page,
 * and a page whose fragments have all been freed is used again as it is.
 * Every byte of the packet is written before it is sent. Where the cache
 * holds a single page (memory is short) a head larger than that falls back
 * to kmalloc().
 */
static struct sk_buff *sroce_pkt_skb(unsigned int size)
{
	unsigned int fragsz = SKB_DATA_ALIGN(size) +
			      SKB_DATA_ALIGN(sizeof(struct skb_shared_info));
	struct sk_buff *skb;
	void *data;

	if (fragsz <= SZ_1K || fragsz > PAGE_FRAG_CACHE_MAX_SIZE)
		return alloc_skb(size, GFP_ATOMIC);
	data = netdev_alloc_frag(fragsz);
	if (unlikely(!data))
		return alloc_skb(size, GFP_ATOMIC);
	skb = build_skb(data, fragsz);
	if (unlikely(!skb))
		skb_free_frag(data);
	return skb;
}

/*
 * Allocate a packet with its headers zeroed and room for @linear bytes
 * after them, and set up @pkt for it.
 */
static struct sk_buff *sroce_pkt_start(struct sroce_qp *qp,
				       struct sroce_pkt *pkt, u8 opcode,
				       u32 payload, unsigned int linear)
{
	const struct sroce_opcode_info *info = sroce_opcode_get(opcode);
	unsigned int hdr_len = sizeof(struct sroce_bth);
	struct net_device *ndev = qp->sdev->ndev;
	/* Room for an 802.1Q tag too: see sroce_vlan_out(). */
	unsigned int headroom = LL_RESERVED_SPACE(ndev) + VLAN_HLEN +
				SROCE_L3_ROOM;
	struct sk_buff *skb;

	/*
	 * Callers build only opcodes of the table, and CNPs (a BTH, the
	 * rest their payload); a miss is a driver bug.
	 */
	if (opcode != SROCE_OP_CNP) {
		if (WARN_ON_ONCE(!info))
			return NULL;
		hdr_len = info->hdr_len;
	}
	skb = sroce_pkt_skb(headroom + hdr_len + linear + ndev->needed_tailroom);
	if (unlikely(!skb))
		return NULL;
	skb_reserve(skb, headroom);
	skb_put_zero(skb, hdr_len);

	memset(pkt, 0, sizeof(*pkt));
	pkt->skb = skb;
	pkt->info = info;
	pkt->payload = payload;
	pkt->bth.opcode = opcode;
	pkt->bth.pad = (4 - (payload & 3)) & 3;
	pkt->bth.pkey = SROCE_DEFAULT_PKEY;
	pkt->bth.tver = SROCE_TVER;
	return skb;
}

/**
 * sroce_pkt_alloc() - start a packet
 * @qp: the QP sending it
 * @pkt: the packet to set up
 * @opcode: its opcode, one sroce speaks or SROCE_OP_CNP
 * @payload: bytes of payload the caller will write
 *
 * Context: any; allocates atomically.
 * Return: where the caller writes the payload, or NULL when out of memory.
 */
void *sroce_pkt_alloc(struct sroce_qp *qp, struct sroce_pkt *pkt, u8 opcode,
		      u32 payload)
{
	unsigned int pad = (4 - (payload & 3)) & 3;

	if (!sroce_pkt_start(qp, pkt, opcode, payload,
			     payload + pad + SROCE_ICRC_LEN))
		return NULL;
	return skb_put(pkt->skb, payload);
}

/**
 * sroce_pkt_alloc_frags() - start a packet whose payload goes by reference
 * @qp: the QP sending it
 * @pkt: the packet to set up
 * @opcode: its opcode, one with a payload
 * @payload: bytes of payload the caller will attach with
 *	sroce_pkt_add_page()
 *
 * The headers are in the linear part; the pad and the ICRC, which must
 * follow the payload, get a small buffer of their own from the per-CPU
 * fragment cache, attached last by sroce_pkt_send().
 *
 * Context: any; allocates atomically.
 * Return: 0, or -ENOMEM.
 */
int sroce_pkt_alloc_frags(struct sroce_qp *qp, struct sroce_pkt *pkt,
			  u8 opcode, u32 payload)
{
	if (!sroce_pkt_start(qp, pkt, opcode, payload, 0))
		return -ENOMEM;
	pkt->tail = netdev_alloc_frag(pkt->bth.pad + SROCE_ICRC_LEN);
	if (unlikely(!pkt->tail)) {
		sroce_pkt_free(pkt);
		return -ENOMEM;
	}
	memset(pkt->tail, 0, pkt->bth.pad);
	return 0;
}

/**
 * sroce_pkt_add_page() - attach payload bytes of a page to a packet
 * @pkt: a packet from sroce_pkt_alloc_frags()
 * @page: the page; it gets a reference of the packet's, so that it
 *	outlives the packet whatever happens to the region it belongs to
 * @off: offset of the bytes in @page
 * @len: their count, within @page
 *
 * Bytes that continue the last fragment extend it.
 *
 * Context: any.
 * Return: 0, or -EOPNOTSUPP when the packet has no fragment left (one stays
 * for the ICRC): the caller then copies the payload instead.
 */
int sroce_pkt_add_page(struct sroce_pkt *pkt, struct page *page,
		       unsigned int off, unsigned int len)
{
	struct sk_buff *skb = pkt->skb;
	int i = skb_shinfo(skb)->nr_frags;

	if (skb_can_coalesce(skb, i, page, off)) {
		skb_frag_size_add(&skb_shinfo(skb)->frags[i - 1], len);
	} else {
		if (i >= MAX_SKB_FRAGS - 1)
			return -EOPNOTSUPP;
		get_page(page);
		skb_fill_page_desc(skb, i, page, off, len);
	}
	skb->len += len;
	skb->data_len += len;
	skb->truesize += len;
	return 0;
}

/*
 * Attach the pad and ICRC buffer of a zero-copy packet after its payload.
 * Return: where the ICRC goes.
 */
static __le32 *sroce_pkt_add_tail(struct sroce_pkt *pkt)
{
	struct sk_buff *skb = pkt->skb;
	unsigned int len = pkt->bth.pad + SROCE_ICRC_LEN;
	struct page *page = virt_to_head_page(pkt->tail);
	void *tail = pkt->tail;

	/* The reference netdev_alloc_frag() gave goes to the fragment. */
	skb_fill_page_desc(skb, skb_shinfo(skb)->nr_frags, page,
			   tail - page_address(page), len);
	skb->len += len;
	skb->data_len += len;
	skb->truesize += len;
	/*
	 * The payload's pages are the consumer's, who may write them while
	 * the packet is queued: whoever would change a fragment in place
	 * (a checksum, a transform) must copy it first.
	 */
	skb_shinfo(skb)->flags |= SKBFL_SHARED_FRAG;
	pkt->tail = NULL;
	return tail + pkt->bth.pad;
}

/*
 * The ICRC of a packet whose network header is at skb->data: a GRH (RoCE
 * v1), an IPv6 or an IPv4 header. The headers up to the BTH are linear, and
 * so is the rest of a packet whose payload CRC @pkt has.
 */
static __le32 sroce_pkt_icrc(struct sk_buff *skb, const struct sroce_pkt *pkt,
			     bool grh, bool ipv6)
{
	unsigned int len = skb->len - SROCE_ICRC_LEN;
	unsigned int hdrs = sizeof(struct sroce_bth);
	u32 crc;

	if (!skb_is_nonlinear(skb) && !pkt->payload_crc_set)
		return grh ? sroce_icrc_packet_grh(skb->data, len) :
			     sroce_icrc_packet(skb->data, ipv6, len);
	if (grh) {
		hdrs += sizeof(struct ipv6hdr);
		crc = sroce_icrc_hdr_grh(skb->data);
	} else {
		hdrs += sizeof(struct udphdr) +
			(ipv6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr));
		crc = sroce_icrc_hdr(skb->data, ipv6);
	}
	if (pkt->payload_crc_set) {
		/* The extension headers, then the payload's CRC, then the pad. */
		unsigned int ext = len - hdrs - pkt->payload - pkt->bth.pad;
		const u8 *pad = skb->data + hdrs + ext + pkt->payload;

		crc = sroce_icrc_update(crc, skb->data + hdrs, ext);
		crc = sroce_icrc_combine(crc, pkt->payload_crc, pkt->payload);
		crc = sroce_icrc_update(crc, pad, pkt->bth.pad);
	} else {
		crc = sroce_icrc_skb(crc, skb, hdrs, len - hdrs);
	}
	return sroce_icrc_final(crc);
}

/**
 * sroce_pkt_hdr() - where an extension header of a packet being built goes
 * @pkt: the packet
 * @hdr: the header; the opcode must have it
 *
 * Return: the header's location.
 */
void *sroce_pkt_hdr(struct sroce_pkt *pkt, enum sroce_hdr hdr)
{
	return pkt->skb->data + pkt->info->offset[hdr];
}

void sroce_pkt_free(struct sroce_pkt *pkt)
{
	kfree_skb(pkt->skb);
	pkt->skb = NULL;
	if (pkt->tail) {
		skb_free_frag(pkt->tail);
		pkt->tail = NULL;
	}
}

static struct dst_entry *sroce_route4(struct sroce_qp *qp,
				      const struct sroce_av *av, bool cache)
{
	struct net *net = qp->sdev->net;
	struct flowi4 fl = {
		.flowi4_proto = IPPROTO_UDP,
		.daddr = av->daddr.s6_addr32[3],
		.saddr = av->saddr.s6_addr32[3],
	};
	struct rtable *rt;
	__be32 saddr;

	/* A multicast group is reached through the device's own netdev. */
	if (ipv4_is_multicast(fl.daddr))
		fl.flowi4_oif = qp->sdev->ndev->ifindex;
	if (cache) {
		rt = dst_cache_get_ip4(&qp->dst_cache, &saddr);
		if (rt)
			return &rt->dst;
	}
	rt = ip_route_output_key(net, &fl);
	if (IS_ERR(rt))
		return ERR_CAST(rt);
	if (cache)
		dst_cache_set_ip4(&qp->dst_cache, &rt->dst, fl.saddr);
	return &rt->dst;
}

/*
 * The netdev of the source GID: the link a link-local destination is on.
 * A base device's GID table holds the link-local GIDs of its VLAN uppers
 * too, and without it the route would take the first link whose table
 * knows the prefix, untagged.
 */
static int sroce_av_ifindex(const struct sroce_av *av)
{
	struct net_device *ndev;
	int ifindex = 0;

	rcu_read_lock();
	ndev = rdma_read_gid_attr_ndev_rcu(av->sgid_attr);
	if (!IS_ERR(ndev))
		ifindex = ndev->ifindex;
	rcu_read_unlock();
	return ifindex;
}

static struct dst_entry *sroce_route6(struct sroce_qp *qp,
				      const struct sroce_av *av, bool cache)
{
	struct net *net = qp->sdev->net;
	struct flowi6 fl = {
		.flowi6_proto = IPPROTO_UDP,
		.daddr = av->daddr,
		.saddr = av->saddr,
	};
	struct dst_entry *dst;
	struct sock *sk;

	if (!IS_ENABLED(CONFIG_IPV6))
		return ERR_PTR(-EAFNOSUPPORT);
	if (ipv6_addr_is_multicast(&fl.daddr))
		fl.flowi6_oif = qp->sdev->ndev->ifindex;
	else if (ipv6_addr_type(&fl.daddr) & IPV6_ADDR_LINKLOCAL)
		fl.flowi6_oif = sroce_av_ifindex(av);
	if (cache) {
		dst = dst_cache_get_ip6(&qp->dst_cache, &fl.saddr);
		if (dst)
			return dst;
	}
	sk = sroce_net_sk(net);
	if (!sk)
		return ERR_PTR(-ENETUNREACH);
	dst = ipv6_stub->ipv6_dst_lookup_flow(net, sk, &fl, NULL);
	if (IS_ERR(dst))
		return dst;
	if (cache)
		dst_cache_set_ip6(&qp->dst_cache, dst, &fl.saddr);
	return dst;
}

static void sroce_push_udp(struct sk_buff *skb, u16 sport)
{
	struct udphdr *udp;

	udp = skb_push(skb, sizeof(*udp));
	skb_reset_transport_header(skb);
	udp->source = htons(sport);
	udp->dest = htons(SROCE_UDP_PORT);
	udp->len = htons(skb->len);
	/* RoCEv2 over IPv4 leaves the UDP checksum to the ICRC. */
	udp->check = 0;
}

static void sroce_push_ip4(struct sk_buff *skb, const struct sroce_av *av,
			   u8 tclass)
{
	struct iphdr *ip;

	ip = skb_push(skb, sizeof(*ip));
	skb_reset_network_header(skb);
	ip->version = 4;
	ip->ihl = sizeof(*ip) >> 2;
	ip->tos = tclass;
	ip->tot_len = htons(skb->len);
	ip->id = 0;
	ip->frag_off = htons(IP_DF);
	ip->ttl = av->hop_limit;
	ip->protocol = IPPROTO_UDP;
	ip->check = 0;
	ip->saddr = av->saddr.s6_addr32[3];
	ip->daddr = av->daddr.s6_addr32[3];
	skb->protocol = htons(ETH_P_IP);
}

/* An IPv6 header, or a RoCE v1 GRH, which has the same layout. */
static void sroce_push_ip6(struct sk_buff *skb, const struct sroce_av *av,
			   u8 tclass, u8 nexthdr)
{
	struct ipv6hdr *ip6;

	ip6 = skb_push(skb, sizeof(*ip6));
	skb_reset_network_header(skb);
	ip6_flow_hdr(ip6, tclass, htonl(av->flow_label));
	ip6->payload_len = htons(skb->len - sizeof(*ip6));
	ip6->nexthdr = nexthdr;
	ip6->hop_limit = av->hop_limit;
	ip6->saddr = av->saddr;
	ip6->daddr = av->daddr;
	skb->protocol = htons(ETH_P_IPV6);
}

/*
 * Count a packet leaving, its bytes from the BTH at @bth_off on (what
 * PortXmitData counts), and hand it to fault injection; true: it took it.
 */
static bool sroce_pkt_leaves(struct sroce_qp *qp, struct sk_buff *skb,
			     unsigned int bth_off)
{
	sroce_pkt_track(qp, skb);
	sroce_stat_inc(qp->sdev, SROCE_STAT_TX_PACKETS);
	sroce_stat_add(qp->sdev, SROCE_STAT_TX_BYTES, skb->len - bth_off);
	return sroce_finj_tx(qp, skb);
}

/*
 * What sroce_pkt_send() returns for what the layer below returned: its
 * errno, -ENOBUFS when the local queue dropped the packet, else 0.
 */
static int sroce_pkt_sent_status(struct sroce_qp *qp, int err)
{
	if (err < 0)
		return err;
	if (net_xmit_eval(err)) {
		sroce_stat_inc(qp->sdev, SROCE_STAT_TX_QUEUE_FULL);
		return -ENOBUFS;
	}
	return 0;
}

/*
 * RoCE v1: the GRH (an IPv6 header whose next header is the BTH) right
 * behind an Ethernet header to the address the RDMA core resolved, on the
 * netdev of the source GID. No IP routing: the path is one link.
 */
static int sroce_pkt_send_v1(struct sroce_qp *qp, const struct sroce_av *av,
			     const struct sroce_pkt *pkt, struct sk_buff *skb,
			     __le32 *icrc)
{
	struct net_device *ndev;
	int err;

	skb_reset_transport_header(skb);
	sroce_push_ip6(skb, av, av->tclass, SROCE_GRH_NEXT_BTH);
	*icrc = sroce_pkt_icrc(skb, pkt, true, true);

	rcu_read_lock();
	ndev = rdma_read_gid_attr_ndev_rcu(av->sgid_attr);
	if (IS_ERR(ndev) || !(ndev->flags & IFF_UP)) {
		rcu_read_unlock();
		sroce_stat_inc(qp->sdev, SROCE_STAT_TX_NO_ROUTE);
		kfree_skb(skb);
		return -ENETUNREACH;
	}
	skb->dev = ndev;
	skb->protocol = htons(ETH_P_IBOE);
	/* For the qdiscs; out of a VLAN device, its egress-qos-map applies. */
	skb->priority = av->sl;
	skb->ip_summed = CHECKSUM_NONE;
	err = dev_hard_header(skb, ndev, ETH_P_IBOE, av->dmac, ndev->dev_addr,
			      skb->len);
	rcu_read_unlock();
	if (err < 0) {
		sroce_stat_inc(qp->sdev, SROCE_STAT_TX_NO_ROUTE);
		kfree_skb(skb);
		return -ENETUNREACH;
	}
	skb_reset_mac_header(skb);
	if (sroce_pkt_leaves(qp, skb, skb_transport_offset(skb)))
		return 0;
	/* The netdev stays: the GID entry the AV holds keeps it. */
	return sroce_pkt_sent_status(qp, dev_queue_xmit(skb));
}

/*
 * The frame of a packet routed out of a VLAN device, tagged here rather than
 * by the VLAN device.
 *
 * A RoCE NIC puts the service level of the address vector in the 802.1p
 * priority of the tag (the RDMA CM chooses the SL from the ToS through the
 * VLAN device's egress-qos-map for that reason). The VLAN device's own
 * transmit would overwrite the priority with the one its egress-qos-map
 * gives skb->priority, which is nothing by default. So once the route is
 * known and the neighbour resolved, sroce writes the Ethernet header and
 * the tag (VLAN ID of the device, priority the SL kept in skb->priority)
 * and queues the frame on the VLAN device's real device, as the VLAN
 * device would have. The IP output path after routing (netfilter's output
 * hooks, the VLAN device's counters) does not see these frames, as it
 * does not see a RoCE NIC's.
 *
 * Return: false when the frame cannot be tagged here and must go through
 * the IP layer (not unicast, nested tags, a neighbour not resolved yet:
 * the IP layer resolves it, and that frame takes the egress-qos-map's
 * priority); true when the packet was consumed, and @ret is then what
 * dev_queue_xmit() returned.
 */
static bool sroce_vlan_out(struct sk_buff *skb, bool ipv6, int *ret)
{
	struct dst_entry *dst = skb_dst(skb);
	struct net_device *vdev = dst->dev, *real;
	u8 ha[MAX_ADDR_LEN];
	struct neighbour *n;
	u16 tci;

	if (!is_vlan_dev(vdev) || dst_xfrm(dst))
		return false;
	real = vlan_dev_real_dev(vdev);
	if (is_vlan_dev(real) || real->type != ARPHRD_ETHER)
		return false;
	if (ipv6 ? ipv6_addr_is_multicast(&ipv6_hdr(skb)->daddr) :
		   skb_rtable(skb)->rt_type != RTN_UNICAST)
		return false;

	n = dst_neigh_lookup_skb(dst, skb);
	if (!n)
		return false;
	/* Also moves a stale entry on to be confirmed again. */
	if (neigh_event_send(n, NULL)) {
		neigh_release(n);
		return false;
	}
	neigh_ha_snapshot(ha, n, vdev);
	neigh_release(n);

	if (skb_cow_head(skb, LL_RESERVED_SPACE(real) + VLAN_HLEN))
		return false;
	/*
	 * __ip_local_out() would have written the length, for a burst that of
	 * all its packets (see burst.c), and the header checksum.
	 */
	if (ipv6) {
		ipv6_hdr(skb)->payload_len = htons(skb->len -
						   sizeof(struct ipv6hdr));
	} else {
		ip_hdr(skb)->tot_len = htons(skb->len);
		ip_send_check(ip_hdr(skb));
	}
	if (dev_hard_header(skb, real, ntohs(skb->protocol), ha,
			    vdev->dev_addr, skb->len) < 0) {
		kfree_skb(skb);
		*ret = NET_XMIT_DROP;
		return true;
	}
	skb->dev = real;
	tci = vlan_dev_vlan_id(vdev) |
	      ((skb->priority & 7) << VLAN_PRIO_SHIFT);
	__vlan_hwaccel_put_tag(skb, vlan_dev_vlan_proto(vdev), tci);
	*ret = dev_queue_xmit(skb);
	return true;
}

/*
 * Hand a finished, routed packet (or burst) to the IP layer, or, out of a
 * VLAN device, tag the frame here (see sroce_vlan_out()).
 */
static int sroce_ip_emit(struct net *net, struct sk_buff *skb)
{
	bool ipv6 = skb->protocol == htons(ETH_P_IPV6);
	int ret;

	if (sroce_vlan_out(skb, ipv6, &ret))
		return ret;
	return ipv6 ? ip6_local_out(net, NULL, skb) :
		      ip_local_out(net, NULL, skb);
}

/**
 * sroce_ip_out() - transmit a finished, routed RoCEv2 packet
 * @net: the namespace of the sending device
 * @skb: the packet: IP header on, route set, skb->priority the SL
 *
 * Fills in the UDP checksum of IPv6, then hands the packet to the IP
 * layer, or, out of a VLAN device, tags the frame itself (see
 * sroce_vlan_out()).
 *
 * Context: any, with bottom halves disabled.
 * Return: what ip_local_out() or dev_queue_xmit() returned.
 */
int sroce_ip_out(struct net *net, struct sk_buff *skb)
{
	if (skb->protocol == htons(ETH_P_IPV6)) {
		const struct ipv6hdr *ip6 = ipv6_hdr(skb);

		udp6_set_csum(false, skb, &ip6->saddr, &ip6->daddr,
			      skb->len - sizeof(*ip6));
	}
	return sroce_ip_emit(net, skb);
}

/* Count the payload of a data packet as attached by page or copied. */
static void sroce_pkt_count(struct sroce_qp *qp, const struct sroce_pkt *pkt,
			    bool zcopy)
{
	if (!pkt->payload || !pkt->info ||
	    !(pkt->info->flags & SROCE_OPF_PAYLOAD))
		return;
	sroce_stat_inc(qp->sdev, zcopy ? SROCE_STAT_TX_ZCOPY_PACKETS :
					 SROCE_STAT_TX_COPY_PACKETS);
	sroce_stat_add(qp->sdev, zcopy ? SROCE_STAT_TX_ZCOPY_BYTES :
					 SROCE_STAT_TX_COPY_BYTES, pkt->payload);
}

/**
 * sroce_pkt_emit() - transmit a finished packet or burst of a QP whose
 *	checksums are all complete
 * @qp: the sending QP
 * @skb: the packet: IP header on, route set
 *
 * Context: any, with bottom halves disabled.
 * Return: as sroce_pkt_send().
 */
int sroce_pkt_emit(struct sroce_qp *qp, struct sk_buff *skb)
{
	return sroce_pkt_sent_status(qp, sroce_ip_emit(qp->sdev->net, skb));
}

/*
 * The full UDP checksum of an IPv6 packet of a burst, computed here: the
 * split of a burst leaves none for the device to finish.
 */
static void sroce_udp6_csum(struct sk_buff *skb)
{
	const struct ipv6hdr *ip6 = ipv6_hdr(skb);
	unsigned int off = skb_transport_offset(skb);
	unsigned int len = skb->len - off;
	struct udphdr *udp = udp_hdr(skb);

	udp->check = 0;
	udp->check = csum_ipv6_magic(&ip6->saddr, &ip6->daddr, len,
				     IPPROTO_UDP, skb_checksum(skb, off, len, 0));
	if (!udp->check)
		udp->check = CSUM_MANGLED_0;
}

/*
 * Finish a packet and transmit it, or, with @burst, add it to the burst,
 * pushing the burst out first when the packet cannot join it.
 */
static int sroce_pkt_xmit(struct sroce_qp *qp, const struct sroce_av *av,
			  struct sroce_pkt *pkt, u32 dqpn,
			  struct sroce_burst *burst)
{
	struct sk_buff *skb = pkt->skb;
	bool cache = av == &qp->av;
	struct dst_entry *dst;
	__le32 *icrc;
	u8 tclass;
	int err;

	pkt->bth.dqpn = dqpn;
	sroce_bth_pack((struct sroce_bth *)skb->data, &pkt->bth);
	if (pkt->tail) {
		sroce_pkt_count(qp, pkt, true);
		icrc = sroce_pkt_add_tail(pkt);
	} else {
		sroce_pkt_count(qp, pkt, false);
		skb_put_zero(skb, pkt->bth.pad);
		icrc = skb_put(skb, SROCE_ICRC_LEN);
	}
	pkt->skb = NULL;
	if (av->v1)
		return sroce_pkt_send_v1(qp, av, pkt, skb, icrc);

	sroce_push_udp(skb, qp->src_port);
	/* A CNP is not ECN-capable: it must not be marked for a CNP. */
	tclass = pkt->bth.opcode == SROCE_OP_CNP ?
		 av->tclass & ~INET_ECN_MASK : sroce_cc_tclass(qp, av->tclass);
	if (av->ipv6) {
		sroce_push_ip6(skb, av, tclass, IPPROTO_UDP);
		dst = sroce_route6(qp, av, cache);
	} else {
		sroce_push_ip4(skb, av, tclass);
		dst = sroce_route4(qp, av, cache);
	}
	if (IS_ERR(dst)) {
		err = PTR_ERR(dst);
		sroce_stat_inc(qp->sdev, SROCE_STAT_TX_NO_ROUTE);
		kfree_skb(skb);
		return err;
	}
	if (burst && !sroce_burst_route_ok(dst)) {
		sroce_burst_push(qp, burst);
		burst = NULL;
	}
	if (burst) {
		if (!sroce_burst_may_join(burst, skb, dst))
			sroce_burst_push(qp, burst);
		/* The ID the split of the burst will give it; see burst.c. */
		if (!av->ipv6)
			ip_hdr(skb)->id = htons(burst->count);
	}

	*icrc = sroce_pkt_icrc(skb, pkt, false, av->ipv6);
	skb_dst_set(skb, dst);
	skb->dev = dst->dev;
	skb->ip_summed = CHECKSUM_NONE;
	/* For the qdiscs, and the 802.1p priority of a VLAN's frames. */
	skb->priority = av->sl;
	/* The UDP checksum covers the ICRC: after it. */
	if (burst && av->ipv6)
		sroce_udp6_csum(skb);
	if (sroce_pkt_leaves(qp, skb, skb_transport_offset(skb) +
			     sizeof(struct udphdr)))
		return 0;
	if (burst) {
		sroce_burst_add(burst, skb);
		return 0;
	}
	return sroce_pkt_sent_status(qp, sroce_ip_out(qp->sdev->net, skb));
}

/**
 * sroce_pkt_send() - finish a packet and transmit it
 * @qp: the sending QP
 * @av: the destination
 * @pkt: the packet; consumed whatever the outcome
 * @dqpn: the destination QP number
 *
 * Context: any, with bottom halves disabled.
 * Return: 0, -ENOBUFS when the local transmit queue dropped it, or another
 * negative errno when the packet could not be routed. A packet dropped
 * further on is the transport's to recover.
 */
int sroce_pkt_send(struct sroce_qp *qp, const struct sroce_av *av,
		   struct sroce_pkt *pkt, u32 dqpn)
{
	return sroce_pkt_xmit(qp, av, pkt, dqpn, NULL);
}

/**
 * sroce_pkt_queue() - finish a packet and add it to a burst
 * @qp: the sending QP
 * @av: the destination
 * @pkt: the packet; consumed whatever the outcome
 * @dqpn: the destination QP number
 * @burst: the burst of the caller, who flushes it (sroce_burst_flush())
 *	before it lets go of the lock that serialises its packets
 *
 * Packets to the QP's own destination over RoCEv2 join the burst; any other
 * goes at once, after the burst, so that the QP's packets keep their order.
 *
 * Context: any, with bottom halves disabled.
 * Return: as sroce_pkt_send() for a packet sent at once; 0 for one that
 * joined the burst, whose fate sroce_burst_flush() tells.
 */
int sroce_pkt_queue(struct sroce_qp *qp, const struct sroce_av *av,
		    struct sroce_pkt *pkt, u32 dqpn, struct sroce_burst *burst)
{
	if (av != &qp->av || av->v1 || !sroce_burst_enabled()) {
		sroce_burst_push(qp, burst);
		burst = NULL;
	}
	return sroce_pkt_xmit(qp, av, pkt, dqpn, burst);
}
