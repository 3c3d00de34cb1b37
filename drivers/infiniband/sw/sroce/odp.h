/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * On-demand paging regions (odp.c): pages that are mapped when the data
 * path first touches them, and unmapped by the MMU notifier.
 */
#ifndef _SROCE_ODP_H
#define _SROCE_ODP_H

#include <linux/compiler.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>

#include "mr.h"

/**
 * struct sroce_odp_miss - a range of an on-demand region to fault in
 * @mr: the region, with a reference held; NULL when nothing is missing
 * @iova: first byte
 * @len: bytes
 * @write: the access writes
 */
struct sroce_odp_miss {
	struct sroce_mr		*mr;
	u64			iova;
	u32			len;
	bool			write;
};

int sroce_odp_reg(struct sroce_mr *mr, struct ib_device *dev, u64 start,
		  u64 length, int access);
int sroce_odp_reg_implicit(struct sroce_mr *mr, struct ib_device *dev,
			   int access);
void sroce_odp_release(struct sroce_mr *mr);
unsigned long sroce_odp_chunks(struct sroce_mr *mr);
bool _sroce_odp_lock_range(struct sroce_mr *mr, u64 iova, u32 len, bool write,
			   struct sroce_odp_miss *miss);
#define sroce_odp_lock_range(mr, iova, len, write, miss)		\
	({								\
		struct sroce_mr *__mr = (mr);				\
									\
		__cond_lock(&__mr->odp_lock,				\
			    _sroce_odp_lock_range(__mr, iova, len,	\
						  write, miss));	\
	})
void sroce_odp_unlock(struct sroce_mr *mr) __releases(&mr->odp_lock);
void *sroce_odp_addr(struct sroce_mr *mr, u64 iova, u32 len, u32 *contig);
int sroce_odp_fault(struct sroce_odp_miss *miss);
void sroce_odp_miss_clear(struct sroce_odp_miss *miss);

#endif /* _SROCE_ODP_H */
