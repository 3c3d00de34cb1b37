// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Receive aggregation: the RoCEv2 socket's GRO hook.
 *
 * A NIC hands the stack its received packets in batches (one NAPI poll),
 * and each RoCE packet of a batch used to take its own trip through the IP
 * and UDP receive paths (the route lookup, the netfilter hooks, the socket
 * lookup, the encapsulation hook) before sroce saw it. The GRO engine looks
 * at every one of them anyway: it looks up the UDP socket of each datagram
 * to find its GRO hook. So the hook chains the packets of one flow (the same
 * addresses, ports and IP header flags) that arrive in one batch onto the
 * first one's frag_list, each packet whole, its own headers in front of its
 * data, as the kernel's own fraglist GRO does. The IP and UDP receive paths
 * take the chain once; sroce_udp_recv() takes it apart again
 * (sroce_gro_split()) and checks every packet as if it had come alone. Only
 * the first packet's headers change on the way (the lengths), and the split
 * puts them back: the ICRC covers them.
 *
 * What is chained:
 *
 * - IPv4 datagrams without a UDP checksum, which RoCEv2 over IPv4 carries,
 *   and IPv6 datagrams with theirs, known good (RoCEv2 over IPv6 must
 *   carry one); no IPv4 option or IPv6 extension header.
 * - Datagrams to an address of this host, so that a chain is only ever
 *   delivered, never forwarded: the socket lookup that found this hook does
 *   not look at whether the destination is local. Forwarded traffic to port
 *   4791 is not chained. The check is made once per chain, when its second
 *   packet comes (the others have the same addresses): a packet held alone
 *   goes up as it came, so a lone packet, which is what a ping-pong sends,
 *   costs no lookup.
 * - What the IP layer's GRO let through: for IPv4 a good header checksum, a
 *   total length that matches, no fragment; for IPv6 a payload length that
 *   matches. Anything it
 *   flushed goes up alone, after the chain of its flow, so that packets of
 *   one flow stay in order.
 *
 * Nothing past the UDP header is read here: a hostile packet is chained like
 * any other and checked like any other after the split.
 */

#include <linux/module.h>
#include <linux/netdevice.h>
#include <net/addrconf.h>
#include <net/gro.h>
#include <net/route.h>
#include <net/udp_tunnel.h>

#include <sroce/gro.h>
#include "gro.h"

static bool sroce_rx_gro = true;
module_param_named(rx_gro, sroce_rx_gro, bool, 0644);
MODULE_PARM_DESC(rx_gro,
		 "Chain the RoCEv2 packets of one flow in a receive batch through the IP layer (default: on)");

/* The most packets one chain holds, as UDP's own GRO allows. */
#define SROCE_GRO_MAX_COUNT	64

/*
 * The held chain of the flow of the packet at hand, if the GRO engine holds
 * one: the layers below left same_flow set on it alone.
 */
static struct sk_buff *sroce_gro_flow(struct list_head *head)
{
	struct sk_buff *p;

	list_for_each_entry(p, head, list) {
		if (NAPI_GRO_CB(p)->same_flow)
			return p;
	}
	return NULL;
}

/* Is @skb for this host? Only then may it join a chain. */
static bool sroce_gro_local(const struct sk_buff *skb)
{
	struct net_device *dev = skb->dev;

	if (skb->protocol == htons(ETH_P_IPV6))
		return ipv6_chk_addr(dev_net(dev), &ipv6_hdr(skb)->daddr, dev,
				     0);
	return inet_addr_type_dev_table(dev_net(dev), dev,
					ip_hdr(skb)->daddr) == RTN_LOCAL;
}

/*
 * May @skb be chained at all? Its headers are pulled when it may. An IPv4
 * packet must come without a UDP checksum, as RoCEv2 sends it; an IPv6
 * one with its checksum, which udp_gro_receive() only lets through to the
 * hook once it is known good, and with no extension header.
 */
static bool sroce_gro_takes(struct sk_buff *skb)
{
	const struct udphdr *uh;
	unsigned int nlen;

	if (!READ_ONCE(sroce_rx_gro) || NAPI_GRO_CB(skb)->flush ||
	    skb->pkt_type != PACKET_HOST ||
	    !pskb_may_pull(skb, skb_gro_offset(skb)))
		return false;
	uh = udp_hdr(skb);
	nlen = skb_transport_header(skb) - skb_network_header(skb);
	if (skb->protocol == htons(ETH_P_IP)) {
		if (uh->check || nlen != sizeof(struct iphdr))
			return false;
	} else if (skb->protocol == htons(ETH_P_IPV6)) {
		if (!uh->check || nlen != sizeof(struct ipv6hdr))
			return false;
	} else {
		return false;
	}
	/* The length UDP's GRO would see: no padding, not empty. */
	return ntohs(uh->len) > sizeof(*uh) &&
	       ntohs(uh->len) == skb->len - skb_transport_offset(skb);
}

/*
 * udp_tunnel_gro_receive_t: called by udp_gro_receive() with @skb's data
 * past its UDP header. Return the held packet the engine is to pass up
 * now, if any.
 */
static struct sk_buff *sroce_gro_receive(struct sock *sk,
					 struct list_head *head,
					 struct sk_buff *skb)
{
	struct sk_buff *p = sroce_gro_flow(head);

	if (!sroce_gro_takes(skb)) {
		/* Up alone, after the chain of its flow. */
		NAPI_GRO_CB(skb)->flush = 1;
		return p;
	}
	if (!p)
		/* Held: a chain starts if another packet of its flow follows. */
		return NULL;
	if (NAPI_GRO_CB(p)->flush)
		/* The chain goes up; this packet starts the next. */
		return p;
	if (NAPI_GRO_CB(p)->count == 1 && !sroce_gro_local(skb)) {
		/* Not for this host: both go up alone. */
		NAPI_GRO_CB(skb)->flush = 1;
		return p;
	}
	if (!sroce_gro_chain(p, skb))
		return p;
	return NAPI_GRO_CB(p)->count >= SROCE_GRO_MAX_COUNT ? p : NULL;
}

/*
 * udp_tunnel_gro_complete_t: the chain is about to go up. There is no
 * inner packet to complete: each packet is whole. udp_gro_complete() has
 * marked the chain a UDP tunnel GSO packet, which takes it past the UDP
 * socket's check for unexpected GSO to sroce_udp_recv(). It also set
 * skb->encapsulation, for inner headers a chain does not have: cleared, so
 * that the segmentation of a chain that is forwarded after all (its
 * destination address went away in between) refuses it instead of
 * following inner header offsets that were never set.
 */
static int sroce_gro_complete(struct sock *sk, struct sk_buff *skb, int nhoff)
{
	skb->encapsulation = 0;
	/*
	 * udp6_gro_complete() rewrote the UDP checksum for the whole chain,
	 * which the data does not match; every packet's own was checked on
	 * the way in (see sroce_gro_takes()).
	 */
	if (skb->protocol == htons(ETH_P_IPV6)) {
		skb->ip_summed = CHECKSUM_UNNECESSARY;
		skb->csum_level = 0;
	}
	return 0;
}

/**
 * sroce_gro_setup() - give the RoCEv2 socket its GRO hooks
 * @cfg: the tunnel configuration setup_udp_tunnel_sock() will apply
 */
void sroce_gro_setup(struct udp_tunnel_sock_cfg *cfg)
{
	cfg->gro_receive = sroce_gro_receive;
	cfg->gro_complete = sroce_gro_complete;
}
