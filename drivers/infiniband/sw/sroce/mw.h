/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Memory windows (mw.c): remote access to part of a region, through keys
 * that are bound and invalidated by work requests.
 */
#ifndef _SROCE_MW_H
#define _SROCE_MW_H

#include <linux/spinlock.h>
#include <rdma/ib_verbs.h>

struct sroce_mr;
struct sroce_qp;

/* The tag of memory window entries in the device's key table. */
#define SROCE_KEY_MW		1

enum sroce_mw_state {
	SROCE_MW_FREE,
	SROCE_MW_VALID,
	SROCE_MW_DEAD,		/* deallocated: a bind racing with it fails */
};

/**
 * struct sroce_mw - a memory window
 * @ibmw: the RDMA core's window; ibmw.rkey is its current key
 * @lock: protects the fields below and the key's low byte
 * @index: position in the device's key table, the key's upper 24 bits
 * @state: enum sroce_mw_state
 * @mr: the region it is bound to, with a reference
 * @addr: first byte of the window, in the region's address space
 * @length: bytes in the window
 * @access: remote rights through it, with IB_ZERO_BASED when its peers
 *	address it from 0 rather than from @addr
 * @qpn: for a type 2 window, the QP it is bound to
 */
struct sroce_mw {
	struct ib_mw		ibmw;
	spinlock_t		lock;	/* see above */
	u32			index;
	u8			state;
	struct sroce_mr		*mr;
	u64			addr;
	u64			length;
	int			access;
	u32			qpn;
};

static inline struct sroce_mw *to_smw(struct ib_mw *ibmw)
{
	return container_of(ibmw, struct sroce_mw, ibmw);
}

int sroce_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata);
int sroce_dealloc_mw(struct ib_mw *ibmw);
int sroce_mw_bind(struct sroce_qp *qp, u32 mw_rkey, u32 new_rkey, u32 mr_lkey,
		  u64 addr, u64 len, int access);
struct sroce_mr *sroce_mw_get_mr(struct sroce_mw *mw, u32 rkey,
				 const struct sroce_qp *qp, int access,
				 u64 iova, u64 len, u64 *mr_iova);
int sroce_mw_invalidate(struct sroce_mw *mw, u32 rkey, struct ib_pd *pd,
			const struct sroce_qp *remote_qp);

#endif /* _SROCE_MW_H */
