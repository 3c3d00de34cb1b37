/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Memory regions (mr.c): keys, access checks, address translation, and
 * copies to and from registered memory, directly or through the
 * scatter/gather lists of work requests.
 */
#ifndef _SROCE_MR_H
#define _SROCE_MR_H

#include <linux/completion.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>

struct sk_buff;
struct sroce_dev;
struct sroce_odp_implicit;
struct sroce_odp_miss;
struct sroce_qp;

/*
 * A key, lkey or rkey, is the index of its region or window in the device's
 * table in its upper 24 bits, and a variable byte in its lower 8: a
 * generation that a stale key of a freed index does not match, or for a
 * window the byte its consumer picks at each bind.
 */
#define SROCE_KEY_INDEX_SHIFT	8
#define SROCE_KEY_VAR_MASK	0xffU

static inline u32 sroce_key_index(u32 key)
{
	return key >> SROCE_KEY_INDEX_SHIFT;
}

static inline u32 sroce_key_make(u32 index, u32 var)
{
	return index << SROCE_KEY_INDEX_SHIFT | (var & SROCE_KEY_VAR_MASK);
}

/* A length for sroce_mr_get(): the whole region or window, any address. */
#define SROCE_LEN_WHOLE		U64_MAX

/**
 * struct sroce_mr - a memory region
 * @ibmr: the RDMA core's MR; lkey and rkey are equal
 * @umem: the user memory, NULL for a DMA region
 * @pages: the pages of a pinned @umem, in order
 * @npages: entries in @pages
 * @iova: the address the region starts at, as the consumer sees it
 * @length: bytes in the region
 * @offset: offset of @iova in the first page
 * @access: IB_ACCESS_* rights
 * @index: position in the device's MR table, the key's upper 24 bits
 * @ref: lookups in flight, plus one for the table
 * @released: completed when @ref reaches zero
 * @valid: the key may be used; cleared by invalidation
 * @rcu: frees the region after the lookups that may have found it
 * @kernel_va: a DMA region of a kernel consumer: its addresses are kernel
 *	virtual addresses (the device uses virtual DMA), covering all memory
 * @kbufs: a fast-registration region's buffers while it is registered:
 *	the kernel addresses of its pages of 1 << @page_shift bytes
 * @nbufs: entries of @kbufs in use
 * @page_shift: the size of the registered pages
 * @pbufs: the buffers map_mr_sg() gave for the next registration, which
 *	IB_WR_REG_MR swaps with @kbufs. Consumers map the next pages while
 *	the region is still registered, its LOCAL_INV queued ahead of the
 *	REG_MR (ib_srp, the kernel's rdma_rw contexts), so mapping must not
 *	touch what the current registration uses.
 * @npbufs: entries of @pbufs in use
 * @max_bufs: entries @kbufs and @pbufs have room for; both arrays live
 *	until the region is deregistered, so a reader that raced with a
 *	new registration still reads inside one of them
 * @reg_lock: serialises IB_WR_REG_MR and invalidation of a fast-registration
 *	region: two QPs may post them for the same region at once
 * @map_fbo: offset of the first mapped byte in the first of @pbufs
 * @bound_mws: memory windows bound to the region; it cannot be
 *	deregistered while there are any; -1 once it is being deregistered
 * @odp: @umem is an on-demand paging umem, not pinned (odp.c)
 * @odp_lock: held for reading while the data path uses pages of an @odp
 *	region, for writing while the MMU notifier unmaps them
 * @odp_implicit: the child umems of an implicit @odp region, which covers
 *	the whole address space (odp.c); NULL for other regions
 * @key: the lkey and rkey of the current registration, which accesses and
 *	invalidations are checked against. Not ibmr.lkey: consumers re-key
 *	a fast-registration region (ib_update_fast_reg_key()) when they post
 *	its next REG_MR, which may be while a LOCAL_INV of the current key
 *	is still queued ahead of it.
 */
struct sroce_mr {
	struct ib_mr		ibmr;
	struct ib_umem		*umem;
	struct page		**pages;
	unsigned long		npages;
	u64			iova;
	u64			length;
	unsigned int		offset;
	int			access;
	u32			index;
	refcount_t		ref;
	struct completion	released;
	bool			valid;
	struct rcu_head		rcu;
	bool			kernel_va;
	u64			*kbufs;
	u32			nbufs;
	u32			page_shift;
	u64			*pbufs;
	u32			npbufs;
	u32			max_bufs;
	spinlock_t		reg_lock;	/* see above */
	u32			map_fbo;
	atomic_t		bound_mws;
	bool			odp;
	rwlock_t		odp_lock;	/* see above */
	struct sroce_odp_implicit *odp_implicit;
	u32			key;
};

static inline struct sroce_mr *to_smr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct sroce_mr, ibmr);
}

struct sroce_mr *sroce_mr_get(struct sroce_dev *sdev, u32 key,
			      struct ib_pd *pd, int access, u64 iova, u64 len,
			      const struct sroce_qp *remote_qp);
struct sroce_mr *sroce_rkey_get(const struct sroce_qp *qp, u32 rkey,
				int access, u64 va, u64 len, u64 *mr_iova);
void sroce_mr_put(struct sroce_mr *mr);
int sroce_mr_invalidate(struct sroce_dev *sdev, u32 key, struct ib_pd *pd,
			const struct sroce_qp *remote_qp);
int sroce_mr_copy_from(struct sroce_mr *mr, u64 iova, void *dst, u32 len,
		       u32 *crc, struct sroce_odp_miss *miss);
int sroce_mr_copy_skb(struct sroce_mr *mr, u64 iova, struct sk_buff *skb,
		      int offset, u32 len, u32 *crc, struct sroce_odp_miss *miss);

/**
 * enum sroce_mr_op - what a walk over registered memory does with each
 * contiguous piece of it
 * @SROCE_MR_COPY_TO: copy bytes from a buffer into the memory
 * @SROCE_MR_COPY_FROM: copy the memory's bytes out to a packet, continuing
 *	its ICRC over them
 * @SROCE_MR_COPY_SKB: copy a packet's payload into the memory
 * @SROCE_MR_ATOMIC: an atomic operation on 8 bytes (struct sroce_atomic_op)
 * @SROCE_MR_ATTACH: attach the memory's pages to a packet being built, as
 *	payload fragments (zero-copy transmit)
 */
enum sroce_mr_op {
	SROCE_MR_COPY_TO,
	SROCE_MR_COPY_FROM,
	SROCE_MR_COPY_SKB,
	SROCE_MR_ATOMIC,
	SROCE_MR_ATTACH,
};

struct sroce_atomic_op;
struct sroce_pkt;

/**
 * struct sroce_mr_xfer - a transfer between registered memory and a buffer
 * or packet, carried out piece by contiguous piece
 * @op: enum sroce_mr_op
 * @src: SROCE_MR_COPY_TO: the bytes; advances
 * @dst: SROCE_MR_COPY_FROM: where the bytes go; advances
 * @crc: SROCE_MR_COPY_FROM: an ICRC continued over the bytes
 *	(sroce_icrc_copy()); SROCE_MR_COPY_SKB: the same, or NULL
 * @skb: SROCE_MR_COPY_SKB: the packet
 * @skb_off: SROCE_MR_COPY_SKB: offset of the next byte in @skb; advances
 * @atomic: SROCE_MR_ATOMIC: the operation
 * @pkt: SROCE_MR_ATTACH: the packet
 */
struct sroce_mr_xfer {
	enum sroce_mr_op	op;
	const void		*src;
	void			*dst;
	u32			*crc;
	struct sk_buff		*skb;
	int			skb_off;
	struct sroce_atomic_op	*atomic;
	struct sroce_pkt	*pkt;
};

/* Whether @x stores into the memory (which needs write rights). */
static inline bool sroce_mr_xfer_writes(const struct sroce_mr_xfer *x)
{
	return x->op != SROCE_MR_COPY_FROM && x->op != SROCE_MR_ATTACH;
}

/**
 * struct sroce_sge_cursor - a position in a scatter/gather list
 * @sdev: the device whose keys the list holds
 * @pd: the PD the list belongs to
 * @sge: the entry holding the next byte
 * @end: one past the list's last entry
 * @offset: offset of the next byte from the start of @sge; may reach past
 *	it, the walk then skips entries first
 * @miss: where an on-demand region records pages it needs faulted in
 *
 * sroce_sge_walk() moves it on, so that one walk can go on where the last
 * one stopped.
 */
struct sroce_sge_cursor {
	struct sroce_dev	*sdev;
	struct ib_pd		*pd;
	const struct ib_sge	*sge;
	const struct ib_sge	*end;
	u32			offset;
	struct sroce_odp_miss	*miss;
};

/* Set @cur at byte @offset of the list of @num_sge entries at @sge. */
static inline void sroce_sge_cursor_init(struct sroce_sge_cursor *cur,
					 struct sroce_dev *sdev,
					 struct ib_pd *pd,
					 const struct ib_sge *sge, u32 num_sge,
					 u32 offset,
					 struct sroce_odp_miss *miss)
{
	cur->sdev = sdev;
	cur->pd = pd;
	cur->sge = sge;
	cur->end = sge + num_sge;
	cur->offset = offset;
	cur->miss = miss;
}

int sroce_sge_walk(struct sroce_sge_cursor *cur, struct sroce_mr_xfer *x,
		   u32 len);
int sroce_sge_scatter_skb(struct sroce_dev *sdev, struct ib_pd *pd,
			  const struct ib_sge *sge, u32 num_sge, u32 offset,
			  struct sk_buff *skb, int skb_off, u32 len, u32 *crc,
			  struct sroce_odp_miss *miss);
int sroce_sge_scatter(struct sroce_dev *sdev, struct ib_pd *pd,
		      const struct ib_sge *sge, u32 num_sge, u32 offset,
		      const void *src, u32 len, struct sroce_odp_miss *miss);
int sroce_sge_gather(struct sroce_dev *sdev, struct ib_pd *pd,
		     const struct ib_sge *sge, u32 num_sge, u32 offset,
		     void *dst, u32 len, u32 *crc, struct sroce_odp_miss *miss);
int sroce_mr_attach(struct sroce_mr *mr, u64 iova, struct sroce_pkt *pkt,
		    u32 len);
int sroce_sge_attach(struct sroce_dev *sdev, struct ib_pd *pd,
		     const struct ib_sge *sge, u32 num_sge, u32 offset,
		     struct sroce_pkt *pkt, u32 len);

/**
 * struct sroce_atomic_op - an atomic operation on 8 bytes of a region
 * @opcode: SROCE_OP_CMP_SWAP, SROCE_OP_FETCH_ADD or SROCE_OP_ATOMIC_WRITE
 * @cmp: the compare value of a compare and swap
 * @val: the swap value, the addend, or the value written
 * @orig: set to the bytes before the operation
 */
struct sroce_atomic_op {
	u8	opcode;
	u64	cmp;
	u64	val;
	u64	orig;
};

int sroce_mr_atomic(struct sroce_mr *mr, u64 iova, struct sroce_atomic_op *op,
		    struct sroce_odp_miss *miss);

/* The verbs, for verbs.c's operations table. */
struct ib_mr *sroce_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				u64 iova, int access, struct ib_udata *udata);
int sroce_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
struct ib_mr *sroce_get_dma_mr(struct ib_pd *ibpd, int access);
struct ib_mr *sroce_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			     u32 max_num_sg);
int sroce_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		    unsigned int *sg_offset);
int sroce_mr_fast_reg(struct ib_pd *pd, struct ib_mr *ibmr, u32 key,
		      int access);

#endif /* _SROCE_MR_H */
