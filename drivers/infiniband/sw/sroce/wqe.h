/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Work queue entries: the layout of the WQEs in the rings shared with user
 * space, and the kernel's private, validated copies of them.
 */
#ifndef _SROCE_WQE_H
#define _SROCE_WQE_H

#include <linux/build_bug.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_user_rxe.h>
#include <sroce/transport.h>

#include "ah.h"
#include "limits.h"

struct sroce_ah;

/* Send and receive WQE sizes in the rings: fixed part, then SGEs/inline. */
#define SROCE_SEND_WQE_HDR	sizeof(struct rxe_send_wqe)
#define SROCE_RECV_WQE_HDR	sizeof(struct rxe_recv_wqe)

/* User ABI values newer than some supported kernels' headers. */
#define SROCE_WC_FLUSH		8	/* IB_UVERBS_WC_FLUSH */
#define SROCE_WC_ATOMIC_WRITE	9	/* IB_UVERBS_WC_ATOMIC_WRITE */
#define SROCE_ATOMIC_WRITE_LEN	8

/**
 * struct sroce_flush_wr - the FLUSH variant of union wr in struct
 * rxe_send_wr, which only 6.2+ headers declare (the layout is the same)
 * @remote_addr: start of the range (selectivity level RANGE)
 * @length: bytes of the range
 * @rkey: the region or window
 * @type: SROCE_FLUSH_GLOBAL and/or SROCE_FLUSH_PERSISTENT
 * @level: SROCE_FLUSH_RANGE or SROCE_FLUSH_MR
 */
struct sroce_flush_wr {
	__aligned_u64	remote_addr;
	__u32		length;
	__u32		rkey;
	__u8		type;
	__u8		level;
};

/* Where a send WQE is in its life. */
enum sroce_swqe_state {
	SROCE_SWQE_NEW,		/* not yet looked at */
	SROCE_SWQE_SENDING,	/* packets left to send */
	SROCE_SWQE_PENDING,	/* all sent, waiting for the ACK or response */
	SROCE_SWQE_DONE,	/* completed, waiting to be retired in order */
};

/**
 * struct sroce_swqe - the kernel's private copy of a send WQE
 * @wr: the user's WQE header, copied out of the ring and validated
 * @sge: the gather list, copied with it
 * @inline_buf: or the inline data
 * @state: enum sroce_swqe_state
 * @status: the completion status (enum ib_wc_status)
 * @inline_data: @sge holds inline bytes, not SGEs
 * @psn_valid: @first_psn and @last_psn are assigned
 * @num_sge: validated SGE count
 * @length: the message length, computed from the SGEs
 * @first_psn: PSN of the first packet
 * @last_psn: PSN of the last packet (READ: of the last response)
 * @sent: bytes sent so far (READ: bytes received so far)
 * @av: for UD, the address of the AH the WQE named, copied when it was
 *	fetched; its GID reference is held until the WQE is retired
 * @kah: for UD WQEs of a kernel QP, the AH the work request named, with a
 *	reference, from post_send until the WQE is fetched
 * @atomic_orig: the value an atomic operation returned
 * @injected: @status was injected (finj.c); the QP goes on after it
 */
struct sroce_swqe {
	struct rxe_send_wr	wr;
	union {
		struct ib_sge	sge[SROCE_MAX_SGE];
		u8		inline_buf[SROCE_MAX_INLINE];
	};
	u8			state;
	u8			status;
	bool			inline_data;
	bool			psn_valid;
	u8			num_sge;
	u32			length;
	u32			first_psn;
	u32			last_psn;
	u32			sent;
	struct sroce_av		av;
	struct sroce_ah		*kah;
	u64			atomic_orig;
	bool			injected;
};

/*
 * Requests the responder answers with data, READ responses (a FLUSH: one
 * without data) or an atomic ACK: each takes one of the READ/atomic slots.
 */
static inline bool sroce_swqe_is_rd_atomic(const struct sroce_swqe *wqe)
{
	switch (wqe->wr.opcode) {
	case IB_UVERBS_WR_RDMA_READ:
	case IB_UVERBS_WR_ATOMIC_CMP_AND_SWP:
	case IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD:
	case SROCE_WR_FLUSH:
		return true;
	default:
		return false;
	}
}

/* The FLUSH fields of a send WQE with opcode SROCE_WR_FLUSH. */
static inline const struct sroce_flush_wr *
sroce_swqe_flush(const struct sroce_swqe *wqe)
{
	BUILD_BUG_ON(sizeof(struct sroce_flush_wr) > sizeof(wqe->wr.wr));
	return (const struct sroce_flush_wr *)&wqe->wr.wr;
}

/**
 * struct sroce_rwqe - the kernel's private copy of a receive WQE
 * @wr_id: the consumer's cookie
 * @num_sge: validated SGE count
 * @length: bytes the SGEs can take
 * @sge: the scatter list
 */
struct sroce_rwqe {
	u64			wr_id;
	u32			num_sge;
	u32			length;
	struct ib_sge		sge[SROCE_MAX_SGE];
};

int sroce_rwqe_copy(const struct rxe_recv_wqe *uwqe, u32 max_sge,
		    struct sroce_rwqe *rwqe);

#endif /* _SROCE_WQE_H */
