/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The device's capabilities, in one place so that queries and checks agree.
 */
#ifndef _SROCE_LIMITS_H
#define _SROCE_LIMITS_H

#define SROCE_MAX_QP		0x10000
#define SROCE_MAX_QP_WR		0x4000
#define SROCE_MAX_SGE		32
#define SROCE_MAX_CQ		0x10000
/*
 * libfabric's rxm gives all connections of an RDM endpoint one CQ of
 * (send + receive queue depth) * universe size entries, 65536 by default,
 * and its verbs provider does not shrink a request to max_cqe. CQ slots
 * are 64 bytes, so one CQ's ring stays within 64 MiB of vmalloc.
 */
#define SROCE_MAX_CQE		0xfffff
#define SROCE_MAX_MR		0x40000
#define SROCE_MAX_PD		0x10000
#define SROCE_MAX_RD_ATOMIC	128
#define SROCE_MAX_INLINE	512
#define SROCE_MAX_AH		0x10000
#define SROCE_MAX_SRQ		0x10000
#define SROCE_MAX_FR_PAGES	0x40000	/* pages per fast-registration MR */
#define SROCE_MAX_MCAST_GRP	1024
#define SROCE_MAX_MCAST_QP_ATTACH	64
#define SROCE_MAX_SRQ_WR	0x4000
#define SROCE_MAX_MSG_SIZE	0x80000000U

#endif /* _SROCE_LIMITS_H */
