/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The verbs objects (PD, CQ, MR, AH, QP) and the interfaces between the
 * files that implement them: cq.c, mr.c, ah.c, qp.c, and the transport in
 * req.c (requester), resp.c (responder), comp.c (completer) and xmit.c.
 */
#ifndef _SROCE_OBJECTS_H
#define _SROCE_OBJECTS_H

#include <linux/completion.h>
#include <linux/ktime.h>
#include <linux/refcount.h>
#include <linux/skbuff.h>
#include <linux/spinlock.h>
#include <linux/timer.h>
#include <linux/udp.h>
#include <net/dst_cache.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_user_rxe.h>

#include <sroce/rto.h>
#include <sroce/wire.h>
#include "queue.h"
#include "sroce.h"

/* Capabilities, in one place so that queries and checks agree. */
#define SROCE_MAX_QP		0x10000
#define SROCE_MAX_QP_WR		0x4000
#define SROCE_MAX_SGE		32
#define SROCE_MAX_CQ		0x10000
#define SROCE_MAX_CQE		0x7fff
#define SROCE_MAX_MR		0x40000
#define SROCE_MAX_PD		0x10000
#define SROCE_MAX_RD_ATOMIC	128
#define SROCE_MAX_INLINE	512
#define SROCE_MAX_AH		0x10000
#define SROCE_MAX_SRQ		0x10000
#define SROCE_MAX_FR_PAGES	0x40000	/* pages per fast-registration MR */
#define SROCE_MAX_MCAST_GRP	1024
#define SROCE_MAX_MCAST_QP_ATTACH	64
#define SROCE_MCAST_QPN		0xffffff
#define SROCE_MAX_SRQ_WR	0x4000
#define SROCE_MAX_MSG_SIZE	0x80000000U

/*
 * Unacknowledged request PSNs an RC QP may have outstanding: at most
 * SROCE_WINDOW_MAX, and after a loss, from SROCE_WINDOW_MIN up again as
 * ACKs arrive, so that a go-back does not flood a congested path.
 */
#define SROCE_WINDOW_MAX	256
#define SROCE_WINDOW_MIN	16

/* Send and receive WQE sizes in the rings: fixed part, then SGEs/inline. */
#define SROCE_SEND_WQE_HDR	sizeof(struct rxe_send_wqe)
#define SROCE_RECV_WQE_HDR	sizeof(struct rxe_recv_wqe)

/* User ABI values newer than some supported kernels' headers. */
#define SROCE_WR_FLUSH		14	/* IB_UVERBS_WR_FLUSH */
#define SROCE_WR_ATOMIC_WRITE	15	/* IB_UVERBS_WR_ATOMIC_WRITE */
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

/* A length for sroce_mr_get(): the whole region or window, any address. */
#define SROCE_LEN_WHOLE		U64_MAX

/**
 * struct sroce_ucontext - a process's context on a device
 * @ibuc: the RDMA core's context
 */
struct sroce_ucontext {
	struct ib_ucontext	ibuc;
};

/**
 * struct sroce_pd - a protection domain
 * @ibpd: the RDMA core's PD
 */
struct sroce_pd {
	struct ib_pd		ibpd;
};

static inline struct sroce_pd *to_spd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct sroce_pd, ibpd);
}

/**
 * struct sroce_cq - a completion queue
 * @ibcq: the RDMA core's CQ
 * @lock: serializes producers; protects @q's kernel side, @prod and @armed
 * @q: the ring of struct ib_uverbs_wc entries
 * @prod: private producer index
 * @armed: IB_CQ_NEXT_COMP or IB_CQ_SOLICITED when a notification is wanted
 * @is_user: the ring is mapped by a process
 * @overflows: CQEs dropped because the ring was full
 * @overrun: the consumer has been told of an overflow (IB_EVENT_CQ_ERR);
 *	it is told once, however many completions are dropped afterwards
 */
struct sroce_cq {
	struct ib_cq		ibcq;
	spinlock_t		lock;	/* see above */
	struct sroce_queue	q;
	u32			prod;
	u8			armed;
	bool			is_user;
	bool			overrun;
	u64			overflows;
};

static inline struct sroce_cq *to_scq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct sroce_cq, ibcq);
}

int sroce_cq_post(struct sroce_cq *cq, const struct ib_uverbs_wc *wc,
		  bool solicited, u8 net_type);

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
 * @kbufs: a fast-registration region's buffers: the kernel addresses of
 *	its pages of ibmr.page_size bytes, set by map_mr_sg
 * @nbufs: entries of @kbufs in use
 * @max_bufs: entries @kbufs has room for
 * @map_fbo: offset of the first mapped byte in the first buffer
 * @bound_mws: memory windows bound to the region; it cannot be
 *	deregistered while there are any
 * @odp: @umem is an on-demand paging umem, not pinned (odp.c)
 * @odp_lock: held for reading while the data path uses pages of an @odp
 *	region, for writing while the MMU notifier unmaps them
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
	u32			max_bufs;
	u32			map_fbo;
	atomic_t		bound_mws;
	bool			odp;
	rwlock_t		odp_lock;	/* see above */
};

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

/* The tag of memory window entries in the device's key table. */
#define SROCE_KEY_MW		1

enum sroce_mw_state {
	SROCE_MW_FREE,
	SROCE_MW_VALID,
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
 * @access: remote rights through it
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

struct sroce_qp;
int sroce_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata);
int sroce_dealloc_mw(struct ib_mw *ibmw);
int sroce_mw_bind(struct sroce_qp *qp, u32 mw_rkey, u32 new_rkey, u32 mr_lkey,
		  u64 addr, u64 len, int access);
struct sroce_mr *sroce_mw_get_mr(struct sroce_mw *mw, u32 rkey,
				 const struct sroce_qp *qp, int access,
				 u64 iova, u64 len);
int sroce_mw_invalidate(struct sroce_mw *mw, u32 rkey, struct ib_pd *pd);

static inline struct sroce_mr *to_smr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct sroce_mr, ibmr);
}

struct sroce_mr *sroce_mr_get(struct sroce_dev *sdev, u32 key,
			      struct ib_pd *pd, int access, u64 iova, u64 len,
			      const struct sroce_qp *remote_qp);
void sroce_mr_put(struct sroce_mr *mr);
int sroce_mr_invalidate(struct sroce_dev *sdev, u32 key, struct ib_pd *pd);
int sroce_mr_copy_to(struct sroce_mr *mr, u64 iova, const void *src, u32 len,
		     struct sroce_odp_miss *miss);
int sroce_mr_copy_from(struct sroce_mr *mr, u64 iova, void *dst, u32 len,
		       struct sroce_odp_miss *miss);
int sroce_mr_copy_skb(struct sroce_mr *mr, u64 iova, const struct sk_buff *skb,
		      int offset, u32 len, struct sroce_odp_miss *miss);
int sroce_sge_scatter_skb(struct sroce_dev *sdev, struct ib_pd *pd,
			  const struct ib_sge *sge, u32 num_sge, u32 offset,
			  const struct sk_buff *skb, int skb_off, u32 len,
			  struct sroce_odp_miss *miss);
int sroce_sge_scatter(struct sroce_dev *sdev, struct ib_pd *pd,
		      const struct ib_sge *sge, u32 num_sge, u32 offset,
		      const void *src, u32 len, struct sroce_odp_miss *miss);

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

/**
 * struct sroce_av - where a QP or AH sends packets
 * @sgid_attr: the source GID entry; a reference is held
 * @saddr: source IP address (IPv4-mapped for IPv4)
 * @daddr: destination IP address (IPv4-mapped for IPv4)
 * @ipv6: the path is IPv6
 * @hop_limit: IPv4 TTL or IPv6 hop limit
 * @tclass: IPv4 TOS or IPv6 traffic class
 * @flow_label: IPv6 flow label
 */
struct sroce_av {
	const struct ib_gid_attr *sgid_attr;
	struct in6_addr		saddr;
	struct in6_addr		daddr;
	bool			ipv6;
	u8			hop_limit;
	u8			tclass;
	u32			flow_label;
};

int sroce_av_from_attr(struct sroce_av *av, const struct rdma_ah_attr *attr);
void sroce_av_release(struct sroce_av *av);

/**
 * struct sroce_ah - an address handle
 * @ibah: the RDMA core's AH
 * @av: the address
 * @ah_num: the handle's number in user send WQEs, never zero
 * @ref: users in flight, plus one for the table
 * @released: completed when @ref reaches zero
 */
struct sroce_ah {
	struct ib_ah		ibah;
	struct sroce_av		av;
	u32			ah_num;
	refcount_t		ref;
	struct completion	released;
};

static inline struct sroce_ah *to_sah(struct ib_ah *ibah)
{
	return container_of(ibah, struct sroce_ah, ibah);
}

struct sroce_ah *sroce_ah_get(struct sroce_dev *sdev, u32 ah_num);
void sroce_ah_put(struct sroce_ah *ah);

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
 * @ah: for UD, the address handle; a reference is held
 * @kah: for UD WQEs of a kernel QP, the AH the work request named, with a
 *	reference, from post_send until the WQE is fetched
 * @atomic_orig: the value an atomic operation returned
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
	struct sroce_ah		*ah;
	struct sroce_ah		*kah;
	u64			atomic_orig;
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

/**
 * struct sroce_srq - a shared receive queue
 * @ibsrq: the RDMA core's SRQ
 * @lock: protects @q (replaced on resize), @tail and @limit; taken by the
 *	responders of every QP using the SRQ, in softirq context
 * @q: the ring of struct rxe_recv_wqe
 * @tail: private consumer index of @q
 * @max_sge: SGEs per WQE the ring's slots hold
 * @limit: the armed SRQ limit, 0 when disarmed
 * @srq_num: the SRQ's number, from the device's srq_ida
 * @is_user: the ring is mapped by a process, which posts into it
 * @kpost_lock: serializes kernel consumers posting into the ring
 */
struct sroce_srq {
	struct ib_srq		ibsrq;
	spinlock_t		lock;	/* see above */
	struct sroce_queue	q;
	u32			tail;
	u32			max_sge;
	u32			limit;
	u32			srq_num;
	bool			is_user;
	spinlock_t		kpost_lock;	/* see above */
};

static inline struct sroce_srq *to_ssrq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct sroce_srq, ibsrq);
}

int sroce_srq_fetch(struct sroce_srq *srq, struct sroce_rwqe *rwqe);
int sroce_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr);

/**
 * struct sroce_rd_res - a responder resource: a READ or atomic in progress
 * @psn: PSN of the request (READ: of the first response)
 * @last_psn: PSN of the last response
 * @is_atomic: an atomic (replay cache) rather than a READ
 * @atomic_orig: the value returned for an atomic
 * @mr: READ: the region read from; a reference is held
 * @va: READ: the address of the next byte to send
 * @resid: READ: bytes left to send
 * @next_psn: READ: PSN of the next response
 * @length: READ: the whole request's length
 */
struct sroce_rd_res {
	u32			psn;
	u32			last_psn;
	bool			is_atomic;
	u64			atomic_orig;
	struct sroce_mr		*mr;
	u64			va;
	u32			resid;
	u32			next_psn;
	u32			length;
};

/**
 * struct sroce_qp - a queue pair
 * @ibqp: the RDMA core's QP
 * @sdev: the device
 * @ref: lookups and timers in flight, plus one for the table
 * @released: completed when @ref reaches zero
 * @state: the IB state; written under both @sq_lock and @rq_lock
 * @type: IB_QPT_RC, IB_QPT_UC or IB_QPT_UD (the GSI QP is a UD QP)
 * @is_user: the rings are mapped by a process
 * @kpost_lock: serializes a kernel consumer's posts into the rings, which
 *	it may do from any context
 * @sig_all: every send WQE completes
 * @pd: the protection domain
 * @scq: send CQ
 * @rcq: receive CQ
 * @attr_lock: serializes modify_qp, query_qp and destroy
 * @qkey: UD Q_Key
 * @access_flags: remote operations the responder allows (IB_ACCESS_REMOTE_*)
 * @dest_qpn: RC/UC remote QP number
 * @mtu: path MTU in bytes
 * @av: RC/UC path; set on RTR
 * @src_port: UDP source port, chosen per QP for ECMP entropy
 * @dst_cache: route cache for @av
 * @timeout: local ACK timeout, IB encoding
 * @retry_cnt: transport retries allowed
 * @rnr_retry: RNR retries allowed (7: forever)
 * @min_rnr_timer: the RNR NAK timer value sent to the peer
 * @max_rd_atomic: outstanding READ/atomic requests allowed to send
 * @max_dest_rd_atomic: responder resources for the peer's READs/atomics
 * @sq: the send ring
 * @swqe: private copies of the send WQEs, one per ring slot
 * @max_send_sge: SGEs per send WQE
 * @max_inline: inline bytes per send WQE
 * @sq_lock: protects the requester and completer state below
 * @sq_tail: oldest WQE not retired, the ring's consumer index
 * @sq_next: next WQE the requester starts or continues
 * @sq_seen: WQEs before this index have been copied from the ring
 * @req_psn: PSN of the next request packet
 * @sent_psn: the PSN after the highest ever sent; @req_psn is behind it
 *	after a go-back
 * @una_psn: oldest unacknowledged PSN
 * @cwnd: the current window, see SROCE_WINDOW_MAX
 * @rd_atomic_out: READ/atomic requests outstanding
 * @retries: transport retries left
 * @backoff: retransmission timeouts in a row without progress
 * @rto_deferred: timer expiries in a row put off by sroce_rto_defer()
 * @rtt_timing: a round trip is being timed, that of @rtt_psn
 * @rtt_psn: the request PSN being timed, sent once only
 * @rtt_start: when it was sent
 * @rtt: the round-trip estimate, see rto.c
 * @rnr_retries: RNR retries left
 * @retrans_timer: local ACK timeout
 * @rnr_timer: RNR back-off
 * @rnr_wait: sending is paused by an RNR NAK
 * @sq_fatal: a WQE failed; the QP moves to the error state from process
 *	context
 * @read_rewound: a READ or atomic response was found missing and the
 *	request re-issued; later responses (sent before the responder saw the
 *	re-request) are ignored instead of re-issuing it again, until progress
 * @req_miss: pages of an on-demand region the requester or completer
 *	found unmapped; @req_work faults them in
 * @req_miss_rewind: a response was dropped for want of pages: ask again
 *	once @req_miss is mapped
 * @req_miss_skb: when @req_miss is a response's, the response, handled
 *	again once the pages are mapped; its WQE fails if the fault fails
 * @req_miss_psn: the PSN of @req_miss_skb
 * @req_nofault: the last fault failed: a missing page is an access error
 * @pkts_since_ackreq: packets sent since the last with AckReq
 * @srq: the shared receive queue the QP takes receive WQEs from, or NULL
 * @rq: the receive ring (none with an SRQ)
 * @max_recv_sge: SGEs per receive WQE
 * @rq_lock: protects the responder state below
 * @rq_tail: private consumer index of @rq
 * @epsn: expected PSN of the next request
 * @msn: message sequence number
 * @rwqe: the receive WQE being filled
 * @rwqe_valid: @rwqe holds a WQE
 * @recv_offset: bytes placed into @rwqe so far
 * @resp_in: the kind of multi-packet message in progress (SROCE_OPF_SEND,
 *	SROCE_OPF_WRITE or 0)
 * @nak_sent: a sequence error NAK was sent for @epsn
 * @resp_busy: READ responses are being sent from @resp_work; requests wait
 *	in @resp_backlog meanwhile, to keep responses in PSN order
 * @resp_congested: the transmit queue refused a READ response; the work
 *	item pauses before going on
 * @resp_fatal: the responder failed; the QP moves to the error state from
 *	@resp_work
 * @resp_backlog: requests received while @resp_busy
 * @resp_miss: pages of an on-demand region a request found unmapped; the
 *	request waits at the head of @resp_backlog, with @resp_busy set,
 *	while @resp_work faults them in
 * @resp_nofault: the last fault failed: a missing page is an access error
 * @active_res: the READ whose responses @resp_work sends
 * @write_mr: the region an RDMA WRITE in progress targets; a reference
 * @write_va: where the next WRITE payload goes
 * @write_resid: WRITE bytes still expected
 * @write_len: the WRITE's whole length
 * @rd_res: responder resources (@max_dest_rd_atomic of them)
 * @rd_res_head: next resource to use
 * @resp_work: continues READ responses beyond the softirq budget
 * @req_work: restarts the requester from a timer or a received ACK
 * @tx_inflight: packets of this QP handed to the IP layer and not yet freed
 *	(sent by the NIC, or dropped)
 * @tx_waiters: SROCE_TXW_* bits: who waits for @tx_inflight, or the
 *	device's, to go down
 * @tx_wait_entry: entry in the device's list of QPs waiting to send; empty
 *	when not on it
 * @tx_wait_closed: the QP is being destroyed and may not join that list
 *	again; under the device's tx_wait_lock
 * @resp_throttled: @resp_work waits for @tx_inflight to go down
 * @counters: per-QP error counts for diagnostics
 */
struct sroce_qp {
	struct ib_qp		ibqp;
	struct sroce_dev	*sdev;
	refcount_t		ref;
	struct completion	released;
	enum ib_qp_state	state;
	enum ib_qp_type		type;
	bool			is_user;
	bool			sig_all;
	spinlock_t		kpost_lock;	/* see above */
	struct sroce_pd		*pd;
	struct sroce_cq		*scq;
	struct sroce_cq		*rcq;

	struct mutex		attr_lock;	/* see above */
	u32			qkey;
	int			access_flags;
	u32			dest_qpn;
	u32			mtu;
	struct sroce_av		av;
	u16			src_port;
	struct dst_cache	dst_cache;
	u8			timeout;
	u8			retry_cnt;
	u8			rnr_retry;
	u8			min_rnr_timer;
	u8			max_rd_atomic;
	u8			max_dest_rd_atomic;

	struct sroce_queue	sq;
	struct sroce_swqe	*swqe;
	u32			max_send_sge;
	u32			max_inline;
	spinlock_t		sq_lock;	/* see above */
	u32			sq_tail;
	u32			sq_next;
	u32			sq_seen;
	u32			req_psn;
	u32			sent_psn;
	u32			una_psn;
	u32			cwnd;
	u32			rd_atomic_out;
	u8			retries;
	u8			rnr_retries;
	u8			backoff;
	u8			rto_deferred;
	bool			rtt_timing;
	u32			rtt_psn;
	ktime_t			rtt_start;
	struct sroce_rtt	rtt;
	struct timer_list	retrans_timer;
	struct timer_list	rnr_timer;
	bool			rnr_wait;
	bool			sq_fatal;
	bool			read_rewound;
	struct sroce_odp_miss	req_miss;
	bool			req_miss_rewind;
	u32			req_miss_psn;
	struct sk_buff		*req_miss_skb;
	bool			req_nofault;
	u32			pkts_since_ackreq;

	struct sroce_srq	*srq;
	struct sroce_queue	rq;
	u32			max_recv_sge;
	spinlock_t		rq_lock;	/* see above */
	u32			rq_tail;
	u32			epsn;
	u32			msn;
	struct sroce_rwqe	rwqe;
	bool			rwqe_valid;
	u32			recv_offset;
	u32			resp_in;
	bool			nak_sent;
	bool			resp_busy;
	bool			resp_congested;
	bool			resp_fatal;
	struct sk_buff_head	resp_backlog;
	struct sroce_odp_miss	resp_miss;
	bool			resp_nofault;
	struct sroce_rd_res	*active_res;
	struct sroce_mr		*write_mr;
	u64			write_va;
	u32			write_resid;
	u32			write_len;
	struct sroce_rd_res	*rd_res;
	u32			rd_res_head;

	struct work_struct	resp_work;
	struct work_struct	req_work;
	atomic_t		tx_inflight;
	unsigned long		tx_waiters;
	struct list_head	tx_wait_entry;
	bool			tx_wait_closed;
	bool			resp_throttled;
};

/* Bits of sroce_qp.tx_waiters: the work item to run when packets leave. */
enum {
	SROCE_TXW_REQ,
	SROCE_TXW_RESP,
};

static inline struct sroce_qp *to_sqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct sroce_qp, ibqp);
}

static inline bool sroce_qp_get(struct sroce_qp *qp)
{
	return refcount_inc_not_zero(&qp->ref);
}

static inline void sroce_qp_put(struct sroce_qp *qp)
{
	if (refcount_dec_and_test(&qp->ref))
		complete(&qp->released);
}

/* The verbs, for verbs.c's operations table. */
int sroce_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    SROCE_CREATE_CQ_UDATA_ARG);
int sroce_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int sroce_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);
int sroce_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
int sroce_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc);
int sroce_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata);
int sroce_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata);
int sroce_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int sroce_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);
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
int sroce_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init_attr,
		    struct ib_udata *udata);
int sroce_destroy_ah(struct ib_ah *ibah, u32 flags);
int sroce_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata);
int sroce_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata);
int sroce_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init);
int sroce_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);

/* qp.c */
struct sroce_qp *sroce_qp_lookup(struct sroce_dev *sdev, u32 qpn);
void sroce_qp_error(struct sroce_qp *qp);
void sroce_qp_flush_sq(struct sroce_qp *qp);
void sroce_qp_flush_rq(struct sroce_qp *qp);
int sroce_qp_fetch_rwqe(struct sroce_qp *qp, struct sroce_rwqe *rwqe);
int sroce_rwqe_copy(const struct rxe_recv_wqe *uwqe, u32 max_sge,
		    struct sroce_rwqe *rwqe);
int sroce_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr);
int sroce_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr);

/* mcast.c */
int sroce_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
int sroce_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
void sroce_mcast_rx(struct sroce_dev *sdev, struct sk_buff *skb,
		    const struct sroce_bth *bth,
		    const struct sroce_opcode_info *info, u32 payload);

/* kverbs.c */
int sroce_kpost_send(struct sroce_qp *qp, const struct ib_send_wr *wr,
		     const struct ib_send_wr **bad_wr);
int sroce_kpost_recv(struct sroce_qp *qp, const struct ib_recv_wr *wr,
		     const struct ib_recv_wr **bad_wr);
bool sroce_kpost_can_run(void);

/* req.c */
void sroce_req_run(struct sroce_qp *qp);
void sroce_req_work(struct work_struct *work);

/* comp.c */
void sroce_comp_recv(struct sroce_qp *qp, struct sk_buff *skb,
		     const struct sroce_bth *bth,
		     const struct sroce_opcode_info *info, u32 payload);
void sroce_comp_retire(struct sroce_qp *qp);
void sroce_comp_resend(struct sroce_qp *qp);
void sroce_comp_fault_failed(struct sroce_qp *qp, u32 psn);
void sroce_comp_replay(struct sroce_qp *qp, struct sk_buff *skb);
void sroce_retrans_timer(struct timer_list *t);
void sroce_rnr_timer(struct timer_list *t);
void sroce_comp_arm_retrans(struct sroce_qp *qp);

/* rto.c */
void sroce_rto_reset(struct sroce_qp *qp);
void sroce_rto_sent(struct sroce_qp *qp, u32 psn);
void sroce_rto_rewound(struct sroce_qp *qp);
void sroce_rto_acked(struct sroce_qp *qp, u32 una_psn);
void sroce_rto_expired(struct sroce_qp *qp);
bool sroce_rto_defer(struct sroce_qp *qp);
unsigned long sroce_rto_interval(struct sroce_qp *qp);

/* resp.c */
void sroce_resp_recv(struct sroce_qp *qp, struct sk_buff *skb,
		     const struct sroce_bth *bth,
		     const struct sroce_opcode_info *info, u32 payload);
void sroce_resp_work(struct work_struct *work);
void sroce_resp_release(struct sroce_qp *qp);

/* xmit.c */

/**
 * struct sroce_pkt - a request or response being built
 * @skb: the buffer; its data starts at the BTH
 * @bth: the BTH fields
 * @info: the opcode's description
 * @payload: bytes of payload appended after the headers
 */
struct sroce_pkt {
	struct sk_buff		*skb;
	struct sroce_bth_fields	bth;
	const struct sroce_opcode_info *info;
	u32			payload;
};

void *sroce_pkt_alloc(struct sroce_qp *qp, struct sroce_pkt *pkt, u8 opcode,
		      u32 payload);
void *sroce_pkt_hdr(struct sroce_pkt *pkt, enum sroce_hdr hdr);
int sroce_pkt_send(struct sroce_qp *qp, const struct sroce_av *av,
		   struct sroce_pkt *pkt, u32 dqpn);
void sroce_pkt_free(struct sroce_pkt *pkt);

/**
 * sroce_skb_payload() - payload bytes of a received packet
 * @skb: the packet, validated on reception; data starts at the UDP header
 * @bth: its BTH
 * @info: its opcode
 *
 * For packets held back and handled later, the length computed on
 * reception is computed again.
 *
 * Return: the payload length.
 */
static inline u32 sroce_skb_payload(const struct sk_buff *skb,
				    const struct sroce_bth *bth,
				    const struct sroce_opcode_info *info)
{
	return skb->len - sizeof(struct udphdr) - info->hdr_len -
	       sroce_bth_pad(bth) - SROCE_ICRC_LEN;
}

bool sroce_tx_throttled(struct sroce_qp *qp, unsigned int waiter);
bool sroce_tx_held(struct sroce_qp *qp);
void sroce_tx_unwait(struct sroce_qp *qp);

#endif /* _SROCE_OBJECTS_H */
