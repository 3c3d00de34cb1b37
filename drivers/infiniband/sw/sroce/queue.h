/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The rings shared with user space: send, receive and completion queues in
 * the layout of struct rxe_queue_buf (a 384-byte header of indices, then
 * 2^k slots of 2^m bytes), mapped into the process through the uverbs fd.
 *
 * User space owns the producer index of work queues and the consumer index
 * of completion queues and can scribble anything into them, or into the
 * header's sizes: the kernel keeps private copies of the sizes and of the
 * indices it owns, and masks every index it reads.
 */
#ifndef _SROCE_QUEUE_H
#define _SROCE_QUEUE_H

#include <linux/types.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_user_rxe.h>

/**
 * struct sroce_mmap - a ring offered to user space through mmap()
 * @rdma: the RDMA core's mmap entry; its reference count decides when
 *	@buf is freed (after the ring is destroyed and unmapped)
 * @buf: the vmalloc_user() memory of the ring
 */
struct sroce_mmap {
	struct rdma_user_mmap_entry	rdma;
	void				*buf;
};

/**
 * struct sroce_queue - a ring
 * @buf: header and slots
 * @log2_elem: private copy of the slot size, log2
 * @mask: private copy of the index mask (slots - 1)
 * @mmap: the mmap entry when user space maps the ring, else NULL
 */
struct sroce_queue {
	struct rxe_queue_buf	*buf;
	u32			log2_elem;
	u32			mask;
	struct sroce_mmap	*mmap;
};

int sroce_queue_init(struct sroce_queue *q, struct ib_udata *udata,
		     u32 entries, size_t elem_size, struct mminfo *mi);
void sroce_queue_free(struct sroce_queue *q);
int sroce_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma);
void sroce_mmap_free(struct rdma_user_mmap_entry *entry);

static inline void *sroce_queue_slot(const struct sroce_queue *q, u32 index)
{
	return q->buf->data + ((size_t)(index & q->mask) << q->log2_elem);
}

static inline u32 sroce_queue_next(const struct sroce_queue *q, u32 index)
{
	return (index + 1) & q->mask;
}

static inline u32 sroce_queue_count(const struct sroce_queue *q, u32 prod,
				    u32 cons)
{
	return (prod - cons) & q->mask;
}

/*
 * Index words are read with acquire and written with release semantics,
 * pairing with the other side: entries are written before the index that
 * publishes them, and read only after the index that announced them.
 */
static inline u32 sroce_queue_load_producer(const struct sroce_queue *q)
{
	/* Pairs with the producer's release: the entries are visible. */
	return smp_load_acquire(&q->buf->producer_index) & q->mask;
}

static inline u32 sroce_queue_load_consumer(const struct sroce_queue *q)
{
	/* Pairs with the consumer's release: freed slots may be reused. */
	return smp_load_acquire(&q->buf->consumer_index) & q->mask;
}

static inline void sroce_queue_store_producer(struct sroce_queue *q, u32 index)
{
	/* Publishes the entries written before it. */
	smp_store_release(&q->buf->producer_index, index & q->mask);
}

static inline void sroce_queue_store_consumer(struct sroce_queue *q, u32 index)
{
	/* Hands back the slots read before it. */
	smp_store_release(&q->buf->consumer_index, index & q->mask);
}

#endif /* _SROCE_QUEUE_H */
