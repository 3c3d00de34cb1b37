/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The requester (req.c): send WQEs to request packets, within the window.
 */
#ifndef _SROCE_REQ_H
#define _SROCE_REQ_H

#include <linux/minmax.h>
#include <linux/sizes.h>
#include <linux/skbuff.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/workqueue.h>

#include "burst.h"
#include "odp.h"
#include "queue.h"

struct sroce_qp;
struct sroce_swqe;

/*
 * Unacknowledged request PSNs an RC QP may have outstanding: as many as
 * carry SROCE_WINDOW_BYTES at the path MTU (sroce_window_max()), and after
 * a loss, from SROCE_WINDOW_MIN up again as ACKs arrive, so that a go-back
 * does not flood a congested path.
 *
 * The window has to cover what the path holds while it is busy: the NIC
 * queues at both ends, the peer's receive batches and the wait for its
 * coalesced ACK. Sized in packets alone it holds less data the smaller
 * the MTU; a byte budget keeps the data in flight alike at every MTU, and
 * SROCE_WINDOW_MAX bounds the packets a go-back sends again at small ones.
 * Documentation/performance.rst has the measurement behind the budget.
 */
#define SROCE_WINDOW_BYTES	SZ_4M
#define SROCE_WINDOW_MAX	4096
#define SROCE_WINDOW_MIN	16

/**
 * sroce_window_max() - the largest window of an RC QP
 * @mtu: the QP's path MTU in bytes
 *
 * Return: the most request PSNs the QP may have unacknowledged.
 */
static inline u32 sroce_window_max(u32 mtu)
{
	return clamp_t(u32, SROCE_WINDOW_BYTES / mtu, SROCE_WINDOW_MIN,
		       SROCE_WINDOW_MAX);
}

/**
 * struct sroce_req - the send queue of a QP and the requester's state
 * @sq: the send ring
 * @swqe: private copies of the send WQEs, one per ring slot
 * @max_sge: SGEs per send WQE
 * @max_inline: inline bytes per send WQE
 * @lock: protects every field below it, and the completer's state
 *	(struct sroce_comp and struct sroce_rto); the four fields above it
 *	are set when the QP is created and do not change
 * @tail: oldest WQE not retired, the ring's consumer index; the completer
 *	advances it
 * @next: next WQE the requester starts or continues
 * @seen: WQEs before this index have been copied from the ring
 * @psn: PSN of the next request packet
 * @sent_psn: the PSN after the highest ever sent; @psn is behind it after
 *	a go-back
 * @cwnd: the current window, see SROCE_WINDOW_BYTES
 * @cwnd_max: the largest window, set from the path MTU on entering RTS
 * @rd_atomic_out: READ/atomic requests outstanding
 * @fatal: a WQE failed; the QP moves to the error state from process
 *	context
 * @miss: pages of an on-demand region the requester or completer found
 *	unmapped; @work faults them in
 * @miss_rewind: a response was dropped for want of pages: ask again once
 *	@miss is mapped
 * @miss_skb: when @miss is a response's, the response, handled again once
 *	the pages are mapped; its WQE fails if the fault fails
 * @miss_psn: the PSN of @miss_skb
 * @nofault: the last fault failed: a missing page is an access error
 * @pkts_since_ackreq: packets sent since the last with AckReq
 * @burst: the packets of the current sroce_req_run(), sent together at
 *	its end; empty between runs
 * @work: restarts the requester from a timer or a received ACK
 *
 * The requester (req.c) turns WQEs into packets; the completer (comp.c)
 * retires them and rewinds @next and @psn for a retransmission.
 */
struct sroce_req {
	struct sroce_queue	sq;
	struct sroce_swqe	*swqe;
	u32			max_sge;
	u32			max_inline;
	spinlock_t		lock;	/* see above */
	u32			tail;
	u32			next;
	u32			seen;
	u32			psn;
	u32			sent_psn;
	u32			cwnd;
	u32			cwnd_max;
	u32			rd_atomic_out;
	bool			fatal;
	struct sroce_odp_miss	miss;
	bool			miss_rewind;
	u32			miss_psn;
	struct sk_buff		*miss_skb;
	bool			nofault;
	u32			pkts_since_ackreq;
	struct sroce_burst	burst;
	struct work_struct	work;
};

void sroce_req_run(struct sroce_qp *qp);
void sroce_req_doorbell(struct sroce_qp *qp);
void sroce_req_schedule(struct sroce_qp *qp);
void sroce_req_kick(struct sroce_qp *qp);
bool sroce_req_draining(struct sroce_qp *qp);
void sroce_req_work(struct work_struct *work);

#endif /* _SROCE_REQ_H */
