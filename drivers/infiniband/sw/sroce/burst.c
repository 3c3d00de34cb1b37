// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Transmit bursts: several finished packets of a QP handed to the IP layer
 * as one skb, so that the driver below is notified once for all of them.
 *
 * On virtual NICs, and above all under emulation, what a packet costs is
 * mostly the notification of the device (the "kick"), not its bytes. A
 * driver kicks once for a list of packets handed to it with the xmit_more
 * hint, and the stack hands it such a list when it segments a GSO packet
 * in software. RoCE packets cannot be cut out of one payload by ordinary
 * segmentation, each having its own BTH, PSN and ICRC; UDP's fraglist GSO
 * (SKB_GSO_UDP_L4 | SKB_GSO_FRAGLIST) however takes a chain of complete
 * datagrams, each with its own IP and UDP header, and only copies the
 * link-layer header of the first onto the others when it splits them.
 *
 * So a burst is a chain of finished packets on the frag_list of its first
 * one. It goes through the IP layer, netfilter and the qdisc as one packet
 * and is split again just before the driver. Only routes out of a device
 * that splits it take bursts: a device that takes such a chain whole (a
 * veth, a bridge, loopback) would carry it unsplit to a packet capture or
 * to a router, and the kick it saves does not exist there.
 *
 * What the split rewrites is prepared when a packet joins:
 *  - the IPv4 ID: inet_gso_segment() numbers the segments upwards from the
 *    ID of the first; the ICRC covers the ID, so every packet is built with
 *    the ID it will have, its index in the burst;
 *  - the UDP length of the first packet: that of the whole burst while it
 *    is one packet (the UDP receive path trims a datagram to it), then set
 *    from gso_size by the split; gso_size is the first packet's UDP payload,
 *    and no later packet may be longer (the IP layer also checks gso_size
 *    against the path MTU);
 *  - checksums: a fraglist has no per-segment offload offsets, so the UDP
 *    checksum of an IPv6 packet is computed in full beforehand.
 *
 * Packets are counted in flight (sroce_pkt_track()) one by one. When the
 * burst is split, the packets after the first stop counting: from then on
 * they are the driver's, and its ring bounds them.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/if_vlan.h>
#include <linux/module.h>
#include <net/dst.h>

#include "burst.h"
#include "qp.h"
#include "sroce.h"
#include "stats.h"
#include "xmit.h"

/*
 * The length of a burst from its first IP header on: within the 16-bit
 * length fields of IPv4 and IPv6 the unsplit packet carries, and below the
 * default GSO size limit with room to spare for link-layer headers.
 */
#define SROCE_BURST_MAX_LEN	(63 * 1024)

static unsigned int sroce_tx_burst = 64;
module_param_named(tx_burst, sroce_tx_burst, uint, 0644);
MODULE_PARM_DESC(tx_burst,
		 "Most packets of a QP handed to the IP layer at once (0 or 1: each alone; default 64)");

/**
 * sroce_burst_enabled() - whether packets are gathered into bursts
 *
 * Return: false when the tx_burst parameter says to send each alone.
 */
bool sroce_burst_enabled(void)
{
	return READ_ONCE(sroce_tx_burst) > 1;
}

/**
 * sroce_burst_route_ok() - whether packets on a route may go in bursts
 * @dst: the route
 *
 * Return: true when the device the packets leave by splits bursts.
 */
bool sroce_burst_route_ok(const struct dst_entry *dst)
{
	struct net_device *dev = dst->dev;

	/* sroce_vlan_out() queues a VLAN's frames on its real device. */
	if (is_vlan_dev(dev))
		dev = vlan_dev_real_dev(dev);
	return !(dev->features & NETIF_F_GSO_FRAGLIST);
}

/**
 * sroce_burst_may_join() - whether a packet may go at the end of a burst
 * @burst: the burst
 * @skb: the packet: headers on, data at the IP header, not yet routed
 * @dst: the route the packet will take
 *
 * Return: true when sroce_burst_add() may add @skb: see sroce_burst_fits(),
 * here with the tx_burst parameter's and SROCE_BURST_MAX_LEN's limits.
 */
bool sroce_burst_may_join(const struct sroce_burst *burst,
			  const struct sk_buff *skb,
			  const struct dst_entry *dst)
{
	return sroce_burst_fits(burst, skb, dst, READ_ONCE(sroce_tx_burst),
				SROCE_BURST_MAX_LEN);
}

/**
 * sroce_burst_push() - hand a burst to the IP layer and empty it
 * @qp: the QP whose packets it holds
 * @burst: the burst, possibly empty
 *
 * A drop by the local queue is remembered for sroce_burst_flush().
 *
 * Context: any, with bottom halves disabled.
 */
void sroce_burst_push(struct sroce_qp *qp, struct sroce_burst *burst)
{
	struct sk_buff *skb = burst->head;

	if (!skb)
		return;
	if (sroce_burst_seal(burst))
		sroce_stat_inc(qp->sdev, SROCE_STAT_TX_BURSTS);
	burst->head = NULL;
	burst->tail = NULL;
	burst->count = 0;
	if (sroce_pkt_emit(qp, skb) == -ENOBUFS)
		burst->dropped = true;
}

/**
 * sroce_burst_flush() - hand a burst to the IP layer, and say whether the
 *	local queue dropped any of the bursts pushed since the last flush
 * @qp: the QP whose packets it holds
 * @burst: the burst, possibly empty
 *
 * Context: any, with bottom halves disabled.
 * Return: -ENOBUFS when packets were dropped, else 0.
 */
int sroce_burst_flush(struct sroce_qp *qp, struct sroce_burst *burst)
{
	bool dropped;

	sroce_burst_push(qp, burst);
	dropped = burst->dropped;
	burst->dropped = false;
	return dropped ? -ENOBUFS : 0;
}
