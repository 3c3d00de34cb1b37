// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Ring allocation and the mmap() of rings into user space.
 */

#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/vmalloc.h>

#include <rdma/uverbs_ioctl.h>

#include "queue.h"
#include "verbs.h"

/* Slots are at least a cache line, so no two of them share one. */
#define SROCE_MIN_ELEM_SIZE	64
/* Slots a ring may have at most, so that its indices stay small. */
#define SROCE_QUEUE_MAX_ENTRIES	BIT(24)

/**
 * sroce_queue_init() - allocate a ring
 * @q: the ring to set up
 * @udata: the user's command data when user space will map the ring, or NULL
 * @entries: usable slots wanted; one more is allocated, as a full ring keeps
 *	one slot empty
 * @elem_size: bytes per slot wanted
 * @mi: where to describe the mapping for user space; used when @udata is set
 *
 * Return: 0 or a negative errno. The capacity is then @q->mask.
 */
int sroce_queue_init(struct sroce_queue *q, struct ib_udata *udata,
		     u32 entries, size_t elem_size, struct mminfo *mi)
{
	struct sroce_ucontext *uctx = NULL;
	size_t size;
	u32 slots;
	int err;

	if (!entries || entries >= SROCE_QUEUE_MAX_ENTRIES)
		return -EINVAL;
	slots = roundup_pow_of_two(entries + 1);
	elem_size = roundup_pow_of_two(max_t(size_t, elem_size,
					     SROCE_MIN_ELEM_SIZE));
	size = PAGE_ALIGN(sizeof(struct rxe_queue_buf) + slots * elem_size);

	q->buf = vmalloc_user(size);
	if (!q->buf)
		return -ENOMEM;
	q->log2_elem = ilog2(elem_size);
	q->mask = slots - 1;
	q->buf->log2_elem_size = q->log2_elem;
	q->buf->index_mask = q->mask;
	q->mmap = NULL;

	if (udata)
		uctx = rdma_udata_to_drv_context(udata, struct sroce_ucontext,
						 ibuc);
	if (!uctx)
		return 0;

	q->mmap = kzalloc(sizeof(*q->mmap), GFP_KERNEL);
	if (!q->mmap) {
		err = -ENOMEM;
		goto err_free_buf;
	}
	q->mmap->buf = q->buf;
	err = rdma_user_mmap_entry_insert(&uctx->ibuc, &q->mmap->rdma, size);
	if (err)
		goto err_free_mmap;

	mi->offset = rdma_user_mmap_get_offset(&q->mmap->rdma);
	mi->size = size;
	mi->pad = 0;
	return 0;

err_free_mmap:
	kfree(q->mmap);
	q->mmap = NULL;
err_free_buf:
	vfree(q->buf);
	q->buf = NULL;
	return err;
}

/**
 * sroce_queue_free() - release a ring
 * @q: the ring
 *
 * A ring user space may still have mapped is freed by sroce_mmap_free()
 * once the last mapping is gone.
 */
void sroce_queue_free(struct sroce_queue *q)
{
	if (q->mmap)
		rdma_user_mmap_entry_remove(&q->mmap->rdma);
	else
		vfree(q->buf);
	q->buf = NULL;
	q->mmap = NULL;
}

int sroce_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *entry;
	struct sroce_mmap *m;
	int err;

	entry = rdma_user_mmap_entry_get(uctx, vma);
	if (!entry)
		return -EINVAL;
	m = container_of(entry, struct sroce_mmap, rdma);
	err = remap_vmalloc_range(vma, m->buf, 0);
	rdma_user_mmap_entry_put(entry);
	return err;
}

void sroce_mmap_free(struct rdma_user_mmap_entry *entry)
{
	struct sroce_mmap *m = container_of(entry, struct sroce_mmap, rdma);

	/* Pages still mapped somewhere hold their own references. */
	vfree(m->buf);
	kfree(m);
}
