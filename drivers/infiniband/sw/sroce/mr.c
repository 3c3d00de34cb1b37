// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory regions: registration, keys, access checks, and the copies
 * between packets and registered memory.
 *
 * A key is the region's table index in its upper 24 bits and a generation
 * byte in its lower 8, so a stale key of a freed index does not match the
 * region that reuses the index for 255 registrations.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/highmem.h>
#include <linux/net.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include <sroce/transport.h>
#include <sroce/wire.h>
#include "limits.h"
#include "mr.h"
#include "mw.h"
#include "odp.h"
#include "qp.h"
#include "sroce.h"
#include "xmit.h"

#define SROCE_MR_SUPPORTED_ACCESS (IB_ACCESS_LOCAL_WRITE |		\
				   IB_ACCESS_REMOTE_WRITE |		\
				   IB_ACCESS_REMOTE_READ |		\
				   IB_ACCESS_REMOTE_ATOMIC |		\
				   IB_ACCESS_MW_BIND |			\
				   IB_ACCESS_RELAXED_ORDERING |		\
				   SROCE_ACCESS_FLUSH)
/* Rights only a region of user memory may have. */
#define SROCE_MR_USER_ACCESS	(IB_ACCESS_ON_DEMAND | IB_ACCESS_HUGETLB)

static int sroce_mr_collect_pages(struct sroce_mr *mr)
{
	struct sg_page_iter iter;
	unsigned long i = 0;

	mr->npages = ib_umem_num_pages(mr->umem);
	mr->pages = kvmalloc_array(mr->npages ?: 1, sizeof(*mr->pages),
				   GFP_KERNEL);
	if (!mr->pages)
		return -ENOMEM;
	for_each_sgtable_page(&mr->umem->sgt_append.sgt, &iter, 0) {
		if (WARN_ON_ONCE(i >= mr->npages))
			return -EFAULT;
		mr->pages[i++] = sg_page_iter_page(&iter);
	}
	mr->npages = i;
	return 0;
}

static int sroce_mr_insert(struct sroce_dev *sdev, struct sroce_mr *mr,
			   bool valid)
{
	u32 index;
	int err;

	refcount_set(&mr->ref, 1);
	init_completion(&mr->released);
	err = xa_alloc_cyclic(&sdev->mrs, &index, mr,
			      XA_LIMIT(1, SROCE_MAX_MR), &sdev->mr_next,
			      GFP_KERNEL);
	if (err < 0)
		return err == -EBUSY ? -ENOMEM : err;
	mr->index = index;
	mr->ibmr.lkey = sroce_key_make(index,
				       atomic_inc_return(&sdev->key_gen));
	mr->ibmr.rkey = mr->ibmr.lkey;
	mr->key = mr->ibmr.lkey;
	WRITE_ONCE(mr->valid, valid);
	return 0;
}

static void sroce_mr_remove(struct sroce_dev *sdev, struct sroce_mr *mr)
{
	xa_erase(&sdev->mrs, mr->index);
	/* Wait for packets and WQEs that found the region to let go. */
	sroce_mr_put(mr);
	wait_for_completion(&mr->released);
}

/* The verbs' way of asking for all of the address space, on demand. */
static bool sroce_mr_is_implicit(u64 start, u64 length, int access)
{
	return (access & IB_ACCESS_ON_DEMAND) && !start && length == U64_MAX;
}

/*
 * An implicit on-demand region: all of the process's memory, at its own
 * addresses, mapped page by page as the data path touches it (odp.c).
 */
static struct ib_mr *sroce_reg_implicit_mr(struct ib_pd *ibpd, u64 iova,
					   int access)
{
	struct sroce_dev *sdev = to_sdev(ibpd->device);
	struct sroce_mr *mr;
	int err;

	/* Its addresses are the process's: there is nothing to offset. */
	if (iova)
		return ERR_PTR(-EINVAL);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	err = sroce_odp_reg_implicit(mr, ibpd->device, access);
	if (err)
		goto err_free;
	mr->iova = 0;
	mr->length = U64_MAX;
	mr->access = access;
	err = sroce_mr_insert(sdev, mr, true);
	if (err)
		goto err_release;
	return &mr->ibmr;

err_release:
	sroce_odp_release(mr);
err_free:
	kfree(mr);
	return ERR_PTR(err);
}

struct ib_mr *sroce_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				u64 iova, int access, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibpd->device);
	struct sroce_mr *mr;
	int err;

	if (access & ~(SROCE_MR_SUPPORTED_ACCESS | SROCE_MR_USER_ACCESS))
		return ERR_PTR(-EOPNOTSUPP);
	if (sroce_mr_is_implicit(start, length, access))
		return sroce_reg_implicit_mr(ibpd, iova, access);
	if (!length || length > SROCE_MAX_MSG_SIZE * 16ULL)
		return ERR_PTR(-EINVAL);

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);

	if (access & IB_ACCESS_ON_DEMAND) {
		err = sroce_odp_reg(mr, ibpd->device, start, length, access);
		if (err)
			goto err_free;
	} else {
		mr->umem = ib_umem_get(ibpd->device, start, length, access);
		if (IS_ERR(mr->umem)) {
			err = PTR_ERR(mr->umem);
			goto err_free;
		}
		err = sroce_mr_collect_pages(mr);
		if (err)
			goto err_release;
	}

	mr->iova = iova;
	mr->length = length;
	mr->offset = ib_umem_offset(mr->umem);
	mr->access = access;
	err = sroce_mr_insert(sdev, mr, true);
	if (err)
		goto err_pages;
	return &mr->ibmr;

err_pages:
	kvfree(mr->pages);
err_release:
	ib_umem_release(mr->umem);
err_free:
	kfree(mr);
	return ERR_PTR(err);
}

/**
 * sroce_get_dma_mr() - a region of all kernel memory, for a kernel consumer
 * @ibpd: the PD
 * @access: IB_ACCESS_* rights
 *
 * sroce registers without a DMA device, so the RDMA core hands kernel
 * consumers kernel virtual addresses as DMA addresses: the region's
 * addresses are those, and its key is typically the PD's local_dma_lkey.
 *
 * Return: the region, or an ERR_PTR().
 */
struct ib_mr *sroce_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct sroce_dev *sdev = to_sdev(ibpd->device);
	struct sroce_mr *mr;
	int err;

	/*
	 * Remote access to all of kernel memory would let a peer dereference
	 * any address it likes: such "unsafe global rkeys" are refused.
	 */
	if (access & ~(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_RELAXED_ORDERING))
		return ERR_PTR(-EOPNOTSUPP);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->kernel_va = true;
	mr->iova = 0;
	mr->length = U64_MAX;
	mr->access = access;
	err = sroce_mr_insert(sdev, mr, true);
	if (err) {
		kfree(mr);
		return ERR_PTR(err);
	}
	return &mr->ibmr;
}

/**
 * sroce_alloc_mr() - a fast-registration region for a kernel consumer
 * @ibpd: the PD
 * @type: IB_MR_TYPE_MEM_REG only
 * @max_num_sg: pages it can map
 *
 * The region is invalid until an IB_WR_REG_MR work request registers the
 * pages map_mr_sg() gave it.
 *
 * Return: the region, or an ERR_PTR().
 */
struct ib_mr *sroce_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			     u32 max_num_sg)
{
	struct sroce_dev *sdev = to_sdev(ibpd->device);
	struct sroce_mr *mr;
	int err;

	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EOPNOTSUPP);
	if (!max_num_sg || max_num_sg > SROCE_MAX_FR_PAGES)
		return ERR_PTR(-EINVAL);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->kbufs = kvcalloc(max_num_sg, sizeof(*mr->kbufs), GFP_KERNEL);
	mr->pbufs = kvcalloc(max_num_sg, sizeof(*mr->pbufs), GFP_KERNEL);
	if (!mr->kbufs || !mr->pbufs) {
		err = -ENOMEM;
		goto err_free;
	}
	mr->max_bufs = max_num_sg;
	spin_lock_init(&mr->reg_lock);
	err = sroce_mr_insert(sdev, mr, false);
	if (err)
		goto err_free;
	return &mr->ibmr;

err_free:
	kvfree(mr->pbufs);
	kvfree(mr->kbufs);
	kfree(mr);
	return ERR_PTR(err);
}

static int sroce_mr_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct sroce_mr *mr = to_smr(ibmr);

	if (mr->npbufs >= mr->max_bufs)
		return -ENOMEM;
	mr->pbufs[mr->npbufs++] = addr;
	return 0;
}

/**
 * sroce_map_mr_sg() - give a fast-registration region its next pages
 * @ibmr: the region, registered or not: its next IB_WR_REG_MR takes them
 * @sg: the DMA-mapped scatter list (kernel addresses: virtual DMA)
 * @sg_nents: its entries
 * @sg_offset: offset into the first entry
 *
 * Return: the entries mapped, or a negative errno.
 */
int sroce_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		    unsigned int *sg_offset)
{
	struct sroce_mr *mr = to_smr(ibmr);
	int n;

	mr->npbufs = 0;
	n = ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, sroce_mr_set_page);
	mr->map_fbo = ibmr->iova & (ibmr->page_size - 1);
	return n;
}

/**
 * sroce_mr_fast_reg() - register a region's mapped pages (IB_WR_REG_MR)
 * @pd: the PD of the QP the work request came from
 * @ibmr: the region
 * @key: its new lkey and rkey; the upper 24 bits must stay the region's
 * @access: IB_ACCESS_* rights
 *
 * The iova is the region's at this moment: consumers may move it after
 * map_mr_sg(), keeping the page offset.
 *
 * Return: 0, or -EINVAL for a region of another PD, a valid one, or a
 * foreign key.
 */
int sroce_mr_fast_reg(struct ib_pd *pd, struct ib_mr *ibmr, u32 key,
		      int access)
{
	struct sroce_mr *mr = to_smr(ibmr);
	unsigned long flags;
	u64 *bufs;

	if (!mr->kbufs || ibmr->pd != pd ||
	    sroce_key_index(key) != mr->index || (access & ~SROCE_MR_SUPPORTED_ACCESS))
		return -EINVAL;
	spin_lock_irqsave(&mr->reg_lock, flags);
	if (mr->valid) {
		spin_unlock_irqrestore(&mr->reg_lock, flags);
		return -EINVAL;
	}
	mr->access = access;
	mr->iova = ibmr->iova;
	mr->length = ibmr->length;
	mr->offset = mr->map_fbo;
	mr->page_shift = ilog2(ibmr->page_size);
	bufs = mr->kbufs;
	WRITE_ONCE(mr->kbufs, mr->pbufs);
	mr->pbufs = bufs;
	WRITE_ONCE(mr->nbufs, min(mr->npbufs, mr->max_bufs));
	WRITE_ONCE(mr->key, key);
	mr->ibmr.lkey = key;
	mr->ibmr.rkey = key;
	/* Pairs with sroce_mr_get(): the fields above before the flag. */
	smp_store_release(&mr->valid, true);
	spin_unlock_irqrestore(&mr->reg_lock, flags);
	return 0;
}

int sroce_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct sroce_mr *mr = to_smr(ibmr);

	/*
	 * A bound window holds the region (IBTA C10-61). A negative count
	 * closes it to binds from here on, in the same step as the check.
	 */
	if (atomic_cmpxchg(&mr->bound_mws, 0, -1))
		return -EBUSY;

	sroce_mr_remove(to_sdev(ibmr->device), mr);
	if (mr->odp)
		sroce_odp_release(mr);
	else if (mr->umem)
		ib_umem_release(mr->umem);
	kvfree(mr->kbufs);
	kvfree(mr->pbufs);
	kvfree(mr->pages);
	/* A key lookup that found @mr before its removal may still read it. */
	kfree_rcu(mr, rcu);
	return 0;
}

/*
 * Find a region by key and check an access to it, as sroce_mr_get()
 * describes; *@mr_iova is set to the region's address of byte @iova, which
 * differs from @iova for an access through a zero-based window.
 */
static struct sroce_mr *sroce_key_get(struct sroce_dev *sdev, u32 key,
				      struct ib_pd *pd, int access, u64 iova,
				      u64 len, const struct sroce_qp *remote_qp,
				      u64 *mr_iova)
{
	struct sroce_mr *mr;
	void *entry;

	rcu_read_lock();
	entry = xa_load(&sdev->mrs, sroce_key_index(key));
	if (xa_pointer_tag(entry) == SROCE_KEY_MW) {
		mr = remote_qp ? sroce_mw_get_mr(xa_untag_pointer(entry), key,
						 remote_qp, access, iova,
						 len, mr_iova) : NULL;
		rcu_read_unlock();
		return mr;
	}
	mr = entry;
	if (mr && !refcount_inc_not_zero(&mr->ref))
		mr = NULL;
	rcu_read_unlock();
	if (!mr)
		return NULL;

	/* Pairs with sroce_mr_fast_reg(). */
	if (!smp_load_acquire(&mr->valid) ||
	    READ_ONCE(mr->key) != key ||
	    READ_ONCE(mr->ibmr.pd) != pd ||
	    !sroce_access_granted(READ_ONCE(mr->access), access) ||
	    (len != SROCE_LEN_WHOLE &&
	     !sroce_range_within(mr->iova, mr->length, iova, len))) {
		sroce_mr_put(mr);
		return NULL;
	}
	*mr_iova = iova;
	return mr;
}

/**
 * sroce_mr_get() - find a region by key and check an access to it
 * @sdev: the device
 * @key: lkey or rkey, untrusted
 * @pd: the protection domain the access comes from
 * @access: IB_ACCESS_* rights the access needs; 0 for a local read
 * @iova: first byte accessed
 * @len: bytes accessed; SROCE_LEN_WHOLE for the whole region or window,
 *	whatever @iova
 * @remote_qp: for an rkey from the wire, the QP it arrived on (the key may
 *	then also name a memory window); NULL for a local key
 *
 * For a check only: an rkey that may name a zero-based window is resolved
 * by sroce_rkey_get() for the region's address of the bytes.
 *
 * Context: any.
 * Return: the region with a reference held, or NULL when the key is unknown,
 * invalid, of another PD, lacks the rights, or the range is out of bounds.
 */
struct sroce_mr *sroce_mr_get(struct sroce_dev *sdev, u32 key,
			      struct ib_pd *pd, int access, u64 iova, u64 len,
			      const struct sroce_qp *remote_qp)
{
	u64 mr_iova;

	return sroce_key_get(sdev, key, pd, access, iova, len, remote_qp,
			     &mr_iova);
}

/**
 * sroce_rkey_get() - resolve an rkey from the wire to the bytes it names
 * @qp: the QP the request arrived on
 * @rkey: the rkey, untrusted
 * @access: IB_ACCESS_* rights the access needs
 * @va: first byte, as the request names it: for a zero-based window an
 *	offset into the window
 * @len: bytes accessed, not SROCE_LEN_WHOLE
 * @mr_iova: set to the region's address of byte @va, the address the
 *	copies and atomic operations on the region take
 *
 * Context: any.
 * Return: as sroce_mr_get().
 */
struct sroce_mr *sroce_rkey_get(const struct sroce_qp *qp, u32 rkey,
				int access, u64 va, u64 len, u64 *mr_iova)
{
	return sroce_key_get(qp->sdev, rkey, qp->ibqp.pd, access, va, len, qp,
			     mr_iova);
}

void sroce_mr_put(struct sroce_mr *mr)
{
	if (refcount_dec_and_test(&mr->ref))
		complete(&mr->released);
}

/**
 * sroce_mr_invalidate() - invalidate a region's key (LOCAL_INV, SEND_WITH_INV)
 * @sdev: the device
 * @key: the key, untrusted
 * @pd: the PD the request comes from
 * @remote_qp: for SEND_WITH_INV, the QP it arrived on; NULL for LOCAL_INV
 *
 * Only what the IBTA lets be invalidated: a fast-registration region
 * (ib_alloc_mr) with no window bound to it, or a type 2 window, of @pd; a
 * window invalidated by its peer must be bound to the QP the request
 * arrived on. A region registered by reg_user_mr or get_dma_mr keeps its
 * key until it is deregistered.
 *
 * Return: 0, or -EINVAL when the key names nothing that may be invalidated.
 */
int sroce_mr_invalidate(struct sroce_dev *sdev, u32 key, struct ib_pd *pd,
			const struct sroce_qp *remote_qp)
{
	struct sroce_mr *mr;
	unsigned long flags;
	void *entry;
	int err = -EINVAL;

	rcu_read_lock();
	entry = xa_load(&sdev->mrs, sroce_key_index(key));
	if (xa_pointer_tag(entry) == SROCE_KEY_MW) {
		err = sroce_mw_invalidate(xa_untag_pointer(entry), key, pd,
					  remote_qp);
		rcu_read_unlock();
		return err;
	}
	mr = entry;
	if (mr && !refcount_inc_not_zero(&mr->ref))
		mr = NULL;
	rcu_read_unlock();
	if (!mr)
		return -EINVAL;

	if (mr->kbufs && mr->ibmr.pd == pd) {
		spin_lock_irqsave(&mr->reg_lock, flags);
		if (mr->key == key && atomic_read(&mr->bound_mws) <= 0) {
			WRITE_ONCE(mr->valid, false);
			err = 0;
		}
		spin_unlock_irqrestore(&mr->reg_lock, flags);
	}
	sroce_mr_put(mr);
	return err;
}

/* The page holding byte @iova of the region, and the byte's offset in it. */
static struct page *sroce_mr_page(struct sroce_mr *mr, u64 iova,
				  unsigned int *poff)
{
	u64 off = iova - mr->iova + mr->offset;

	*poff = off & ~PAGE_MASK;
	return mr->pages[off >> PAGE_SHIFT];
}

/* Bytes that can be accessed at @iova without crossing a page. */
static u32 sroce_mr_chunk(u64 iova, struct sroce_mr *mr, u32 len)
{
	u64 off = iova - mr->iova + mr->offset;

	return min_t(u64, len, PAGE_SIZE - (off & ~PAGE_MASK));
}

/*
 * For a kernel consumer's region: the kernel address of byte @iova, and in
 * *@contig how many of the @len bytes from it are contiguous; NULL when
 * the byte lies beyond the registered buffers.
 *
 * The access was checked against the registration current at lookup, but
 * a fast-registration region may be invalidated and registered again (on
 * another CPU, through another QP) while this reader walks it. The index
 * is then checked against the buffers in use, so a stale reader never
 * reads past the arrays, which both have @max_bufs entries.
 */
static void *sroce_mr_kaddr(struct sroce_mr *mr, u64 iova, u32 len,
			    u32 *contig)
{
	u64 in_buf, idx;
	u32 shift;

	if (mr->kernel_va) {
		*contig = len;
		return (void *)(uintptr_t)iova;
	}
	/* What the registration took: the next map_mr_sg() may change ibmr. */
	shift = READ_ONCE(mr->page_shift);
	if (!sroce_fr_locate(iova, READ_ONCE(mr->iova), READ_ONCE(mr->offset),
			     shift, READ_ONCE(mr->nbufs), &idx, &in_buf))
		return NULL;
	*contig = min_t(u64, len, BIT_ULL(shift) - in_buf);
	return (void *)(uintptr_t)(READ_ONCE(mr->kbufs)[idx] + in_buf);
}

static bool sroce_mr_is_kernel(const struct sroce_mr *mr)
{
	return mr->kernel_va || mr->kbufs;
}

static void sroce_mr_atomic_apply(u64 *p, struct sroce_atomic_op *op)
{
	u64 orig = READ_ONCE(*p);

	op->orig = orig;
	switch (op->opcode) {
	case SROCE_OP_CMP_SWAP:
		if (orig == op->cmp)
			WRITE_ONCE(*p, op->val);
		break;
	case SROCE_OP_FETCH_ADD:
		WRITE_ONCE(*p, orig + op->val);
		break;
	default:
		WRITE_ONCE(*p, op->val);
		break;
	}
}

/* Carry out @x on @n contiguous bytes at kernel address @va. */
static int sroce_mr_xfer_piece(struct sroce_mr_xfer *x, void *va, u32 n)
{
	int err = 0;

	switch (x->op) {
	case SROCE_MR_COPY_TO:
		memcpy(va, x->src, n);
		x->src += n;
		break;
	case SROCE_MR_COPY_FROM:
		*x->crc = sroce_icrc_copy(*x->crc, x->dst, va, n);
		x->dst += n;
		break;
	case SROCE_MR_COPY_SKB:
		if (!x->crc)
			err = skb_copy_bits(x->skb, x->skb_off, va, n);
		else if (x->skb_off < 0 || x->skb_off + n > x->skb->len)
			err = -EFAULT;
		else
			*x->crc = sroce_icrc_copy_skb(*x->crc, va, x->skb,
						      x->skb_off, n);
		x->skb_off += n;
		break;
	case SROCE_MR_ATOMIC:
		/* sroce_mr_get() checked alignment: the 8 bytes are one piece. */
		sroce_mr_atomic_apply(va, x->atomic);
		break;
	case SROCE_MR_ATTACH:
		/* sroce_mr_attach_pages() does these: never a kernel address. */
		err = -EINVAL;
		break;
	}
	return err;
}

/*
 * The page of a kernel consumer's buffer byte at @va, when a packet may
 * hold a reference to it: not slab memory (whose objects are freed with
 * no regard for page references), nor a page without references.
 */
static struct page *sroce_kva_page(const void *va)
{
	struct page *page;

	if (is_vmalloc_addr(va))
		page = vmalloc_to_page(va);
	else if (virt_addr_valid(va))
		page = virt_to_page(va);
	else
		return NULL;
	return page && sendpage_ok(page) ? page : NULL;
}

/*
 * Attach @len bytes from @iova of a region whose pages are mapped to the
 * packet of @x, page by page. A kernel consumer's region may name memory
 * the packet must not reference: the caller then copies.
 */
static int sroce_mr_attach_pages(struct sroce_mr *mr, u64 iova, u32 len,
				 struct sroce_mr_xfer *x)
{
	while (len) {
		struct page *page;
		unsigned int poff;
		void *va;
		u32 n;
		int err;

		if (sroce_mr_is_kernel(mr)) {
			va = sroce_mr_kaddr(mr, iova, len, &n);
			if (!va)
				return -EFAULT;
			page = sroce_kva_page(va);
			if (!page)
				return -EOPNOTSUPP;
			poff = offset_in_page(va);
			n = min_t(u32, n, PAGE_SIZE - poff);
		} else {
			n = sroce_mr_chunk(iova, mr, len);
			page = sroce_mr_page(mr, iova, &poff);
		}
		err = sroce_pkt_add_page(x->pkt, page, poff, n);
		if (err)
			return err;
		iova += n;
		len -= n;
	}
	return 0;
}

/* Walk a range whose pages are mapped, piece by contiguous piece. */
static int sroce_mr_walk_mapped(struct sroce_mr *mr, u64 iova, u32 len,
				struct sroce_mr_xfer *x)
{
	int err = 0;

	while (!err && len) {
		struct page *page;
		unsigned int poff;
		void *va;
		u32 n;

		if (sroce_mr_is_kernel(mr)) {
			va = sroce_mr_kaddr(mr, iova, len, &n);
			if (!va)
				return -EFAULT;
			err = sroce_mr_xfer_piece(x, va, n);
		} else if (mr->odp) {
			va = sroce_odp_addr(mr, iova, len, &n);
			err = sroce_mr_xfer_piece(x, va, n);
		} else {
			n = sroce_mr_chunk(iova, mr, len);
			page = sroce_mr_page(mr, iova, &poff);
			va = kmap_local_page(page);
			err = sroce_mr_xfer_piece(x, va + poff, n);
			kunmap_local(va);
		}
		iova += n;
		len -= n;
	}
	return err;
}

/*
 * Carry out @x on @len bytes from @iova. An on-demand region's pages must
 * be mapped; they stay so until the walk is done.
 */
static int sroce_mr_walk(struct sroce_mr *mr, u64 iova, u32 len,
			 struct sroce_mr_xfer *x, struct sroce_odp_miss *miss)
{
	int err;

	if (x->op == SROCE_MR_ATTACH) {
		/*
		 * An on-demand region's pages are the MMU notifier's to take
		 * away once the lock is dropped: copied, not referenced.
		 */
		if (mr->odp)
			return -EOPNOTSUPP;
		return sroce_mr_attach_pages(mr, iova, len, x);
	}
	if (likely(!mr->odp))
		return sroce_mr_walk_mapped(mr, iova, len, x);
	if (!sroce_odp_lock_range(mr, iova, len, sroce_mr_xfer_writes(x),
				  miss))
		return -EAGAIN;
	err = sroce_mr_walk_mapped(mr, iova, len, x);
	sroce_odp_unlock(mr);
	return err;
}

/**
 * sroce_mr_copy_from() - copy out of a region
 * @mr: the region; the range was checked by sroce_mr_get()
 * @iova: source address
 * @dst: where the bytes go
 * @len: their count
 * @crc: an ICRC continued over the bytes as they are copied: every copy
 *	out of a region goes into a packet
 * @miss: where an on-demand region records pages it needs faulted in
 *
 * Context: any; does not sleep.
 * Return: 0, or -EAGAIN when pages of an on-demand region are not mapped.
 */
int sroce_mr_copy_from(struct sroce_mr *mr, u64 iova, void *dst, u32 len,
		       u32 *crc, struct sroce_odp_miss *miss)
{
	struct sroce_mr_xfer x = {
		.op = SROCE_MR_COPY_FROM,
		.dst = dst,
		.crc = crc,
	};

	return sroce_mr_walk(mr, iova, len, &x, miss);
}

/**
 * sroce_mr_copy_skb() - place packet payload into a region
 * @mr: the region; the range was checked by sroce_mr_get()
 * @iova: destination address
 * @skb: the packet
 * @offset: offset of the payload in @skb's data
 * @len: bytes to copy
 * @crc: NULL, or an ICRC continued over the bytes as they are copied (the
 *	receiver's check of a packet placed before it is known good)
 * @miss: as for sroce_mr_copy_from()
 *
 * Context: any; does not sleep.
 * Return: 0, -EAGAIN as sroce_mr_copy_from(), or another negative errno when
 * @skb is shorter than claimed.
 */
int sroce_mr_copy_skb(struct sroce_mr *mr, u64 iova, struct sk_buff *skb,
		      int offset, u32 len, u32 *crc, struct sroce_odp_miss *miss)
{
	struct sroce_mr_xfer x = {
		.op = SROCE_MR_COPY_SKB,
		.skb = skb,
		.skb_off = offset,
		.crc = crc,
	};

	return sroce_mr_walk(mr, iova, len, &x, miss);
}

/**
 * sroce_mr_atomic() - carry out an atomic operation on 8 bytes of a region
 * @mr: the region; the range was checked by sroce_mr_get(), and the address
 *	is 8-byte aligned in the region's pages
 * @iova: the address
 * @op: the operation; its @orig is set
 * @miss: as for sroce_mr_copy_from()
 *
 * Context: any; does not sleep. The caller serializes atomic operations.
 * Return: as sroce_mr_copy_from().
 */
int sroce_mr_atomic(struct sroce_mr *mr, u64 iova, struct sroce_atomic_op *op,
		    struct sroce_odp_miss *miss)
{
	struct sroce_mr_xfer x = { .op = SROCE_MR_ATOMIC, .atomic = op };

	return sroce_mr_walk(mr, iova, sizeof(u64), &x, miss);
}

/**
 * sroce_sge_walk() - carry out a transfer over the next bytes of an SGE list
 * @cur: where in the list the bytes start; advanced past them
 * @x: what to do with each contiguous piece of registered memory: its
 *	buffer or packet offset advances with the bytes done
 * @len: bytes
 *
 * Each entry's key is looked up and checked for the range the walk takes
 * from it: local write rights when @x writes into the memory. The bytes of
 * entries before one that fails are done: doing them again when the
 * transfer is retried is harmless.
 *
 * Context: any; does not sleep.
 * Return: 0; -EACCES for a key that is unknown, of another PD, lacks the
 * rights or does not cover the range; -EMSGSIZE when the list ends first;
 * -EAGAIN when pages of an on-demand region are not mapped (recorded in
 * @cur->miss); or, for a packet, a negative errno when it is shorter than
 * claimed.
 */
int sroce_sge_walk(struct sroce_sge_cursor *cur, struct sroce_mr_xfer *x,
		   u32 len)
{
	int access = sroce_mr_xfer_writes(x) ? IB_ACCESS_LOCAL_WRITE : 0;

	while (len) {
		const struct ib_sge *sge = cur->sge;
		struct sroce_mr *mr;
		u64 addr;
		u32 n;
		int err;

		if (sge == cur->end)
			return -EMSGSIZE;
		if (cur->offset >= sge->length) {
			cur->offset -= sge->length;
			cur->sge++;
			continue;
		}
		n = min(len, sge->length - cur->offset);
		addr = sge->addr + cur->offset;
		mr = sroce_mr_get(cur->sdev, sge->lkey, cur->pd, access, addr, n,
				  NULL);
		if (!mr)
			return -EACCES;
		err = sroce_mr_walk(mr, addr, n, x, cur->miss);
		sroce_mr_put(mr);
		if (err)
			return err;
		cur->offset += n;
		len -= n;
	}
	return 0;
}

/**
 * sroce_sge_scatter_skb() - place packet payload into a scatter list
 * @sdev: the device
 * @pd: the PD the scatter list belongs to
 * @sge: the scatter list
 * @num_sge: its length
 * @offset: message offset of the first byte
 * @skb: the packet
 * @skb_off: offset of the payload in @skb's data
 * @len: bytes to place
 * @crc: as for sroce_mr_copy_skb()
 * @miss: as for sroce_mr_copy_from()
 *
 * Return: as sroce_sge_walk().
 */
int sroce_sge_scatter_skb(struct sroce_dev *sdev, struct ib_pd *pd,
			  const struct ib_sge *sge, u32 num_sge, u32 offset,
			  struct sk_buff *skb, int skb_off, u32 len, u32 *crc,
			  struct sroce_odp_miss *miss)
{
	struct sroce_sge_cursor cur;
	struct sroce_mr_xfer x = {
		.op = SROCE_MR_COPY_SKB,
		.skb = skb,
		.skb_off = skb_off,
		.crc = crc,
	};

	sroce_sge_cursor_init(&cur, sdev, pd, sge, num_sge, offset, miss);
	return sroce_sge_walk(&cur, &x, len);
}

/**
 * sroce_sge_scatter() - place bytes into a scatter list
 * @sdev: the device
 * @pd: the PD the scatter list belongs to
 * @sge: the scatter list
 * @num_sge: its length
 * @offset: message offset of the first byte
 * @src: the bytes
 * @len: their count
 * @miss: as for sroce_mr_copy_from()
 *
 * Return: as sroce_sge_walk().
 */
int sroce_sge_scatter(struct sroce_dev *sdev, struct ib_pd *pd,
		      const struct ib_sge *sge, u32 num_sge, u32 offset,
		      const void *src, u32 len, struct sroce_odp_miss *miss)
{
	struct sroce_sge_cursor cur;
	struct sroce_mr_xfer x = { .op = SROCE_MR_COPY_TO, .src = src };

	sroce_sge_cursor_init(&cur, sdev, pd, sge, num_sge, offset, miss);
	return sroce_sge_walk(&cur, &x, len);
}

/**
 * sroce_sge_gather() - copy bytes out of a gather list
 * @sdev: the device
 * @pd: the PD the gather list belongs to
 * @sge: the gather list
 * @num_sge: its length
 * @offset: message offset of the first byte
 * @dst: where the bytes go
 * @len: their count
 * @crc: as for sroce_mr_copy_from()
 * @miss: as for sroce_mr_copy_from()
 *
 * Return: as sroce_sge_walk().
 */
int sroce_sge_gather(struct sroce_dev *sdev, struct ib_pd *pd,
		     const struct ib_sge *sge, u32 num_sge, u32 offset,
		     void *dst, u32 len, u32 *crc, struct sroce_odp_miss *miss)
{
	struct sroce_sge_cursor cur;
	struct sroce_mr_xfer x = {
		.op = SROCE_MR_COPY_FROM,
		.dst = dst,
		.crc = crc,
	};

	sroce_sge_cursor_init(&cur, sdev, pd, sge, num_sge, offset, miss);
	return sroce_sge_walk(&cur, &x, len);
}

/**
 * sroce_mr_attach() - attach bytes of a region to a packet as its payload
 * @mr: the region; the range was checked by sroce_mr_get()
 * @iova: first byte
 * @pkt: a packet from sroce_pkt_alloc_frags()
 * @len: bytes
 *
 * Each page gets a reference of the packet's, so the packet may outlive
 * the region.
 *
 * Context: any; does not sleep.
 * Return: 0, or a negative errno: the packet then holds part of the bytes
 * and the caller frees it and copies them instead (an on-demand region,
 * memory the packet may not reference, no fragment left).
 */
int sroce_mr_attach(struct sroce_mr *mr, u64 iova, struct sroce_pkt *pkt,
		    u32 len)
{
	struct sroce_mr_xfer x = { .op = SROCE_MR_ATTACH, .pkt = pkt };

	return sroce_mr_walk(mr, iova, len, &x, NULL);
}

/**
 * sroce_sge_attach() - attach bytes of a gather list to a packet
 * @sdev: the device
 * @pd: the PD the gather list belongs to
 * @sge: the gather list
 * @num_sge: its length
 * @offset: message offset of the first byte
 * @pkt: a packet from sroce_pkt_alloc_frags()
 * @len: bytes
 *
 * Return: as sroce_sge_walk(), and as sroce_mr_attach() for bytes that
 * must be copied instead.
 */
int sroce_sge_attach(struct sroce_dev *sdev, struct ib_pd *pd,
		     const struct ib_sge *sge, u32 num_sge, u32 offset,
		     struct sroce_pkt *pkt, u32 len)
{
	struct sroce_sge_cursor cur;
	struct sroce_mr_xfer x = { .op = SROCE_MR_ATTACH, .pkt = pkt };

	sroce_sge_cursor_init(&cur, sdev, pd, sge, num_sge, offset, NULL);
	return sroce_sge_walk(&cur, &x, len);
}
