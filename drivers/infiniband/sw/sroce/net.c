// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The RoCEv2 UDP socket: one per network namespace that has sroce devices,
 * bound to port 4791 on all addresses of both IP versions.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <net/netns/generic.h>
#include <net/net_namespace.h>
#include <net/udp_tunnel.h>

#include <linux/if_vlan.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <net/ipv6.h>

#include <sroce/gro.h>
#include <sroce/wire.h>
#include "cc.h"
#include "comp.h"
#include "finj.h"
#include "gro.h"
#include "mcast.h"
#include "qp.h"
#include "resp.h"
#include "rx.h"
#include "sroce.h"
#include "stats.h"
#include "xmit.h"

/**
 * struct sroce_net - sroce's state in one network namespace
 * @lock: serializes socket creation and release
 * @sock: the UDP tunnel socket, NULL while no device uses the namespace
 * @users: devices in the namespace; under @lock
 */
struct sroce_net {
	struct mutex	lock;	/* protects sock and users */
	struct socket	*sock;
	unsigned int	users;
};

/* The P_Key bits that name the partition; the top one is membership. */
#define SROCE_PKEY_BASE_MASK	0x7fff

static unsigned int sroce_net_id __read_mostly;

static struct sroce_net *sroce_net(struct net *net)
{
	return net_generic(net, sroce_net_id);
}

/*
 * The smallest payload placed before its packet's ICRC is checked: below
 * it the pass saved is not worth the check's bookkeeping.
 */
#define SROCE_RX_ICRC_LATE_MIN	256

static bool sroce_icrc_in_copy = true;
module_param_named(icrc_in_copy, sroce_icrc_in_copy, bool, 0644);
MODULE_PARM_DESC(icrc_in_copy,
		 "Check the ICRC of middle and last packets of SENDs, WRITEs and READ responses in the copy that places them (default: on)");

/**
 * struct sroce_rx_cb - the ICRC check of a packet placed before it is done
 * @hdr_crc: the running CRC over everything in front of the payload
 * @icrc: the ICRC the packet carries
 * @payload_off: offset of the payload from the UDP header
 * @payload: payload bytes; the pad and the ICRC follow
 * @pending: the check is still to be done; false for every other packet
 *
 * Kept in the skb's control buffer from reception until the packet's
 * handler places the payload (sroce_rx_icrc_begin()) or does anything else
 * with it (sroce_rx_icrc_end()), including after a wait in a backlog.
 */
struct sroce_rx_cb {
	u32	hdr_crc;
	__le32	icrc;
	u16	payload_off;
	u16	payload;
	bool	pending;
};

static struct sroce_rx_cb *sroce_rx_cb(struct sk_buff *skb)
{
	BUILD_BUG_ON(sizeof(struct sroce_rx_cb) > sizeof(skb->cb));
	return (struct sroce_rx_cb *)skb->cb;
}

/* The ICRC's running CRC over the headers up to the BTH's end. */
static u32 sroce_rx_icrc_start(struct sk_buff *skb, bool ipv6)
{
	if (skb->protocol == htons(ETH_P_IBOE))
		return sroce_icrc_hdr_grh(skb_network_header(skb));
	return sroce_icrc_hdr(skb_network_header(skb), ipv6);
}

/* Offset of the bytes after the BTH from the UDP header. */
#define SROCE_RX_AFTER_BTH	(sizeof(struct udphdr) + sizeof(struct sroce_bth))

/*
 * Check the ICRC; the headers up to the BTH are in the linear part.
 * Return: 0 when it matches, else the ICRC the packet should have had.
 */
static u32 sroce_icrc_check(struct sk_buff *skb, bool ipv6, __le32 *icrc)
{
	u32 crc;

	if (skb_copy_bits(skb, skb->len - SROCE_ICRC_LEN, icrc, sizeof(*icrc)))
		return 1;
	crc = sroce_icrc_skb(sroce_rx_icrc_start(skb, ipv6), skb,
			     SROCE_RX_AFTER_BTH,
			     skb->len - SROCE_RX_AFTER_BTH - SROCE_ICRC_LEN);
	return sroce_icrc_final(crc) == *icrc ? 0 :
	       le32_to_cpu(sroce_icrc_final(crc)) ?: 1;
}

/* Count and report a packet whose ICRC is not the one computed, @want. */
static void sroce_rx_bad_icrc(struct sroce_dev *sdev, struct sk_buff *skb,
			      __le32 icrc, u32 want)
{
	const struct sroce_bth *bth = (void *)skb->data + sizeof(struct udphdr);
	const struct sroce_opcode_info *info = sroce_opcode_get(bth->opcode);

	sroce_rx_drop(sdev, SROCE_STAT_RX_BAD_ICRC, sroce_bth_qpn(bth),
		      sroce_bth_psn(bth));
	ibdev_warn_ratelimited(&sdev->ibdev,
			       "bad ICRC %08x (expected %08x): %s over %s, %u bytes, dropped\n",
			       le32_to_cpu(icrc), want,
			       info ? info->name : "CNP",
			       skb->protocol == htons(ETH_P_IBOE) ? "RoCE v1" :
			       ip_hdr(skb)->version == 4 ? "IPv4" : "IPv6",
			       skb->len);
}

/*
 * Whether the ICRC check of a packet may wait for the copy of its payload
 * into the destination, which then computes it on the way: a SEND's or
 * WRITE's middle or last packet, or a READ's middle or last response,
 * whose bytes go where the message in progress says, not where the
 * packet's own headers say; its handler places it first only when it fits
 * that message exactly (see sroce_resp_continues() and
 * sroce_comp_read_continues()). A damaged packet so placed leaves its
 * bytes where the good one, sent again, puts its own. An ECN-marked packet
 * is checked first: the mark slows the requester down before placement.
 */
static bool sroce_rx_icrc_may_wait(const struct sroce_opcode_info *info,
				   int len, bool ce)
{
	return READ_ONCE(sroce_icrc_in_copy) && !ce &&
	       len >= SROCE_RX_ICRC_LATE_MIN &&
	       (info->flags & (SROCE_OPF_SEND | SROCE_OPF_WRITE |
			       SROCE_OPF_READ_RESP)) &&
	       (info->flags & (SROCE_OPF_MIDDLE | SROCE_OPF_LAST));
}

/* Record what the check of a packet placed first needs. */
static bool sroce_rx_icrc_wait(struct sk_buff *skb, bool ipv6,
			       unsigned int hdr_len, int len)
{
	struct sroce_rx_cb *cb = sroce_rx_cb(skb);
	unsigned int off = sizeof(struct udphdr) + hdr_len;

	if (len > U16_MAX ||
	    skb_copy_bits(skb, skb->len - SROCE_ICRC_LEN, &cb->icrc,
			  sizeof(cb->icrc)))
		return false;
	/* The extension headers were pulled into the linear part. */
	cb->hdr_crc = sroce_icrc_update(sroce_rx_icrc_start(skb, ipv6),
					skb->data + SROCE_RX_AFTER_BTH,
					off - SROCE_RX_AFTER_BTH);
	cb->payload_off = off;
	cb->payload = len;
	cb->pending = true;
	return true;
}

/**
 * sroce_rx_icrc_begin() - start the ICRC check of a packet being placed
 * @skb: the packet, as its handler has it
 * @crc: where the running CRC is kept
 *
 * Return: @crc, to be given to the copy that places the whole payload in
 * order (sroce_mr_copy_skb(), sroce_sge_scatter_skb()) and then to
 * sroce_rx_icrc_end(); NULL when the packet's ICRC was checked already.
 */
u32 *sroce_rx_icrc_begin(struct sk_buff *skb, u32 *crc)
{
	struct sroce_rx_cb *cb = sroce_rx_cb(skb);

	if (!cb->pending)
		return NULL;
	*crc = cb->hdr_crc;
	return crc;
}

/**
 * sroce_rx_icrc_end() - finish the ICRC check of a packet, if it waits
 * @sdev: the device that received it
 * @skb: the packet
 * @crc: from sroce_rx_icrc_begin(), once the whole payload is placed; NULL
 *	to check the packet from its bytes (anything else its handler does
 *	with it, a failed placement included, waits for this)
 *
 * A bad packet is counted (rx_bad_icrc) and reported; its handler drops
 * it, changing nothing.
 *
 * Return: whether the packet is known good.
 */
bool sroce_rx_icrc_end(struct sroce_dev *sdev, struct sk_buff *skb,
		       const u32 *crc)
{
	struct sroce_rx_cb *cb = sroce_rx_cb(skb);
	unsigned int end, pad;
	u8 buf[4];
	u32 run;

	if (!cb->pending)
		return true;
	cb->pending = false;
	if (crc)
		sroce_stat_inc(sdev, SROCE_STAT_RX_ICRC_IN_COPY);
	end = cb->payload_off + cb->payload;
	run = crc ? *crc : sroce_icrc_skb(cb->hdr_crc, skb, cb->payload_off,
					  cb->payload);
	/* The pad, up to three bytes; a pad not read fails the check. */
	pad = min_t(unsigned int, skb->len - SROCE_ICRC_LEN - end, sizeof(buf));
	if (!skb_copy_bits(skb, end, buf, pad))
		run = sroce_icrc_update(run, buf, pad);
	if (sroce_icrc_final(run) == cb->icrc)
		return true;
	sroce_rx_bad_icrc(sdev, skb, cb->icrc,
			  le32_to_cpu(sroce_icrc_final(run)));
	return false;
}

/* Drop a packet, counted as @reason once its ICRC is known good. */
static void sroce_rx_refuse(struct sroce_dev *sdev, struct sk_buff *skb,
			    enum sroce_stat reason, u32 qpn, u32 psn)
{
	if (sroce_rx_icrc_end(sdev, skb, NULL))
		sroce_rx_drop(sdev, reason, qpn, psn);
}

/* The device a packet is for: the one on its netdev, else by address. */
static struct sroce_dev *sroce_rx_dev(struct net *net, struct sk_buff *skb,
				      bool ipv6)
{
	struct sroce_dev *sdev = sroce_dev_by_netdev(skb->dev);
	union ib_gid dgid;

	if (sdev)
		return sdev;
	/* Looped back to a local address: find the GID's owner. */
	if (ipv6)
		memcpy(&dgid, &ipv6_hdr(skb)->daddr, sizeof(dgid));
	else
		ipv6_addr_set_v4mapped(ip_hdr(skb)->daddr,
				       (struct in6_addr *)&dgid);
	return sroce_dev_by_gid(net, &dgid);
}

static bool sroce_qp_takes(struct sroce_qp *qp,
			   const struct sroce_opcode_info *info)
{
	switch (qp->type) {
	case IB_QPT_RC:
		return info->qpts & SROCE_QPT_RC;
	case IB_QPT_UC:
		return info->qpts & SROCE_QPT_UC;
	case IB_QPT_UD:
		return info->qpts & SROCE_QPT_UD;
	default:
		return false;
	}
}

/*
 * The one partition is the default: a P_Key matches it when its low 15 bits
 * do, whatever the membership bit (IBTA 10.9.3).
 */
static bool sroce_rx_pkey_ok(const struct sroce_bth *bth)
{
	return (be16_to_cpu(bth->pkey) & SROCE_PKEY_BASE_MASK) ==
	       (SROCE_DEFAULT_PKEY & SROCE_PKEY_BASE_MASK);
}

/*
 * Does a packet for a connected QP come from its peer? The source address
 * (a RoCE v1 packet's source GID) must be the destination of the QP's path,
 * in the path's framing; a QP without a path yet takes nothing anyway, and
 * the responder counts that.
 */
static bool sroce_rx_from_peer(struct sroce_qp *qp, struct sk_buff *skb,
			       bool ipv6)
{
	struct in6_addr saddr;
	bool v1;

	if (qp->type == IB_QPT_UD)
		return true;
	switch (READ_ONCE(qp->state)) {
	case IB_QPS_RESET:
	case IB_QPS_INIT:
		return true;
	default:
		break;
	}
	/* A path is RoCE v1 or v2: the peer's packets come the same way. */
	v1 = skb->protocol == htons(ETH_P_IBOE);
	if (qp->av.v1 != v1)
		return false;
	if (ipv6)
		saddr = ipv6_hdr(skb)->saddr;
	else
		ipv6_addr_set_v4mapped(ip_hdr(skb)->saddr, &saddr);
	return ipv6_addr_equal(&saddr, &qp->av.daddr);
}

/*
 * A CNP (congestion notification) for one of the device's RC QPs, from its
 * peer: it slows the QP's requester down. It passes the checks a response
 * to the QP would.
 */
static void sroce_rx_cnp(struct sroce_dev *sdev, struct sk_buff *skb,
			 bool ipv6, const struct sroce_bth *bth)
{
	u32 qpn = sroce_bth_qpn(bth), psn = sroce_bth_psn(bth);
	struct sroce_qp *qp;

	if (!sroce_rx_pkey_ok(bth)) {
		sroce_rx_drop(sdev, SROCE_STAT_RX_BAD_PKEY, qpn, psn);
		return;
	}
	qp = sroce_qp_lookup(sdev, qpn);
	if (!qp) {
		sroce_rx_drop(sdev, SROCE_STAT_RX_NO_QP, qpn, psn);
		return;
	}
	if (qp->type != IB_QPT_RC)
		sroce_rx_drop(sdev, SROCE_STAT_RX_BAD_OPCODE, qpn, psn);
	else if (!sroce_rx_from_peer(qp, skb, ipv6))
		sroce_rx_drop(sdev, SROCE_STAT_RX_BAD_SOURCE, qpn, psn);
	else
		sroce_cc_cnp_recv(qp);
	sroce_qp_put(qp);
}

static void sroce_rx(struct sroce_dev *sdev, struct sk_buff *skb, bool ipv6,
		     const struct sroce_bth *bth,
		     const struct sroce_opcode_info *info, u32 payload, bool ce)
{
	u32 qpn = sroce_bth_qpn(bth), psn = sroce_bth_psn(bth);
	struct sroce_qp *qp;

	if (!sroce_rx_pkey_ok(bth)) {
		sroce_rx_refuse(sdev, skb, SROCE_STAT_RX_BAD_PKEY, qpn, psn);
		return;
	}
	if (qpn == SROCE_MCAST_QPN) {
		if (sroce_rx_icrc_end(sdev, skb, NULL))
			sroce_mcast_rx(sdev, skb, bth, info, payload);
		return;
	}
	qp = sroce_qp_lookup(sdev, qpn);
	if (!qp) {
		sroce_rx_refuse(sdev, skb, SROCE_STAT_RX_NO_QP, qpn, psn);
		return;
	}
	if (!sroce_qp_takes(qp, info)) {
		sroce_rx_refuse(sdev, skb, SROCE_STAT_RX_BAD_OPCODE, qpn, psn);
	} else if (!sroce_rx_from_peer(qp, skb, ipv6)) {
		sroce_rx_refuse(sdev, skb, SROCE_STAT_RX_BAD_SOURCE, qpn, psn);
	} else if (info->flags & SROCE_OPF_RESP) {
		/* The handlers finish the ICRC check. */
		sroce_comp_recv(qp, skb, bth, info, payload);
	} else {
		sroce_resp_recv(qp, skb, bth, info, payload);
		/* The requester of a marked request is told to slow down. */
		if (ce && qp->type == IB_QPT_RC)
			sroce_cc_congested(qp);
	}
	sroce_qp_put(qp);
}

/*
 * A packet for @sdev whose data starts at its UDP header (RoCEv2) or at
 * the place one would have (RoCE v1): check it and hand it to its QP.
 * The packet is consumed, whatever becomes of it.
 */
static void sroce_rx_packet(struct sroce_dev *sdev, struct sk_buff *skb,
			    bool ipv6)
{
	unsigned int hlen = sizeof(struct udphdr) + sizeof(struct sroce_bth);
	const struct sroce_opcode_info *info;
	const struct sroce_bth *bth;
	unsigned int hdr_len;
	bool payload_ok, ce;
	__le32 icrc;
	u32 want;
	int len;

	/*
	 * The VLAN device took the tag off; put its VLAN ID back (the
	 * priority is lost) for UD completions: the RDMA core finds the
	 * local GID a datagram was sent to by address and VLAN, and a base
	 * device holds its VLAN uppers' GIDs too.
	 */
	if (is_vlan_dev(skb->dev))
		__vlan_hwaccel_put_tag(skb, vlan_dev_vlan_proto(skb->dev),
				       vlan_dev_vlan_id(skb->dev));
	sroce_stat_inc(sdev, SROCE_STAT_RX_PACKETS);
	/* The IB packet, BTH to ICRC: what PortRcvData counts. */
	if (skb->len > sizeof(struct udphdr))
		sroce_stat_add(sdev, SROCE_STAT_RX_BYTES,
			       skb->len - sizeof(struct udphdr));
	if (sroce_finj_rx(sdev, skb))
		return;

	/* The ICRC covers a fixed-size IP header: no IPv4 options. */
	if (skb_transport_header(skb) - skb_network_header(skb) !=
	    (ipv6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr)) ||
	    !pskb_may_pull(skb, hlen))
		goto bad_header;
	bth = (const struct sroce_bth *)(skb->data + sizeof(struct udphdr));
	info = sroce_opcode_get(bth->opcode);
	if (info) {
		hdr_len = info->hdr_len;
		payload_ok = info->flags & SROCE_OPF_PAYLOAD;
	} else if (bth->opcode == SROCE_OP_CNP) {
		/* Its reserved bytes are not looked at: taken as payload. */
		hdr_len = sizeof(struct sroce_bth);
		payload_ok = true;
	} else {
		sroce_rx_drop(sdev, SROCE_STAT_RX_BAD_OPCODE, sroce_bth_qpn(bth),
			      sroce_bth_psn(bth));
		goto drop;
	}
	if ((bth->flags & SROCE_BTH_TVER_MASK) != SROCE_TVER ||
	    !pskb_may_pull(skb, sizeof(struct udphdr) + hdr_len))
		goto bad_header;
	bth = (const struct sroce_bth *)(skb->data + sizeof(struct udphdr));
	len = skb->len - (int)(sizeof(struct udphdr) + hdr_len +
			       sroce_bth_pad(bth) + SROCE_ICRC_LEN);
	if (len < 0 || (len && !payload_ok))
		goto bad_header;
	ce = sroce_cc_rx_ce(skb, ipv6);
	sroce_rx_cb(skb)->pending = false;
	if (!info || !sroce_rx_icrc_may_wait(info, len, ce) ||
	    !sroce_rx_icrc_wait(skb, ipv6, hdr_len, len)) {
		want = sroce_icrc_check(skb, ipv6, &icrc);
		if (want) {
			sroce_rx_bad_icrc(sdev, skb, icrc, want);
			goto drop;
		}
	}
	if (ce)
		sroce_stat_inc(sdev, SROCE_STAT_ECN_MARKED);
	if (info)
		sroce_rx(sdev, skb, ipv6, bth, info, len, ce);
	else
		sroce_rx_cnp(sdev, skb, ipv6, bth);
	consume_skb(skb);
	return;

bad_header:
	/* The BTH may be cut short: what it says is not reported. */
	sroce_rx_drop(sdev, SROCE_STAT_RX_BAD_HEADER, SROCE_TRACE_NONE,
		      SROCE_TRACE_NONE);
drop:
	kfree_skb(skb);
}

/* A datagram from the UDP layer: its offsets count from the UDP header. */
static void sroce_rx_datagram(struct sroce_dev *sdev, struct sk_buff *skb,
			      bool ipv6)
{
	int len = skb_transport_offset(skb);

	if (len > 0)
		__skb_pull(skb, len);
	else if (len < 0)
		__skb_push(skb, -len);
	sroce_rx_packet(sdev, skb, ipv6);
}

/*
 * A chain of packets that the GRO hook (gro.c) built: each packet goes on
 * alone, in the order they arrived. A chain that is not one of those
 * (another GSO shape) or that cannot be taken apart is dropped, counted as
 * one bad packet.
 */
static void sroce_rx_chain(struct sroce_dev *sdev, struct sk_buff *skb)
{
	struct sk_buff *rest, *next;
	unsigned int count = 1;
	bool ipv6;

	rest = sroce_gro_split(skb);
	if (IS_ERR(rest)) {
		sroce_stat_inc(sdev, SROCE_STAT_RX_PACKETS);
		sroce_rx_drop(sdev, SROCE_STAT_RX_BAD_HEADER, SROCE_TRACE_NONE,
			      SROCE_TRACE_NONE);
		kfree_skb(skb);
		return;
	}
	for (next = rest; next; next = next->next)
		count++;
	sroce_stat_add(sdev, SROCE_STAT_RX_GRO_PACKETS, count);
	ipv6 = skb->protocol == htons(ETH_P_IPV6);
	sroce_rx_datagram(sdev, skb, ipv6);
	for (skb = rest; skb; skb = next) {
		next = skb->next;
		skb_mark_not_on_list(skb);
		sroce_rx_datagram(sdev, skb, ipv6);
	}
}

/*
 * The UDP encapsulation hook: every datagram to port 4791 of the namespace.
 * Return 0: the packet is consumed, whatever becomes of it.
 */
static int sroce_udp_recv(struct sock *sk, struct sk_buff *skb)
{
	bool ipv6 = skb->protocol == htons(ETH_P_IPV6);
	struct sroce_dev *sdev;

	sdev = sroce_rx_dev(sock_net(sk), skb, ipv6);
	if (!sdev) {
		kfree_skb(skb);
		return 0;
	}
	if (skb_is_gso(skb))
		sroce_rx_chain(sdev, skb);
	else
		sroce_rx_datagram(sdev, skb, ipv6);
	return 0;
}

/*
 * RoCE v1 frames (Ethertype 0x8915): a GRH, then the BTH. The receive path
 * finds a packet's headers from the place of its UDP header: a RoCE v1
 * packet is given the same shape, its data starting that many bytes
 * before the BTH, in the tail of the GRH, which nothing on the path reads
 * as UDP. The GRH is the network header, laid out as an IPv6 header, and
 * the BTH the transport header.
 */
static int sroce_v1_recv(struct sk_buff *skb, struct net_device *ndev,
			 struct packet_type *pt, struct net_device *orig_dev)
{
	struct sroce_dev *sdev;
	const struct ipv6hdr *grh;
	unsigned int plen;

	sdev = sroce_dev_by_netdev(ndev);
	if (!sdev || skb->pkt_type == PACKET_OTHERHOST)
		goto drop;
	skb = skb_share_check(skb, GFP_ATOMIC);
	if (!skb)
		return NET_RX_DROP;
	if (!pskb_may_pull(skb, sizeof(*grh)))
		goto bad;
	skb_reset_network_header(skb);
	grh = ipv6_hdr(skb);
	plen = ntohs(grh->payload_len);
	if (grh->version != 6 || grh->nexthdr != SROCE_GRH_NEXT_BTH ||
	    plen > skb->len - sizeof(*grh) ||
	    pskb_trim_rcsum(skb, sizeof(*grh) + plen))
		goto bad;
	skb_set_transport_header(skb, sizeof(*grh));
	__skb_pull(skb, sizeof(*grh) - sizeof(struct udphdr));
	sroce_rx_packet(sdev, skb, true);
	return NET_RX_SUCCESS;

bad:
	sroce_stat_inc(sdev, SROCE_STAT_RX_PACKETS);
	sroce_rx_drop(sdev, SROCE_STAT_RX_BAD_HEADER, SROCE_TRACE_NONE,
		      SROCE_TRACE_NONE);
drop:
	kfree_skb(skb);
	return NET_RX_DROP;
}

static struct packet_type sroce_v1_ptype __read_mostly = {
	.type = cpu_to_be16(ETH_P_IBOE),
	.func = sroce_v1_recv,
};

/*
 * The socket joins no group itself; multicast datagrams to port 4791 are
 * for the groups the devices' QPs attached to, which the netdev joined.
 * An IPv6 socket would take only IPv4 groups it joined by itself.
 */
static void sroce_sock_mcast_all(struct socket *sock, int family)
{
	int one = 1;

	sock->ops->setsockopt(sock, SOL_IP, IP_MULTICAST_ALL,
			      KERNEL_SOCKPTR(&one), sizeof(one));
	if (family == AF_INET6)
		sock->ops->setsockopt(sock, SOL_IPV6, IPV6_MULTICAST_ALL,
				      KERNEL_SOCKPTR(&one), sizeof(one));
}

static int sroce_sock_create(struct net *net, struct socket **sockp)
{
	struct udp_tunnel_sock_cfg tunnel_cfg = {
		.encap_type = 1,
		.encap_rcv = sroce_udp_recv,
	};
	struct udp_port_cfg port_cfg = {
		.family = AF_INET6,
		.local_udp_port = htons(SROCE_UDP_PORT),
		/* One socket for both IP versions. */
		.ipv6_v6only = 0,
	};
	struct socket *sock;
	int err;

	err = udp_sock_create(net, &port_cfg, &sock);
	if (err == -EAFNOSUPPORT || err == -EPFNOSUPPORT) {
		/* IPv6 is disabled: carry RoCEv2 over IPv4 only. */
		memset(&port_cfg, 0, sizeof(port_cfg));
		port_cfg.family = AF_INET;
		port_cfg.local_udp_port = htons(SROCE_UDP_PORT);
		err = udp_sock_create(net, &port_cfg, &sock);
	}
	if (err) {
		pr_warn_ratelimited("cannot bind UDP port %d: %d%s\n",
				    SROCE_UDP_PORT, err,
				    err == -EADDRINUSE ?
				    " (another RoCEv2 driver holds it?)" : "");
		return err;
	}

	sroce_sock_mcast_all(sock, port_cfg.family);
	sroce_gro_setup(&tunnel_cfg);
	setup_udp_tunnel_sock(net, sock, &tunnel_cfg);
	*sockp = sock;
	return 0;
}

/**
 * sroce_net_get() - note one more device in a namespace
 * @net: the namespace
 *
 * Creates the namespace's RoCEv2 socket for its first device.
 *
 * Context: process context.
 * Return: 0 or a negative errno.
 */
int sroce_net_get(struct net *net)
{
	struct sroce_net *sn = sroce_net(net);
	int err = 0;

	mutex_lock(&sn->lock);
	if (!sn->users)
		err = sroce_sock_create(net, &sn->sock);
	if (!err)
		sn->users++;
	mutex_unlock(&sn->lock);
	return err;
}

/**
 * sroce_net_sk() - the RoCEv2 socket of a namespace
 * @net: the namespace, which has a device
 *
 * Return: the socket, NULL when the namespace has none.
 */
struct sock *sroce_net_sk(struct net *net)
{
	struct socket *sock = READ_ONCE(sroce_net(net)->sock);

	return sock ? sock->sk : NULL;
}

/**
 * sroce_net_put() - note one device less in a namespace
 * @net: the namespace
 *
 * Releases the namespace's RoCEv2 socket with its last device.
 *
 * Context: process context.
 */
void sroce_net_put(struct net *net)
{
	struct sroce_net *sn = sroce_net(net);

	mutex_lock(&sn->lock);
	if (!WARN_ON_ONCE(!sn->users) && !--sn->users) {
		udp_tunnel_sock_release(sn->sock);
		sn->sock = NULL;
	}
	mutex_unlock(&sn->lock);
}

static int __net_init sroce_net_ns_init(struct net *net)
{
	struct sroce_net *sn = sroce_net(net);

	mutex_init(&sn->lock);
	return 0;
}

static void __net_exit sroce_net_ns_exit(struct net *net)
{
	struct sroce_net *sn = sroce_net(net);

	/*
	 * The sockets hold no reference on the namespace, so the devices
	 * using it must be gone before it is.
	 */
	sroce_dev_remove_all(net);
	WARN_ON_ONCE(sn->users || sn->sock);
	mutex_destroy(&sn->lock);
}

static struct pernet_operations sroce_net_ops = {
	.init = sroce_net_ns_init,
	.exit = sroce_net_ns_exit,
	.id = &sroce_net_id,
	.size = sizeof(struct sroce_net),
};

int sroce_net_init(void)
{
	int err;

	err = register_pernet_subsys(&sroce_net_ops);
	if (err)
		return err;
	dev_add_pack(&sroce_v1_ptype);
	return 0;
}

void sroce_net_exit(void)
{
	/* Waits for the handlers in flight. */
	dev_remove_pack(&sroce_v1_ptype);
	unregister_pernet_subsys(&sroce_net_ops);
}
