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
 *
 * An implicit region covers the whole address space of the process. Its
 * umem has no pages of its own: the address space is cut into chunks of
 * SROCE_ODP_CHUNK bytes, and a chunk gets a child umem (with its own MMU
 * notifier) the first time a fault needs a page of it. Children live until
 * the region is deregistered, except one whose first fault failed: the
 * address is not mapped, and a peer probing addresses must not make the
 * region grow.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/xarray.h>
#include <rdma/ib_umem_odp.h>

#include "mr.h"
#include "odp.h"
#include "sroce.h"
#include "stats.h"

/* Bytes a fault maps from the missing byte on, when the region has them. */
#define SROCE_ODP_FAULT_AHEAD	(256 * 1024)

/* The address space an implicit region's child umem covers. */
#define SROCE_ODP_CHUNK_SHIFT	24
#define SROCE_ODP_CHUNK		BIT_ULL(SROCE_ODP_CHUNK_SHIFT)

/**
 * struct sroce_odp_implicit - the children of an implicit region
 * @children: child umems by chunk number (address >> SROCE_ODP_CHUNK_SHIFT);
 *	looked up under RCU by the data path, which only uses pages the child
 *	has mapped, under the region's odp_lock; its own lock is taken with
 *	bottom halves off, since a child is removed under odp_lock, which the
 *	receive softirq takes
 * @lock: serializes adding and removing children
 * @mm: the process's address space, held so that a child can be added (the
 *	root umem holds no reference of its own) until the region goes
 */
struct sroce_odp_implicit {
	struct xarray		children;
	struct mutex		lock;	/* see above */
	struct mm_struct	*mm;
};

/* The umem that maps the page of user address @va, or NULL. */
static struct ib_umem_odp *sroce_odp_umem(const struct sroce_mr *mr, u64 va)
{
	if (likely(!mr->odp_implicit))
		return to_ib_umem_odp(mr->umem);
	return xa_load(&mr->odp_implicit->children, va >> SROCE_ODP_CHUNK_SHIFT);
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

/**
 * sroce_odp_reg_implicit() - set up an implicit on-demand region
 * @mr: the region, not yet in the key table
 * @dev: the device
 * @access: IB_ACCESS_* rights, IB_ACCESS_ON_DEMAND among them
 *
 * The region covers every address of the calling process; its addresses
 * are the process's (iova 0 is address 0).
 *
 * Return: 0 or a negative errno.
 */
int sroce_odp_reg_implicit(struct sroce_mr *mr, struct ib_device *dev,
			   int access)
{
	struct sroce_odp_implicit *imp;
	struct ib_umem_odp *root;

	imp = kzalloc(sizeof(*imp), GFP_KERNEL);
	if (!imp)
		return -ENOMEM;
	root = ib_umem_odp_alloc_implicit(dev, access);
	if (IS_ERR(root)) {
		kfree(imp);
		return PTR_ERR(root);
	}
	xa_init_flags(&imp->children, XA_FLAGS_LOCK_BH);
	mutex_init(&imp->lock);
	imp->mm = current->mm;
	mmgrab(imp->mm);
	rwlock_init(&mr->odp_lock);
	mr->umem = &root->umem;
	mr->odp_implicit = imp;
	mr->odp = true;
	return 0;
}

/**
 * sroce_odp_release() - release an on-demand region's umems
 * @mr: the region, out of the key table and no longer used by anyone
 */
void sroce_odp_release(struct sroce_mr *mr)
{
	struct sroce_odp_implicit *imp = mr->odp_implicit;
	struct ib_umem_odp *child;
	unsigned long chunk;

	if (imp) {
		xa_for_each(&imp->children, chunk, child)
			ib_umem_odp_release(child);
		xa_destroy(&imp->children);
		mutex_destroy(&imp->lock);
	}
	ib_umem_release(mr->umem);
	if (imp) {
		mmdrop(imp->mm);
		kfree(imp);
	}
	mr->odp_implicit = NULL;
	mr->umem = NULL;
}

/**
 * sroce_odp_chunks() - how many chunks of an implicit region have a umem
 * @mr: the region
 *
 * Return: the count; 0 for other regions.
 */
unsigned long sroce_odp_chunks(struct sroce_mr *mr)
{
	struct ib_umem_odp *child;
	unsigned long chunk, n = 0;

	if (!mr->odp_implicit)
		return 0;
	xa_for_each(&mr->odp_implicit->children, chunk, child)
		n++;
	return n;
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

/* Is the page of @va mapped with the rights @need? */
static bool sroce_odp_mapped(const struct sroce_mr *mr, u64 va, u64 need,
			     u64 *page_size)
{
	struct ib_umem_odp *umem_odp = sroce_odp_umem(mr, va);

	if (!umem_odp)
		return false;
	*page_size = BIT_ULL(umem_odp->page_shift);
	return READ_ONCE(umem_odp->dma_list[sroce_odp_index(umem_odp, va)]) &
	       need;
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
	u64 need = write ? ODP_WRITE_ALLOWED_BIT : ODP_READ_ALLOWED_BIT;
	u64 va = sroce_odp_va(mr, iova);
	u64 last = va + max(len, 1U) - 1;
	u64 page_size;

	read_lock_bh(&mr->odp_lock);
	for (;;) {
		if (!sroce_odp_mapped(mr, va, need, &page_size)) {
			read_unlock_bh(&mr->odp_lock);
			sroce_odp_miss_set(miss, mr, iova, len, write);
			return false;
		}
		/* The next page, unless this one holds the last byte. */
		if ((va | (page_size - 1)) >= last)
			break;
		va = (va | (page_size - 1)) + 1;
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
	u64 va = sroce_odp_va(mr, iova);
	struct ib_umem_odp *umem_odp = sroce_odp_umem(mr, va);
	u64 page_size = BIT_ULL(umem_odp->page_shift);
	u64 off = va & (page_size - 1);
	dma_addr_t entry;

	entry = READ_ONCE(umem_odp->dma_list[sroce_odp_index(umem_odp, va)]);
	*contig = min_t(u64, len, page_size - off);
	return (void *)(uintptr_t)((entry & ODP_DMA_ADDR_MASK) + off);
}

/* Map @len bytes from user address @va of @umem_odp; sleeps. */
static int sroce_odp_map_umem(struct ib_umem_odp *umem_odp, u64 va, u64 len,
			      bool write)
{
	u64 access = ODP_READ_ALLOWED_BIT;
	int ret;

	if (write)
		access |= ODP_WRITE_ALLOWED_BIT;
	ret = ib_umem_odp_map_dma_and_lock(umem_odp, va, len, access, true);
	if (ret < 0)
		return ret;
	mutex_unlock(&umem_odp->umem_mutex);
	return 0;
}

/* The child umem of chunk @chunk of an implicit region, added if missing. */
static struct ib_umem_odp *sroce_odp_child(struct sroce_mr *mr, u64 chunk,
					   bool *added)
{
	struct sroce_odp_implicit *imp = mr->odp_implicit;
	struct ib_umem_odp *child;
	int err;

	*added = false;
	child = xa_load(&imp->children, chunk);
	if (child)
		return child;
	/* The root holds no reference of the address space: this one does. */
	if (!mmget_not_zero(imp->mm))
		return ERR_PTR(-EFAULT);
	child = ib_umem_odp_alloc_child(to_ib_umem_odp(mr->umem),
					chunk << SROCE_ODP_CHUNK_SHIFT,
					SROCE_ODP_CHUNK, &sroce_odp_ops);
	mmput(imp->mm);
	if (IS_ERR(child))
		return child;
	mutex_lock(&child->umem_mutex);
	child->private = mr;
	mutex_unlock(&child->umem_mutex);
	err = xa_insert_bh(&imp->children, chunk, child, GFP_KERNEL);
	if (err) {
		ib_umem_odp_release(child);
		return ERR_PTR(err);
	}
	*added = true;
	return child;
}

/* Take away a child whose first fault failed; no copy can be using it. */
static void sroce_odp_child_remove(struct sroce_mr *mr, u64 chunk,
				   struct ib_umem_odp *child)
{
	write_lock_bh(&mr->odp_lock);
	xa_erase(&mr->odp_implicit->children, chunk);
	write_unlock_bh(&mr->odp_lock);
	ib_umem_odp_release(child);
}

/* Map @len bytes from user address @va of an implicit region, chunk by chunk. */
static int sroce_odp_map_implicit(struct sroce_mr *mr, u64 va, u64 len,
				  bool write)
{
	struct sroce_odp_implicit *imp = mr->odp_implicit;
	int ret = 0;

	mutex_lock(&imp->lock);
	while (len && !ret) {
		u64 chunk = va >> SROCE_ODP_CHUNK_SHIFT;
		u64 n = min(len, SROCE_ODP_CHUNK - (va & (SROCE_ODP_CHUNK - 1)));
		struct ib_umem_odp *child;
		bool added;

		child = sroce_odp_child(mr, chunk, &added);
		if (IS_ERR(child)) {
			ret = PTR_ERR(child);
			break;
		}
		ret = sroce_odp_map_umem(child, va, n, write);
		if (ret < 0 && added)
			sroce_odp_child_remove(mr, chunk, child);
		va += n;
		len -= n;
	}
	mutex_unlock(&imp->lock);
	return ret;
}

/* Map @len bytes from @iova; sleeps. */
static int sroce_odp_map(struct sroce_mr *mr, u64 iova, u64 len, bool write)
{
	u64 va = sroce_odp_va(mr, iova);

	if (mr->odp_implicit)
		return sroce_odp_map_implicit(mr, va, len, write);
	return sroce_odp_map_umem(to_ib_umem_odp(mr->umem), va, len, write);
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
