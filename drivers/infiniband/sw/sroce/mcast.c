// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Multicast: UD QPs attached to a multicast GID receive the datagrams sent
 * to QP 0xffffff at the matching IP multicast address.
 *
 * A group exists while a QP is attached to it. It also makes the netdev a
 * member of the IP group (IGMP or MLD), so that the IP layer accepts the
 * datagrams and tells the switches. The receive path walks the groups and
 * their QPs under RCU; attach and detach change them under a mutex.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/igmp.h>
#include <linux/inetdevice.h>
#include <linux/rculist.h>
#include <net/addrconf.h>
#include <net/ipv6.h>

#include "limits.h"
#include "mcast.h"
#include "qp.h"
#include "resp.h"
#include "sroce.h"
#include "stats.h"

/**
 * struct sroce_mcg - a multicast group with QPs attached
 * @node: entry in the device's group list (RCU)
 * @mgid: the group's GID
 * @qps: the attachments (RCU)
 * @nqps: entries in @qps
 * @rcu: frees the group after the readers that may have found it
 */
struct sroce_mcg {
	struct list_head	node;
	union ib_gid		mgid;
	struct list_head	qps;
	u32			nqps;
	struct rcu_head		rcu;
};

/* One QP attached to a group. */
struct sroce_mca {
	struct list_head	node;
	struct sroce_qp		*qp;
	struct rcu_head		rcu;
};

static bool sroce_gid_is_v4(const union ib_gid *gid)
{
	return ipv6_addr_v4mapped((const struct in6_addr *)gid->raw);
}

/* The IPv4 address of a v4-mapped GID. */
static __be32 sroce_gid_v4(const union ib_gid *gid)
{
	return ((const struct in6_addr *)gid->raw)->s6_addr32[3];
}

static bool sroce_gid_is_mcast(const union ib_gid *gid)
{
	if (sroce_gid_is_v4(gid))
		return ipv4_is_multicast(sroce_gid_v4(gid));
	return ipv6_addr_is_multicast((const struct in6_addr *)gid->raw);
}

/* Make the netdev a member of the IP group, or stop being one. */
static int sroce_mcg_ip(struct sroce_dev *sdev, const union ib_gid *mgid,
			bool join)
{
	struct in_device *in_dev;
	int err = 0;

	if (!sroce_gid_is_v4(mgid)) {
		const struct in6_addr *addr = (const struct in6_addr *)mgid->raw;

		if (!IS_ENABLED(CONFIG_IPV6))
			return -EAFNOSUPPORT;
		/* Leaving a group looks the inet6 device up under RTNL. */
		rtnl_lock();
		err = join ? ipv6_dev_mc_inc(sdev->ndev, addr) :
			     ipv6_dev_mc_dec(sdev->ndev, addr);
		rtnl_unlock();
		return err;
	}
	rtnl_lock();
	in_dev = __in_dev_get_rtnl(sdev->ndev);
	if (!in_dev)
		err = -ENODEV;
	else if (join)
		ip_mc_inc_group(in_dev, sroce_gid_v4(mgid));
	else
		ip_mc_dec_group(in_dev, sroce_gid_v4(mgid));
	rtnl_unlock();
	return err;
}

static struct sroce_mcg *sroce_mcg_find(struct sroce_dev *sdev,
					const union ib_gid *mgid)
{
	struct sroce_mcg *mcg;

	list_for_each_entry_rcu(mcg, &sdev->mcgs, node,
				lockdep_is_held(&sdev->mcg_lock))
		if (!memcmp(&mcg->mgid, mgid, sizeof(*mgid)))
			return mcg;
	return NULL;
}

static struct sroce_mcg *sroce_mcg_create(struct sroce_dev *sdev,
					  const union ib_gid *mgid)
{
	struct sroce_mcg *mcg;
	int err;

	if (sdev->nmcgs >= SROCE_MAX_MCAST_GRP)
		return ERR_PTR(-ENOMEM);
	mcg = kzalloc(sizeof(*mcg), GFP_KERNEL);
	if (!mcg)
		return ERR_PTR(-ENOMEM);
	mcg->mgid = *mgid;
	INIT_LIST_HEAD(&mcg->qps);
	err = sroce_mcg_ip(sdev, mgid, true);
	if (err) {
		kfree(mcg);
		return ERR_PTR(err);
	}
	list_add_tail_rcu(&mcg->node, &sdev->mcgs);
	sdev->nmcgs++;
	return mcg;
}

/* Remove a group without QPs; the netdev leaves the IP group. */
static void sroce_mcg_destroy(struct sroce_dev *sdev, struct sroce_mcg *mcg)
{
	list_del_rcu(&mcg->node);
	sdev->nmcgs--;
	sroce_mcg_ip(sdev, &mcg->mgid, false);
	kfree_rcu(mcg, rcu);
}

int sroce_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct sroce_dev *sdev = to_sdev(ibqp->device);
	struct sroce_qp *qp = to_sqp(ibqp);
	struct sroce_mcg *mcg;
	struct sroce_mca *mca;
	int err = 0;

	if (ibqp->qp_type != IB_QPT_UD || !sroce_gid_is_mcast(gid))
		return -EINVAL;

	mutex_lock(&sdev->mcg_lock);
	mcg = sroce_mcg_find(sdev, gid);
	if (!mcg) {
		mcg = sroce_mcg_create(sdev, gid);
		if (IS_ERR(mcg)) {
			err = PTR_ERR(mcg);
			goto out;
		}
	}
	list_for_each_entry(mca, &mcg->qps, node)
		if (mca->qp == qp)
			goto out;	/* attached already */
	if (mcg->nqps >= SROCE_MAX_MCAST_QP_ATTACH) {
		err = -ENOMEM;
		goto out;
	}
	mca = kzalloc(sizeof(*mca), GFP_KERNEL);
	if (!mca) {
		err = -ENOMEM;
		goto out;
	}
	mca->qp = qp;
	list_add_tail_rcu(&mca->node, &mcg->qps);
	mcg->nqps++;
out:
	/* A group that got no QP goes again. */
	if (err && mcg && !IS_ERR(mcg) && !mcg->nqps)
		sroce_mcg_destroy(sdev, mcg);
	mutex_unlock(&sdev->mcg_lock);
	return err;
}

int sroce_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct sroce_dev *sdev = to_sdev(ibqp->device);
	struct sroce_qp *qp = to_sqp(ibqp);
	struct sroce_mcg *mcg;
	struct sroce_mca *mca;
	int err = -EINVAL;

	mutex_lock(&sdev->mcg_lock);
	mcg = sroce_mcg_find(sdev, gid);
	if (!mcg)
		goto out;
	list_for_each_entry(mca, &mcg->qps, node) {
		if (mca->qp != qp)
			continue;
		list_del_rcu(&mca->node);
		kfree_rcu(mca, rcu);
		err = 0;
		break;
	}
	if (!err && !--mcg->nqps)
		sroce_mcg_destroy(sdev, mcg);
out:
	mutex_unlock(&sdev->mcg_lock);
	return err;
}

/*
 * Each member gets a clone of its own: a QP that cannot take the packet
 * now (its backlog, a page fault) keeps it on a list, and an skb can be on
 * only one list at a time.
 */
static void sroce_mcast_deliver(struct sroce_qp *qp, struct sk_buff *skb,
				const struct sroce_bth *bth,
				const struct sroce_opcode_info *info,
				u32 payload)
{
	struct sk_buff *copy = skb_clone(skb, GFP_ATOMIC);

	if (!copy) {
		sroce_qp_rx_drop(qp, SROCE_STAT_RX_NOMEM, sroce_bth_psn(bth));
		return;
	}
	sroce_resp_recv(qp, copy, bth, info, payload);
	consume_skb(copy);
}

/**
 * sroce_mcast_rx() - deliver a datagram sent to the multicast QP
 * @sdev: the device it arrived on
 * @skb: the packet; data starts at the UDP header
 * @bth: its BTH
 * @info: its opcode, a UD one
 * @payload: payload bytes
 *
 * Every QP attached to the group of the packet's destination address gets
 * it, each with its own Q_Key check and receive WQE.
 *
 * Context: softirq.
 */
void sroce_mcast_rx(struct sroce_dev *sdev, struct sk_buff *skb,
		    const struct sroce_bth *bth,
		    const struct sroce_opcode_info *info, u32 payload)
{
	struct sroce_mcg *mcg;
	struct sroce_mca *mca;
	union ib_gid mgid;
	bool delivered = false;

	if (ip_hdr(skb)->version == 4)
		ipv6_addr_set_v4mapped(ip_hdr(skb)->daddr,
				       (struct in6_addr *)mgid.raw);
	else
		memcpy(mgid.raw, &ipv6_hdr(skb)->daddr, sizeof(mgid));

	rcu_read_lock();
	mcg = sroce_mcg_find(sdev, &mgid);
	if (mcg && (info->qpts & SROCE_QPT_UD)) {
		list_for_each_entry_rcu(mca, &mcg->qps, node) {
			struct sroce_qp *qp = mca->qp;

			/* A QP being destroyed is detached and gone soon. */
			if (!sroce_qp_get(qp))
				continue;
			sroce_mcast_deliver(qp, skb, bth, info, payload);
			sroce_qp_put(qp);
			delivered = true;
		}
	}
	rcu_read_unlock();
	if (!delivered)
		sroce_rx_drop(sdev, SROCE_STAT_RX_NO_QP, SROCE_MCAST_QPN,
			      sroce_bth_psn(bth));
}

/**
 * sroce_mcast_cleanup() - forget the groups of a device going away
 * @sdev: the device; its QPs are destroyed, so detached
 */
void sroce_mcast_cleanup(struct sroce_dev *sdev)
{
	struct sroce_mcg *mcg, *next;
	struct sroce_mca *mca, *mnext;

	mutex_lock(&sdev->mcg_lock);
	list_for_each_entry_safe(mcg, next, &sdev->mcgs, node) {
		list_for_each_entry_safe(mca, mnext, &mcg->qps, node) {
			list_del_rcu(&mca->node);
			kfree_rcu(mca, rcu);
		}
		list_del_rcu(&mcg->node);
		kfree_rcu(mcg, rcu);
	}
	sdev->nmcgs = 0;
	mutex_unlock(&sdev->mcg_lock);
}
