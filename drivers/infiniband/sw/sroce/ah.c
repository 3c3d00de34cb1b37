// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Address vectors, and the address handles UD send WQEs name by number.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/etherdevice.h>
#include <net/ipv6.h>
#include <rdma/ib_cache.h>
#include <rdma/rdma_user_rxe.h>

#include "ah.h"
#include "limits.h"
#include "sroce.h"

/**
 * sroce_av_from_attr() - take a RoCEv2 address vector from ib_core's form
 * @av: the vector to fill
 * @attr: the attribute; ib_core has resolved its source GID entry
 *
 * Return: 0, or -EINVAL for an address sroce cannot send to.
 */
int sroce_av_from_attr(struct sroce_av *av, const struct rdma_ah_attr *attr)
{
	const struct ib_global_route *grh = rdma_ah_read_grh(attr);
	const struct ib_gid_attr *sgid_attr = grh->sgid_attr;
	struct in6_addr saddr, daddr;

	if (!(rdma_ah_get_ah_flags(attr) & IB_AH_GRH) || !sgid_attr ||
	    (sgid_attr->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP &&
	     sgid_attr->gid_type != IB_GID_TYPE_ROCE))
		return -EINVAL;

	memcpy(&saddr, sgid_attr->gid.raw, sizeof(saddr));
	memcpy(&daddr, grh->dgid.raw, sizeof(daddr));
	/* Both ends of a path speak the same IP version. */
	if (ipv6_addr_v4mapped(&saddr) != ipv6_addr_v4mapped(&daddr))
		return -EINVAL;

	rdma_hold_gid_attr(sgid_attr);
	av->sgid_attr = sgid_attr;
	av->saddr = saddr;
	av->daddr = daddr;
	av->ipv6 = !ipv6_addr_v4mapped(&daddr);
	av->v1 = sgid_attr->gid_type == IB_GID_TYPE_ROCE;
	if (av->v1)
		ether_addr_copy(av->dmac, attr->roce.dmac);
	av->hop_limit = grh->hop_limit ?: 64;
	av->tclass = grh->traffic_class;
	av->sl = rdma_ah_get_sl(attr);
	av->flow_label = grh->flow_label & 0xfffff;
	return 0;
}

/**
 * sroce_av_copy() - copy an address vector, with a GID reference of its own
 * @dst: the copy; released with sroce_av_release()
 * @src: the vector, of a live AH or QP
 */
void sroce_av_copy(struct sroce_av *dst, const struct sroce_av *src)
{
	*dst = *src;
	rdma_hold_gid_attr(dst->sgid_attr);
}

void sroce_av_release(struct sroce_av *av)
{
	if (av->sgid_attr)
		rdma_put_gid_attr(av->sgid_attr);
	av->sgid_attr = NULL;
}

int sroce_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init_attr,
		    struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibah->device);
	struct sroce_ah *ah = to_sah(ibah);
	struct rxe_create_ah_resp resp = {};
	gfp_t gfp;
	int err;

	err = sroce_av_from_attr(&ah->av, init_attr->ah_attr);
	if (err)
		return err;

	refcount_set(&ah->ref, 1);
	init_completion(&ah->released);
	/*
	 * A kernel consumer's work requests point at the AH itself: only
	 * user AHs get a number, and only they can be looked up by one.
	 */
	ah->ah_num = 0;
	if (!udata)
		return 0;
	/*
	 * The number is reserved first and the AH published last, once
	 * nothing can fail: a WQE must never find an AH that is then freed
	 * without waiting for it.
	 */
	gfp = init_attr->flags & RDMA_CREATE_AH_SLEEPABLE ? GFP_KERNEL :
							   GFP_ATOMIC;
	err = xa_alloc_cyclic(&sdev->ahs, &ah->ah_num, NULL,
			      XA_LIMIT(1, SROCE_MAX_AH), &sdev->ah_next, gfp);
	if (err < 0) {
		sroce_av_release(&ah->av);
		return err == -EBUSY ? -ENOMEM : err;
	}

	if (udata->outlen >= sizeof(resp)) {
		resp.ah_num = ah->ah_num;
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_erase;
	}
	err = xa_err(xa_store(&sdev->ahs, ah->ah_num, ah, gfp));
	if (err)
		goto err_erase;
	return 0;

err_erase:
	xa_erase(&sdev->ahs, ah->ah_num);
	sroce_av_release(&ah->av);
	return err;
}

int sroce_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	struct sroce_dev *sdev = to_sdev(ibah->device);
	struct sroce_ah *ah = to_sah(ibah);

	if (!ah->ah_num) {
		/*
		 * A kernel AH, possibly destroyed in atomic context: its
		 * work requests have completed, and WQEs drop their
		 * reference before they complete.
		 */
		if (!refcount_dec_and_test(&ah->ref)) {
			if (!(flags & RDMA_DESTROY_AH_SLEEPABLE)) {
				ibdev_warn_ratelimited(ibah->device,
						       "AH destroyed with work requests outstanding\n");
				return -EBUSY;
			}
			wait_for_completion(&ah->released);
		}
		sroce_av_release(&ah->av);
		return 0;
	}
	xa_erase(&sdev->ahs, ah->ah_num);
	sroce_ah_put(ah);
	/*
	 * A UD WQE being fetched holds the AH only while it copies the
	 * address: waiting for it is short, whatever the QP's state.
	 */
	wait_for_completion(&ah->released);
	/* ib_core frees the AH next: no lookup may still be reading it. */
	synchronize_rcu();
	sroce_av_release(&ah->av);
	return 0;
}

/**
 * sroce_ah_get() - find an address handle by the number in a UD WQE
 * @sdev: the device
 * @ah_num: the number, untrusted
 *
 * Return: the AH with a reference held, or NULL.
 */
struct sroce_ah *sroce_ah_get(struct sroce_dev *sdev, u32 ah_num)
{
	struct sroce_ah *ah;

	rcu_read_lock();
	ah = xa_load(&sdev->ahs, ah_num);
	if (ah && !refcount_inc_not_zero(&ah->ref))
		ah = NULL;
	rcu_read_unlock();
	return ah;
}

void sroce_ah_put(struct sroce_ah *ah)
{
	if (refcount_dec_and_test(&ah->ref))
		complete(&ah->released);
}
