/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Fault injection (finj.c): for people testing RDMA software on sroce, a
 * device drops, delays, duplicates or corrupts a share of its packets,
 * forces RNR and sequence NAKs, fails send WQEs and stalls its completer
 * on request, configured through debugfs (Documentation/admin-guide.rst).
 *
 * Off by default. While nothing is armed each hook costs one test of the
 * device's flag.
 */
#ifndef _SROCE_FINJ_H
#define _SROCE_FINJ_H

#include <linux/atomic.h>
#include <linux/compiler.h>
#include <linux/mutex.h>
#include <linux/prandom.h>
#include <linux/skbuff.h>
#include <linux/spinlock.h>
#include <linux/timer.h>
#include <linux/workqueue.h>

#include "qp.h"
#include "sroce.h"
#include "wqe.h"

struct dentry;
struct sroce_opcode_info;

/* The debugfs files holding a number, and the order they are listed in. */
enum sroce_finj_knob {
	SROCE_FINJ_QPN,
	SROCE_FINJ_TX_DROP,
	SROCE_FINJ_TX_CORRUPT,
	SROCE_FINJ_TX_DUPLICATE,
	SROCE_FINJ_TX_DELAY,
	SROCE_FINJ_DELAY_MS,
	SROCE_FINJ_RX_DROP,
	SROCE_FINJ_RX_CORRUPT,
	SROCE_FINJ_RNR_NAK,
	SROCE_FINJ_SEQ_NAK,
	SROCE_FINJ_FAIL_WQE,
	SROCE_FINJ_FAIL_STATUS,
	SROCE_FINJ_COMP_STALL_MS,
	SROCE_FINJ_NKNOBS,
};

/* What the "counters" file shows: each fault injected, by kind. */
enum sroce_finj_counter {
	SROCE_FINJ_CNT_TX_DROPPED,
	SROCE_FINJ_CNT_TX_CORRUPTED,
	SROCE_FINJ_CNT_TX_DUPLICATED,
	SROCE_FINJ_CNT_TX_DELAYED,
	SROCE_FINJ_CNT_RX_DROPPED,
	SROCE_FINJ_CNT_RX_CORRUPTED,
	SROCE_FINJ_CNT_RNR_NAKS,
	SROCE_FINJ_CNT_SEQ_NAKS,
	SROCE_FINJ_CNT_WQES_FAILED,
	SROCE_FINJ_CNT_RESPONSES_STALLED,
	SROCE_FINJ_NCOUNTERS,
};

/**
 * struct sroce_finj_file - what one debugfs knob file stands for
 * @fi: the device's injection state
 * @knob: which of its knobs
 */
struct sroce_finj_file {
	struct sroce_finj	*fi;
	enum sroce_finj_knob	knob;
};

/**
 * struct sroce_finj - the fault injection state of one device
 * @armed: some fault is asked for; the one test the hooks make while off
 * @sdev: the device
 * @dir: its debugfs directory, NULL (or an error) without one
 * @cfg_lock: serializes writers of the knobs, so @armed follows them
 * @lock: protects @rnd, @seed, @delayq's order, @stalling and @dying
 * @rnd: the pseudo-random sequence every share is drawn from
 * @seed: the seed @rnd started from
 * @knob: the knobs' values, enum sroce_finj_knob; a count knob counts down
 * @count: faults injected, enum sroce_finj_counter
 * @delayq: transmitted packets held back, in order of transmission
 * @delay_timer: sends them when they are due
 * @stalling: the completer is stalled: responses wait in @stallq
 * @stallq: the responses held while stalled
 * @stall_work: ends the stall and hands them to the completer
 * @dying: the device is going away; nothing more is queued
 * @files: the knob files' private data
 */
struct sroce_finj {
	bool			armed;
	struct sroce_dev	*sdev;
	struct dentry		*dir;
	struct mutex		cfg_lock;	/* see above */
	spinlock_t		lock;		/* see above */
	struct rnd_state	rnd;
	u64			seed;
	atomic_t		knob[SROCE_FINJ_NKNOBS];
	atomic_long_t		count[SROCE_FINJ_NCOUNTERS];
	struct sk_buff_head	delayq;
	struct timer_list	delay_timer;
	bool			stalling;
	struct sk_buff_head	stallq;
	struct delayed_work	stall_work;
	bool			dying;
	struct sroce_finj_file	files[SROCE_FINJ_NKNOBS];
};

int sroce_finj_init(void);
void sroce_finj_exit(void);
int sroce_finj_dev_alloc(struct sroce_dev *sdev);
void sroce_finj_dev_register(struct sroce_dev *sdev);
void sroce_finj_dev_free(struct sroce_dev *sdev);

bool __sroce_finj_rx(struct sroce_dev *sdev, struct sk_buff *skb);
bool __sroce_finj_tx(struct sroce_qp *qp, struct sk_buff *skb);
bool __sroce_finj_resp_nak(struct sroce_qp *qp,
			   const struct sroce_opcode_info *info, u32 psn);
bool __sroce_finj_fail_wqe(struct sroce_qp *qp, struct sroce_swqe *wqe);
bool __sroce_finj_comp_stall(struct sroce_qp *qp, struct sk_buff *skb);

static inline bool sroce_finj_armed(const struct sroce_dev *sdev)
{
	return unlikely(READ_ONCE(sdev->finj->armed));
}

/**
 * sroce_finj_rx() - drop or corrupt a received packet on request
 * @sdev: the receiving device
 * @skb: the packet; its data starts at the UDP header
 *
 * Context: softirq.
 * Return: true when the packet was dropped (and freed).
 */
static inline bool sroce_finj_rx(struct sroce_dev *sdev, struct sk_buff *skb)
{
	return sroce_finj_armed(sdev) && __sroce_finj_rx(sdev, skb);
}

/**
 * sroce_finj_tx() - drop, corrupt, duplicate or delay a packet on request
 * @qp: the sending QP
 * @skb: the packet, routed, with its ICRC, about to go to the IP layer
 *
 * Context: any, with bottom halves disabled.
 * Return: true when the packet was taken (dropped or held back).
 */
static inline bool sroce_finj_tx(struct sroce_qp *qp, struct sk_buff *skb)
{
	return sroce_finj_armed(qp->sdev) && __sroce_finj_tx(qp, skb);
}

/**
 * sroce_finj_resp_nak() - answer an expected request with a NAK on request
 * @qp: the RC responder, resp.lock held
 * @info: the request's opcode
 * @psn: its PSN, the one the responder expects
 *
 * Return: true when an RNR or sequence NAK was sent instead of handling it.
 */
static inline bool sroce_finj_resp_nak(struct sroce_qp *qp,
				       const struct sroce_opcode_info *info,
				       u32 psn)
{
	return sroce_finj_armed(qp->sdev) &&
	       __sroce_finj_resp_nak(qp, info, psn);
}

/**
 * sroce_finj_fail_wqe() - complete a send WQE in error on request
 * @qp: the QP, req.lock held
 * @wqe: the WQE, about to start
 *
 * The failure does not move the QP to the error state: the next WQE runs
 * as usual: sroce_finj_retired() tells the completer so.
 *
 * Return: true when the WQE is done, with the status asked for.
 */
static inline bool sroce_finj_fail_wqe(struct sroce_qp *qp,
				       struct sroce_swqe *wqe)
{
	return sroce_finj_armed(qp->sdev) && __sroce_finj_fail_wqe(qp, wqe);
}

/**
 * sroce_finj_retired() - whether a failed WQE being retired was injected
 * @wqe: the WQE, completed in error
 *
 * Return: true when its failure was injected; the mark is cleared.
 */
static inline bool sroce_finj_retired(struct sroce_swqe *wqe)
{
	bool injected = wqe->injected;

	wqe->injected = false;
	return injected;
}

/**
 * sroce_finj_comp_stall() - hold a response while the completer is stalled
 * @qp: the QP the response is for
 * @skb: the response; its data starts at the UDP header
 *
 * Context: softirq.
 * Return: true when the response was taken; it is handled when the stall
 * ends, as sroce_comp_replay() handles responses.
 */
static inline bool sroce_finj_comp_stall(struct sroce_qp *qp,
					 struct sk_buff *skb)
{
	return sroce_finj_armed(qp->sdev) && __sroce_finj_comp_stall(qp, skb);
}

#endif /* _SROCE_FINJ_H */
