// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * On-demand paging: user memory regions whose pages are not pinned.
 *
 * The RDMA core's ODP umem tracks the process's mapping of the region
 * through an MMU interval notifier and keeps, per page, the kernel address
 * of the page and the rights it was mapped with (sroce registers without a
 * DMA device, so "DMA addresses" are kernel addresses). Entries are filled
 * by a fault, which sleeps, and cleared by the notifier when the process's
 * mapping changes.
 *
 * The data path runs in softirq and under spinlocks, where it cannot fault.
 * It therefore only uses pages that are mapped, under @odp_lock held for
 * reading so that the notifier cannot take them away mid-copy. When a page
 * is missing it records the range (struct sroce_odp_miss) and backs off;
 * the QP's work item faults the range in with sroce_odp_fault() and the
 * transport goes on from where it stopped.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <rdma/ib_umem_odp.h>

#include "mr.h"
#include "odp.h"
#include "sroce.h"
#include "stats.h"

/* Bytes a fault maps from the missing byte on, when the region has them. */
#define SROCE_ODP_FAULT_AHEAD	(256 * 1024)

static struct ib_umem_odp *sroce_odp_umem(const struct sroce_mr *mr)
{
	return to_ib_umem_odp(mr->umem);
}

/* Unmap pages of a published region: copies using them finish first. */
static void sroce_odp_unmap(struct sroce_mr *mr, struct ib_umem_odp *umem_odp,
			    u64 start, u64 end)
{
	write_lock_bh(&mr->odp_lock);
	ib_umem_odp_unmap_dma_pages(umem_odp, start, end);
	write_unlock_bh(&mr->odp_lock);
}

static bool sroce_odp_invalidate(struct mmu_interval_notifier *mni,
				 const struct mmu_notifier_range *range,
				 unsigned long cur_seq)
{
	struct ib_umem_odp *umem_odp =
		container_of(mni, struct ib_umem_odp, notifier);
	unsigned long start, end;

	/* Unmapping waits for copies in progress, which spin: never block. */
	if (!mmu_notifier_range_blockable(range))
		return false;

	mutex_lock(&umem_odp->umem_mutex);
	mmu_interval_set_seq(mni, cur_seq);
	start = max_t(u64, ib_umem_start(umem_odp), range->start);
	end = min_t(u64, ib_umem_end(umem_odp), range->end);
	/*
	 * The notifier is live before sroce_odp_reg() sets @private (under
	 * the mutex); until then nothing is mapped and no copy can run.
	 */
	if (umem_odp->private)
		sroce_odp_unmap(umem_odp->private, umem_odp, start, end);
	else
		ib_umem_odp_unmap_dma_pages(umem_odp, start, end);
	mutex_unlock(&umem_odp->umem_mutex);
	return true;
}

static const struct mmu_interval_notifier_ops sroce_odp_ops = {
	.invalidate = sroce_odp_invalidate,
};

/**
 * sroce_odp_reg() - set up an on-demand region's umem
 * @mr: the region, not yet in the key table
 * @dev: the device
 * @start: user address of its first byte
 * @length: its size
 * @access: IB_ACCESS_* rights, IB_ACCESS_ON_DEMAND among them
 *
 * No page is mapped until the data path faults it in.
 *
 * Return: 0 or a negative errno.
 */
int sroce_odp_reg(struct sroce_mr *mr, struct ib_device *dev, u64 start,
		  u64 length, int access)
{
	struct ib_umem_odp *umem_odp;

	rwlock_init(&mr->odp_lock);
	umem_odp = ib_umem_odp_get(dev, start, length, access, &sroce_odp_ops);
	if (IS_ERR(umem_odp))
		return PTR_ERR(umem_odp);
	mutex_lock(&umem_odp->umem_mutex);
	umem_odp->private = mr;
	mutex_unlock(&umem_odp->umem_mutex);
	mr->umem = &umem_odp->umem;
	mr->odp = true;
	return 0;
}

/* The user address of byte @iova of the region. */
static u64 sroce_odp_va(const struct sroce_mr *mr, u64 iova)
{
	return mr->umem->address + (iova - mr->iova);
}

static u64 sroce_odp_index(struct ib_umem_odp *umem_odp, u64 va)
{
	return (va - ib_umem_start(umem_odp)) >> umem_odp->page_shift;
}

static void sroce_odp_miss_set(struct sroce_odp_miss *miss,
			       struct sroce_mr *mr, u64 iova, u32 len,
			       bool write)
{
	/* One range at a time: the next is found when the transport retries. */
	if (miss->mr)
		return;
	refcount_inc(&mr->ref);
	miss->mr = mr;
	miss->iova = iova;
	miss->len = len;
	miss->write = write;
}

/**
 * _sroce_odp_lock_range() - hold the pages of a range of an on-demand region
 * @mr: the region; the range was checked by sroce_mr_get()
 * @iova: first byte
 * @len: bytes
 * @write: the bytes will be written
 * @miss: where to record the range when a page of it is not mapped
 *
 * Use through sroce_odp_lock_range(). On success the pages stay mapped
 * until sroce_odp_unlock().
 *
 * Context: any; does not sleep.
 * Return: true, or false with the range recorded in @miss.
 */
bool _sroce_odp_lock_range(struct sroce_mr *mr, u64 iova, u32 len, bool write,
			   struct sroce_odp_miss *miss)
{
	struct ib_umem_odp *umem_odp = sroce_odp_umem(mr);
	u64 need = write ? ODP_WRITE_ALLOWED_BIT : ODP_READ_ALLOWED_BIT;
	u64 va = sroce_odp_va(mr, iova);
	u64 idx, last;

	last = sroce_odp_index(umem_odp, va + max(len, 1U) - 1);
	read_lock_bh(&mr->odp_lock);
	for (idx = sroce_odp_index(umem_odp, va); idx <= last; idx++) {
		if (!(READ_ONCE(umem_odp->dma_list[idx]) & need)) {
			read_unlock_bh(&mr->odp_lock);
			sroce_odp_miss_set(miss, mr, iova, len, write);
			return false;
		}
	}
	/* Held on return: the wrapper tells sparse so. */
	__release(&mr->odp_lock);
	return true;
}

/**
 * sroce_odp_unlock() - done with the pages sroce_odp_lock_range() held
 * @mr: the region
 */
void sroce_odp_unlock(struct sroce_mr *mr)
	__releases(&mr->odp_lock)
{
	read_unlock_bh(&mr->odp_lock);
}

/**
 * sroce_odp_addr() - the kernel address of a byte of an on-demand region
 * @mr: the region; the byte's page held by sroce_odp_lock_range()
 * @iova: the byte
 * @len: bytes wanted from it
 * @contig: set to how many of them are contiguous from it
 *
 * Return: the address.
 */
void *sroce_odp_addr(struct sroce_mr *mr, u64 iova, u32 len, u32 *contig)
{
	struct ib_umem_odp *umem_odp = sroce_odp_umem(mr);
	u64 va = sroce_odp_va(mr, iova);
	u64 page_size = BIT_ULL(umem_odp->page_shift);
	u64 off = va & (page_size - 1);
	dma_addr_t entry;

	entry = READ_ONCE(umem_odp->dma_list[sroce_odp_index(umem_odp, va)]);
	*contig = min_t(u64, len, page_size - off);
	return (void *)(uintptr_t)((entry & ODP_DMA_ADDR_MASK) + off);
}

/* Map @len bytes from @iova; sleeps. */
static int sroce_odp_map(struct sroce_mr *mr, u64 iova, u64 len, bool write)
{
	struct ib_umem_odp *umem_odp = sroce_odp_umem(mr);
	u64 access = ODP_READ_ALLOWED_BIT;
	int ret;

	if (write)
		access |= ODP_WRITE_ALLOWED_BIT;
	ret = ib_umem_odp_map_dma_and_lock(umem_odp, sroce_odp_va(mr, iova),
					   len, access, true);
	if (ret < 0)
		return ret;
	mutex_unlock(&umem_odp->umem_mutex);
	return 0;
}

/**
 * sroce_odp_fault() - map the range a miss recorded, and forget the miss
 * @miss: the miss; its region reference is dropped
 *
 * Messages are mostly longer than the piece that missed: the pages that
 * follow, up to SROCE_ODP_FAULT_AHEAD bytes and the end of the region, are
 * mapped in the same fault, unless they cannot be (memory missing behind
 * them), in which case only the range itself is.
 *
 * Context: process; sleeps. No lock of the QP may be held.
 * Return: 0, or a negative errno when the process has no memory at the
 * range or not with the rights needed.
 */
int sroce_odp_fault(struct sroce_odp_miss *miss)
{
	struct sroce_mr *mr = miss->mr;
	struct sroce_dev *sdev = to_sdev(mr->ibmr.device);
	u64 len = max(miss->len, 1U);
	u64 ahead = min_t(u64, max_t(u64, len, SROCE_ODP_FAULT_AHEAD),
			  mr->iova + mr->length - miss->iova);
	int ret;

	sroce_stat_inc(sdev, SROCE_STAT_ODP_FAULT);
	ret = sroce_odp_map(mr, miss->iova, ahead, miss->write);
	if (ret < 0 && ahead > len)
		ret = sroce_odp_map(mr, miss->iova, len, miss->write);
	if (ret < 0) {
		sroce_stat_inc(sdev, SROCE_STAT_ODP_FAULT_ERR);
		ibdev_warn_ratelimited(&sdev->ibdev,
				       "page fault of %u bytes at %#llx failed: %d\n",
				       miss->len, miss->iova, ret);
	}
	sroce_odp_miss_clear(miss);
	return ret;
}

/**
 * sroce_odp_miss_clear() - forget a recorded miss
 * @miss: the miss, possibly empty
 */
void sroce_odp_miss_clear(struct sroce_odp_miss *miss)
{
	if (miss->mr)
		sroce_mr_put(miss->mr);
	miss->mr = NULL;
}
