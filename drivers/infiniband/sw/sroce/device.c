// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Device life cycle: creation on "rdma link add", removal on "rdma link
 * delete", netdev removal, namespace exit and module unload, and the port
 * events that follow the netdev's state.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/if_arp.h>
#include <linux/mutex.h>
#include <linux/rtnetlink.h>
#include <net/addrconf.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

#include "finj.h"
#include "mcast.h"
#include "sroce.h"
#include "stats.h"

/*
 * Every sroce device, from just before it registers until its dealloc.
 * The netdev notifier (under RTNL) and teardown paths look devices up here;
 * no one holds the lock across a call into the RDMA core.
 */
static LIST_HEAD(sroce_devices);
static DEFINE_SPINLOCK(sroce_devices_lock);

/* Runs the unregistrations the netdev notifier cannot do under RTNL. */
static struct workqueue_struct *sroce_wq;

/*
 * RoCEv2 bytes around the IB payload in the worst case: IPv6 (40), UDP (8),
 * BTH (12), the largest extension header set (AtomicETH, 28) and the ICRC
 * (4). The active IB MTU is the largest that leaves room for them.
 */
#define SROCE_MTU_OVERHEAD	92

enum ib_mtu sroce_active_mtu(const struct sroce_dev *sdev)
{
	int room = READ_ONCE(sdev->ndev->mtu) - SROCE_MTU_OVERHEAD;

	if (room < 256)
		return IB_MTU_256;
	return ib_mtu_int_to_enum(room);
}

/* The port's state as the netdev's flags give it now. */
static enum ib_port_state sroce_port_netdev_state(const struct sroce_dev *sdev)
{
	const struct net_device *ndev = sdev->ndev;

	return netif_running(ndev) && netif_carrier_ok(ndev) ?
	       IB_PORT_ACTIVE : IB_PORT_DOWN;
}

/**
 * sroce_port_state() - the port state a query reports
 * @sdev: the device
 *
 * The state the last port event announced, so that no query shows a
 * change that no event reported. A carrier change reaches the netdev
 * notifier through linkwatch, some time after the netdev's flags change:
 * read from the flags, a carrier lost and back within that time showed
 * DOWN to a query while no event was ever sent. Before the first event
 * (during registration), the state from the flags.
 *
 * Return: IB_PORT_ACTIVE or IB_PORT_DOWN.
 */
enum ib_port_state sroce_port_state(const struct sroce_dev *sdev)
{
	enum ib_port_state state = READ_ONCE(sdev->port_state);

	return state == IB_PORT_NOP ? sroce_port_netdev_state(sdev) : state;
}

static void sroce_port_event(struct sroce_dev *sdev)
{
	enum ib_port_state state = sroce_port_netdev_state(sdev);
	struct ib_event ev = {
		.device = &sdev->ibdev,
		.element.port_num = 1,
	};

	if (state == sdev->port_state)
		return;
	WRITE_ONCE(sdev->port_state, state);
	ev.event = state == IB_PORT_ACTIVE ? IB_EVENT_PORT_ACTIVE :
					     IB_EVENT_PORT_ERR;
	ib_dispatch_event(&ev);
}

/**
 * sroce_dev_by_netdev() - the device on a netdev, for packet delivery
 * @ndev: the netdev
 *
 * Context: RCU read side (the receive path).
 * Return: the device or NULL.
 */
struct sroce_dev *sroce_dev_by_netdev(const struct net_device *ndev)
{
	struct sroce_dev *sdev;

	list_for_each_entry_rcu(sdev, &sroce_devices, node)
		if (sdev->ndev == ndev && READ_ONCE(sdev->registered))
			return sdev;
	return NULL;
}

/**
 * sroce_dev_by_gid() - the device of a namespace that owns a RoCEv2 GID
 * @net: the namespace
 * @gid: the GID
 *
 * Context: RCU read side (the receive path of looped-back packets).
 * Return: the device or NULL.
 */
struct sroce_dev *sroce_dev_by_gid(struct net *net, const union ib_gid *gid)
{
	const struct ib_gid_attr *attr;
	struct sroce_dev *sdev;

	list_for_each_entry_rcu(sdev, &sroce_devices, node) {
		if (!net_eq(sdev->net, net) || !READ_ONCE(sdev->registered))
			continue;
		attr = rdma_find_gid_by_port(&sdev->ibdev, gid,
					     IB_GID_TYPE_ROCE_UDP_ENCAP, 1,
					     NULL);
		if (!IS_ERR(attr)) {
			rdma_put_gid_attr(attr);
			return sdev;
		}
	}
	return NULL;
}

static struct sroce_dev *sroce_dev_find_locked(const struct net_device *ndev)
{
	struct sroce_dev *sdev;

	lockdep_assert_held(&sroce_devices_lock);
	list_for_each_entry(sdev, &sroce_devices, node)
		if (sdev->ndev == ndev)
			return sdev;
	return NULL;
}

static void sroce_dev_unregister_work(struct work_struct *work)
{
	struct sroce_dev *sdev = container_of(work, struct sroce_dev,
					      unregister_work);

	ib_unregister_device(&sdev->ibdev);
	/* The reference sroce_dev_queue_unregister() took. */
	put_device(&sdev->ibdev.dev);
}

/* Remove the device soon, from process context without RTNL held. */
static void sroce_dev_queue_unregister_locked(struct sroce_dev *sdev)
{
	lockdep_assert_held(&sroce_devices_lock);
	if (!sdev->registered) {
		/* sroce_dev_add() queues it once registration is complete. */
		sdev->unregister_wanted = true;
		return;
	}
	if (sdev->unregister_queued)
		return;
	sdev->unregister_queued = true;
	get_device(&sdev->ibdev.dev);
	queue_work(sroce_wq, &sdev->unregister_work);
}

static int sroce_check_netdev(struct net_device *ndev)
{
	if (ndev->type != ARPHRD_ETHER) {
		pr_warn_ratelimited("%s is not an Ethernet device\n", ndev->name);
		return -EINVAL;
	}
	if (netif_is_bond_slave(ndev) || netif_is_team_port(ndev)) {
		pr_warn_ratelimited("%s is enslaved; attach to its master\n",
				    ndev->name);
		return -EINVAL;
	}
	return 0;
}

static void sroce_dev_free_tables(struct sroce_dev *sdev)
{
	WARN_ON_ONCE(!xa_empty(&sdev->qps) || !xa_empty(&sdev->mrs) ||
		     !xa_empty(&sdev->ahs));
	xa_destroy(&sdev->qps);
	xa_destroy(&sdev->mrs);
	xa_destroy(&sdev->ahs);
	ida_destroy(&sdev->srq_ida);
	sroce_mcast_cleanup(sdev);
	mutex_destroy(&sdev->mcg_lock);
	sroce_finj_dev_free(sdev);
	free_percpu(sdev->stats);
	sdev->stats = NULL;
	sroce_tx_dev_release(sdev);
}

static struct sroce_dev *sroce_dev_alloc(struct net_device *ndev)
{
	struct sroce_dev *sdev;

	sdev = ib_alloc_device(sroce_dev, ibdev);
	if (!sdev)
		return NULL;
	sdev->stats = alloc_percpu(struct sroce_stats);
	if (!sdev->stats)
		goto err_dealloc;
	if (sroce_tx_dev_init(sdev))
		goto err_stats;
	if (sroce_finj_dev_alloc(sdev))
		goto err_tx;
	xa_init_flags(&sdev->qps, XA_FLAGS_ALLOC);
	xa_init_flags(&sdev->mrs, XA_FLAGS_ALLOC);
	xa_init_flags(&sdev->ahs, XA_FLAGS_ALLOC);
	ida_init(&sdev->srq_ida);
	mutex_init(&sdev->mcg_lock);
	INIT_LIST_HEAD(&sdev->mcgs);
	spin_lock_init(&sdev->atomic_lock);

	dev_hold(ndev);
	sdev->ndev = ndev;
	sdev->net = dev_net(ndev);
	sdev->port_state = IB_PORT_NOP;
	INIT_LIST_HEAD(&sdev->node);
	INIT_WORK(&sdev->unregister_work, sroce_dev_unregister_work);

	sdev->ibdev.node_type = RDMA_NODE_IB_CA;
	sdev->ibdev.phys_port_cnt = 1;
	sdev->ibdev.num_comp_vectors = num_possible_cpus();
	/* Consumers such as the RDMA CM find the NIC through the parent. */
	sdev->ibdev.dev.parent = ndev->dev.parent;
	strscpy(sdev->ibdev.node_desc, "sroce", sizeof(sdev->ibdev.node_desc));
	addrconf_addr_eui48((u8 *)&sdev->ibdev.node_guid, ndev->dev_addr);
	/* ib_uverbs filters legacy write() commands by this mask. */
	sdev->ibdev.uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
				       BIT_ULL(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ);
	ib_set_device_ops(&sdev->ibdev, &sroce_dev_ops);
	sroce_init_attrs(sdev);
	return sdev;

err_tx:
	sroce_tx_dev_release(sdev);
err_stats:
	free_percpu(sdev->stats);
err_dealloc:
	ib_dealloc_device(&sdev->ibdev);
	return NULL;
}

/**
 * sroce_dev_enable() - complete a device's registration
 * @ibdev: the device, registered but not yet returned to sroce_dev_add()
 *
 * The RDMA core's enable_driver operation. The device can be found by
 * name from now on, and unregistered and freed as soon as
 * ib_register_device() returns, so what registration completes is done
 * here, while the core still holds the device.
 *
 * Return: 0.
 */
int sroce_dev_enable(struct ib_device *ibdev)
{
	struct sroce_dev *sdev = to_sdev(ibdev);

	/*
	 * The netdev may have left (unregistered, or moved to another
	 * namespace) while the device registered; the notifier then only
	 * recorded that the device must go. The port's state is compared
	 * with the netdev's under the same lock the notifier takes.
	 */
	spin_lock(&sroce_devices_lock);
	WRITE_ONCE(sdev->registered, true);
	if (sdev->unregister_wanted)
		sroce_dev_queue_unregister_locked(sdev);
	sroce_port_event(sdev);
	spin_unlock(&sroce_devices_lock);
	sroce_finj_dev_register(sdev);
	ibdev_info(ibdev, "attached to %s\n", sdev->ndev->name);
	return 0;
}

/**
 * sroce_dev_add() - create and register a device on a netdev
 * @name: the RDMA device name requested by the user
 * @ndev: the netdev to bind to; the caller holds a reference
 *
 * Context: process context, RTNL not held.
 * Return: 0 or a negative errno.
 */
int sroce_dev_add(const char *name, struct net_device *ndev)
{
	struct sroce_dev *sdev;
	int err;

	err = sroce_check_netdev(ndev);
	if (err)
		return err;

	spin_lock(&sroce_devices_lock);
	sdev = sroce_dev_find_locked(ndev);
	spin_unlock(&sroce_devices_lock);
	if (sdev) {
		ibdev_warn_ratelimited(&sdev->ibdev, "already attached to %s\n",
				       ndev->name);
		return -EEXIST;
	}

	sdev = sroce_dev_alloc(ndev);
	if (!sdev)
		return -ENOMEM;

	err = sroce_net_get(sdev->net);
	if (err)
		goto err_free;

	err = ib_device_set_netdev(&sdev->ibdev, ndev, 1);
	if (err)
		goto err_net_put;

	spin_lock(&sroce_devices_lock);
	list_add_tail_rcu(&sdev->node, &sroce_devices);
	spin_unlock(&sroce_devices_lock);

	err = ib_register_device(&sdev->ibdev, name, NULL);
	if (err) {
		pr_warn_ratelimited("registering %s on %s failed: %d\n", name,
				    ndev->name, err);
		/* dealloc_driver is not called for a failed registration. */
		spin_lock(&sroce_devices_lock);
		list_del_rcu(&sdev->node);
		spin_unlock(&sroce_devices_lock);
		synchronize_rcu();
		goto err_net_put;
	}

	/*
	 * From here on a concurrent "rdma link delete" may have freed the
	 * device: sroce_dev_enable() did what registration completes.
	 */
	return 0;

err_net_put:
	sroce_net_put(sdev->net);
err_free:
	dev_put(ndev);
	sroce_dev_free_tables(sdev);
	ib_dealloc_device(&sdev->ibdev);
	return err;
}

/**
 * sroce_dev_dealloc() - release what a registered device holds
 * @ibdev: the device, unregistered
 *
 * The RDMA core's dealloc_driver operation: called once the device is
 * unregistered, before its memory is freed.
 */
void sroce_dev_dealloc(struct ib_device *ibdev)
{
	struct sroce_dev *sdev = to_sdev(ibdev);

	spin_lock(&sroce_devices_lock);
	list_del_rcu(&sdev->node);
	spin_unlock(&sroce_devices_lock);
	/* The receive path may still be looking at the device. */
	synchronize_rcu();

	sroce_net_put(sdev->net);
	dev_put(sdev->ndev);
	sroce_dev_free_tables(sdev);
}

/* Take the next device of @net (any namespace if NULL) to remove. */
static struct sroce_dev *sroce_dev_next_victim(struct net *net)
{
	struct sroce_dev *sdev;

	spin_lock(&sroce_devices_lock);
	list_for_each_entry(sdev, &sroce_devices, node) {
		if (!sdev->registered || (net && !net_eq(sdev->net, net)))
			continue;
		/* Keeps the memory; unregistering twice is harmless. */
		get_device(&sdev->ibdev.dev);
		spin_unlock(&sroce_devices_lock);
		return sdev;
	}
	spin_unlock(&sroce_devices_lock);
	return NULL;
}

/**
 * sroce_dev_remove_all() - unregister every device of a namespace
 * @net: the namespace, or NULL for all of them
 *
 * Context: process context, RTNL not held. Returns when the devices are
 * gone and no removal work is pending.
 */
void sroce_dev_remove_all(struct net *net)
{
	struct sroce_dev *sdev;

	flush_workqueue(sroce_wq);
	while ((sdev = sroce_dev_next_victim(net))) {
		ib_unregister_device(&sdev->ibdev);
		put_device(&sdev->ibdev.dev);
		/* A device still listed after unregistering would loop forever. */
		flush_workqueue(sroce_wq);
	}
}

static int sroce_netdev_event(struct notifier_block *nb, unsigned long event,
			      void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct sroce_dev *sdev;

	spin_lock(&sroce_devices_lock);
	sdev = sroce_dev_find_locked(ndev);
	if (!sdev) {
		spin_unlock(&sroce_devices_lock);
		return NOTIFY_DONE;
	}

	switch (event) {
	case NETDEV_UNREGISTER:
		sroce_dev_queue_unregister_locked(sdev);
		break;
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
		sroce_port_event(sdev);
		break;
	case NETDEV_CHANGEMTU:
		dev_dbg(&sdev->ibdev.dev, "%s MTU %u, active IB MTU %d\n",
			ndev->name, ndev->mtu,
			ib_mtu_enum_to_int(sroce_active_mtu(sdev)));
		break;
	default:
		break;
	}
	spin_unlock(&sroce_devices_lock);
	return NOTIFY_DONE;
}

static struct notifier_block sroce_netdev_notifier = {
	.notifier_call = sroce_netdev_event,
};

int sroce_dev_init(void)
{
	int err;

	sroce_wq = alloc_workqueue("sroce", WQ_UNBOUND, 0);
	if (!sroce_wq)
		return -ENOMEM;

	err = register_netdevice_notifier(&sroce_netdev_notifier);
	if (err) {
		destroy_workqueue(sroce_wq);
		return err;
	}
	return 0;
}

void sroce_dev_exit(void)
{
	sroce_dev_remove_all(NULL);
	unregister_netdevice_notifier(&sroce_netdev_notifier);
	destroy_workqueue(sroce_wq);
}
