// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory windows: a remote-access key onto part of a memory region, bound
 * and unbound by the consumer without re-registering the region.
 *
 * Type 1 windows are bound through ibv_bind_mw(), which librxe posts as a
 * BIND_MW WQE; type 2 windows by a BIND_MW WQE of their own QP, and are
 * then tied to that QP. A window's key shares the region key space (the
 * device's mrs table, where window entries carry the SROCE_KEY_MW tag):
 * the upper 24 bits name the window, the low 8 bits change with each bind.
 *
 * A type 2 window may be bound zero-based (IB_ZERO_BASED): its peers then
 * address its first byte as 0, whatever the region's address of it; the
 * responder turns their addresses into the region's (sroce_mw_get_mr()).
 * Type 1 windows are bound at the region's addresses only, as the IBTA
 * has it (o10-36.2.2); librxe refuses the flag in ibv_bind_mw() already.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <sroce/transport.h>

#include "limits.h"
#include "mr.h"
#include "mw.h"
#include "qp.h"
#include "sroce.h"

int sroce_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibmw->device);
	struct sroce_mw *mw = to_smw(ibmw);
	u32 index;
	int err;

	if (ibmw->type != IB_MW_TYPE_1 && ibmw->type != IB_MW_TYPE_2)
		return -EINVAL;
	spin_lock_init(&mw->lock);
	mw->state = SROCE_MW_FREE;
	err = xa_alloc_cyclic(&sdev->mrs, &index,
			      xa_tag_pointer(mw, SROCE_KEY_MW),
			      XA_LIMIT(1, SROCE_MAX_MR), &sdev->mr_next,
			      GFP_KERNEL);
	if (err < 0)
		return err == -EBUSY ? -ENOMEM : err;
	mw->index = index;
	ibmw->rkey = sroce_key_make(index, atomic_inc_return(&sdev->key_gen));
	return 0;
}

/* Forget the region a window is bound to; its lock held. */
static void sroce_mw_unbind(struct sroce_mw *mw)
{
	if (mw->mr) {
		atomic_dec(&mw->mr->bound_mws);
		sroce_mr_put(mw->mr);
	}
	mw->mr = NULL;
	mw->state = SROCE_MW_FREE;
}

int sroce_dealloc_mw(struct ib_mw *ibmw)
{
	struct sroce_mw *mw = to_smw(ibmw);

	xa_erase(&to_sdev(ibmw->device)->mrs, mw->index);
	spin_lock_bh(&mw->lock);
	sroce_mw_unbind(mw);
	/*
	 * A bind that found the window before the erase may still take the
	 * lock: it must not leave the window holding a region once freed.
	 */
	mw->state = SROCE_MW_DEAD;
	spin_unlock_bh(&mw->lock);
	/* ib_core frees the window next: no lookup may still be reading it. */
	synchronize_rcu();
	return 0;
}

static struct sroce_mw *sroce_mw_lookup(struct sroce_dev *sdev, u32 rkey)
{
	void *entry = xa_load(&sdev->mrs, sroce_key_index(rkey));

	if (xa_pointer_tag(entry) != SROCE_KEY_MW)
		return NULL;
	return xa_untag_pointer(entry);
}

/* Rights a window may be bound with, IB_ZERO_BASED among them. */
#define SROCE_MW_BIND_ACCESS	(IB_ACCESS_LOCAL_WRITE |		\
				 IB_ACCESS_REMOTE_READ |		\
				 IB_ACCESS_REMOTE_WRITE |		\
				 IB_ACCESS_REMOTE_ATOMIC |		\
				 IB_ZERO_BASED)

/*
 * May @mr back a window with @access over [addr, addr + len)? @addr is the
 * region's address of the window's first byte, zero-based or not.
 */
static bool sroce_mw_bind_ok(struct sroce_mr *mr, int access, u64 addr,
			     u64 len)
{
	int need_local_write = IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC;

	if (!(mr->access & IB_ACCESS_MW_BIND))
		return false;
	if ((access & need_local_write) &&
	    !(mr->access & IB_ACCESS_LOCAL_WRITE))
		return false;
	return sroce_range_within(mr->iova, mr->length, addr, len);
}

/**
 * sroce_mw_bind() - execute a BIND_MW WQE
 * @qp: the QP it was posted to
 * @mw_rkey: the window's current rkey, untrusted
 * @new_rkey: its low 8 bits become the window's
 * @mr_lkey: the region to bind to, untrusted; unused to unbind
 * @addr: first byte of the window, as an address of the region
 * @len: its length; 0 unbinds a type 1 window
 * @access: remote rights through it, and IB_ZERO_BASED for a type 2
 *	window whose peers address it from 0
 *
 * Context: the requester, the QP's req.lock held.
 * Return: 0, or -EINVAL for any violation of the binding rules
 * (completed as MW_BIND_ERR).
 */
int sroce_mw_bind(struct sroce_qp *qp, u32 mw_rkey, u32 new_rkey, u32 mr_lkey,
		  u64 addr, u64 len, int access)
{
	struct sroce_dev *sdev = qp->sdev;
	struct sroce_mr *mr = NULL;
	struct sroce_mw *mw;
	int err = -EINVAL;

	if (access & ~SROCE_MW_BIND_ACCESS)
		return -EINVAL;
	if (len) {
		mr = sroce_mr_get(sdev, mr_lkey, qp->ibqp.pd, 0, addr, len,
				  NULL);
		if (!mr)
			return -EINVAL;
		if (!sroce_mw_bind_ok(mr, access, addr, len)) {
			sroce_mr_put(mr);
			return -EINVAL;
		}
	}

	rcu_read_lock();
	mw = sroce_mw_lookup(sdev, mw_rkey);
	if (!mw)
		goto out;
	spin_lock_bh(&mw->lock);
	if (mw->ibmw.rkey != mw_rkey || mw->ibmw.pd != qp->ibqp.pd ||
	    mw->state == SROCE_MW_DEAD)
		goto out_unlock;
	if (mw->ibmw.type == IB_MW_TYPE_2 &&
	    (mw->state != SROCE_MW_FREE || !len))
		goto out_unlock;
	if (mw->ibmw.type == IB_MW_TYPE_1 && (access & IB_ZERO_BASED))
		goto out_unlock;
	/* A region being deregistered takes no new window. */
	if (mr && !atomic_inc_unless_negative(&mr->bound_mws))
		goto out_unlock;
	sroce_mw_unbind(mw);
	mw->ibmw.rkey = sroce_key_make(sroce_key_index(mw_rkey), new_rkey);
	if (mr) {
		mw->mr = mr;
		mr = NULL;
		mw->addr = addr;
		mw->length = len;
		mw->access = access;
		mw->qpn = qp->ibqp.qp_num;
		mw->state = SROCE_MW_VALID;
	}
	err = 0;
out_unlock:
	spin_unlock_bh(&mw->lock);
out:
	rcu_read_unlock();
	if (mr)
		sroce_mr_put(mr);
	return err;
}

/**
 * sroce_mw_get_mr() - check a remote access through a window
 * @mw: the window the rkey's index names; under rcu_read_lock()
 * @rkey: the rkey, untrusted
 * @qp: the QP the access arrived on
 * @access: IB_ACCESS_* rights needed
 * @iova: first byte, in the window's addresses (from 0 when zero-based)
 * @len: bytes; SROCE_LEN_WHOLE for the whole window, whatever @iova
 * @mr_iova: set to the region's address of byte @iova (of the window's first
 *	byte for SROCE_LEN_WHOLE)
 *
 * Return: the window's region with a reference held, or NULL.
 */
struct sroce_mr *sroce_mw_get_mr(struct sroce_mw *mw, u32 rkey,
				 const struct sroce_qp *qp, int access,
				 u64 iova, u64 len, u64 *mr_iova)
{
	struct sroce_mr *mr = NULL;

	spin_lock_bh(&mw->lock);
	/* A window gives no access to a region no longer valid. */
	if (mw->state != SROCE_MW_VALID || mw->ibmw.rkey != rkey ||
	    !READ_ONCE(mw->mr->valid) ||
	    mw->ibmw.pd != qp->ibqp.pd ||
	    (mw->ibmw.type == IB_MW_TYPE_2 && mw->qpn != qp->ibqp.qp_num) ||
	    !sroce_access_granted(mw->access, access))
		goto out;
	if (len == SROCE_LEN_WHOLE)
		*mr_iova = mw->addr;
	else if (!sroce_window_addr(mw->addr, mw->length,
				    mw->access & IB_ZERO_BASED, iova, len,
				    mr_iova))
		goto out;
	if (refcount_inc_not_zero(&mw->mr->ref))
		mr = mw->mr;
out:
	spin_unlock_bh(&mw->lock);
	return mr;
}

/**
 * sroce_mw_invalidate() - invalidate a type 2 window (LOCAL_INV,
 * SEND_WITH_INV)
 * @mw: the window the key's index names; under rcu_read_lock()
 * @rkey: the key, untrusted
 * @pd: the PD the request comes from
 * @remote_qp: for SEND_WITH_INV, the QP it arrived on, which the window
 *	must be bound to; NULL for LOCAL_INV
 *
 * Return: 0, or -EINVAL for a type 1 window, a stale key, another PD or
 * another QP.
 */
int sroce_mw_invalidate(struct sroce_mw *mw, u32 rkey, struct ib_pd *pd,
			const struct sroce_qp *remote_qp)
{
	int err = -EINVAL;

	spin_lock_bh(&mw->lock);
	if (mw->ibmw.type == IB_MW_TYPE_2 && mw->ibmw.rkey == rkey &&
	    mw->ibmw.pd == pd && mw->state == SROCE_MW_VALID &&
	    (!remote_qp || mw->qpn == remote_qp->ibqp.qp_num)) {
		sroce_mw_unbind(mw);
		err = 0;
	}
	spin_unlock_bh(&mw->lock);
	return err;
}
