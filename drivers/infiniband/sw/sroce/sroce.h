/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce: a software RoCEv2 RDMA device over any Ethernet netdev.
 *
 * The device object and the interfaces between main.c, device.c, net.c and
 * verbs.c.
 */
#ifndef _SROCE_H
#define _SROCE_H

#include <linux/idr.h>
#include <linux/list.h>
#include <linux/netdevice.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>

#include "compat.h"
#include "txflow.h"

struct sroce_finj;
struct sroce_stats;

#define SROCE_DRIVER_NAME	"sroce"
#define SROCE_LINK_TYPE		"sroce"
/* The user ABI sroce speaks: see Documentation/abi.rst. */
#define SROCE_UVERBS_ABI_VERSION	2

/**
 * struct sroce_dev - one sroce RDMA device, bound to one netdev
 * @ibdev: the RDMA core's device; must be first (INIT_RDMA_OBJ_SIZE)
 * @ndev: the netdev the device is bound to; a reference is held
 * @net: @ndev's network namespace when the device was created. The device
 *	is removed before that namespace goes away, so no reference is held.
 * @node: entry in the list of all sroce devices, under sroce_devices_lock
 * @unregister_work: removes the device when its netdev goes away
 * @registered: registration with the RDMA core completed
 * @unregister_wanted: the netdev left before @registered was set
 * @unregister_queued: @unregister_work was queued
 *	(the three flags are under sroce_devices_lock)
 * @port_state: the last port state announced by an IB event; written under
 *	sroce_devices_lock, read by port queries without it
 * @qps: QPs by number, for packet delivery (RCU lookups)
 * @qp_next: next QP number to try
 * @mrs: memory regions by key index (RCU lookups)
 * @mr_next: next MR index to try
 * @key_gen: generation byte of the next key
 * @ahs: address handles by number (RCU lookups)
 * @ah_next: next AH number to try
 * @srq_ida: SRQ numbers, which also bound the number of SRQs
 * @mcg_lock: serializes multicast attach and detach
 * @mcgs: multicast groups with QPs attached (RCU list, see mcast.c)
 * @nmcgs: entries in @mcgs
 * @atomic_lock: makes the responder's atomic operations atomic
 * @stats: event counters, see stats.h
 * @finj: fault injection, see finj.h
 * @tx: its packets in the queues below, and its line of QPs waiting for
 *	room there (txflow.c); it outlives the device while packets remain
 * @attrs: the device attributes, as query_device reports them
 * @rtt_seed: the round trips of all its RC QPs, smoothed as one estimate
 *	(struct sroce_rtt packed into 64 bits): the retransmission timeout
 *	of a QP that has no sample of its own yet (rto.c)
 */
struct sroce_dev {
	struct ib_device	ibdev;
	struct net_device	*ndev;
	struct net		*net;
	struct list_head	node;
	struct work_struct	unregister_work;
	bool			registered;
	bool			unregister_wanted;
	bool			unregister_queued;
	enum ib_port_state	port_state;
	struct xarray		qps;
	u32			qp_next;
	struct xarray		mrs;
	u32			mr_next;
	atomic_t		key_gen;
	struct xarray		ahs;
	u32			ah_next;
	struct ida		srq_ida;
	struct mutex		mcg_lock;	/* see above */
	struct list_head	mcgs;
	u32			nmcgs;
	spinlock_t		atomic_lock;	/* see above */
	struct sroce_stats __percpu *stats;
	struct sroce_finj	*finj;
	struct sroce_dev_txflow	*tx;
	struct ib_device_attr	attrs;
	atomic64_t		rtt_seed;
};

static inline struct sroce_dev *to_sdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct sroce_dev, ibdev);
}

/* device.c: device life cycle and netdev events */
int sroce_dev_add(const char *name, struct net_device *ndev);
void sroce_dev_dealloc(struct ib_device *ibdev);
int sroce_dev_enable(struct ib_device *ibdev);
void sroce_dev_remove_all(struct net *net);
int sroce_dev_init(void);
void sroce_dev_exit(void);
enum ib_port_state sroce_port_state(const struct sroce_dev *sdev);
enum ib_mtu sroce_active_mtu(const struct sroce_dev *sdev);
struct sroce_dev *sroce_dev_by_netdev(const struct net_device *ndev);
struct sroce_dev *sroce_dev_by_gid(struct net *net, const union ib_gid *gid);

/* net.c: the per-namespace UDP socket and packet reception */
int sroce_net_get(struct net *net);
struct sock *sroce_net_sk(struct net *net);
void sroce_net_put(struct net *net);
int sroce_net_init(void);
void sroce_net_exit(void);

/* verbs.c: the RDMA core's device operations */
extern const struct ib_device_ops sroce_dev_ops;
void sroce_init_attrs(struct sroce_dev *sdev);

#endif /* _SROCE_H */
