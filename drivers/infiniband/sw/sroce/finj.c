// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Fault injection, configured in debugfs: /sys/kernel/debug/sroce/<ibdev>/
 * holds one file per knob and a "counters" file. Each decision to inject a
 * share of packets draws from the device's pseudo-random sequence, which
 * the "seed" file restarts, so that the same seed and the same traffic
 * make the same decisions. The knobs apply to every QP of the device, or
 * to the one QP the "qpn" file names.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <net/ip.h>
#include <net/ip6_checksum.h>
#include <net/ipv6.h>
#include <net/udp.h>

#include <sroce/wire.h>
#include "comp.h"
#include "finj.h"
#include "qp.h"
#include "resp.h"
#include "stats.h"
#include "xmit.h"

/* The "qpn" value that selects every QP of the device. */
#define SROCE_FINJ_ALL_QPS	(-1)
/* Most a count knob may ask for, and the longest delay or stall. */
#define SROCE_FINJ_COUNT_MAX	1000000
#define SROCE_FINJ_DELAY_MAX	1000
#define SROCE_FINJ_STALL_MAX	10000

/**
 * struct sroce_finj_knob_desc - a knob file's name and range
 * @name: the file name
 * @min: the least value accepted
 * @max: the most
 * @init: the value when the device is created
 * @arms: a value other than 0 asks for faults
 */
struct sroce_finj_knob_desc {
	const char	*name;
	int		min;
	int		max;
	int		init;
	bool		arms;
};

static const struct sroce_finj_knob_desc sroce_finj_knobs[] = {
	[SROCE_FINJ_QPN] = { "qpn", SROCE_FINJ_ALL_QPS, SROCE_QPN_MASK,
			     SROCE_FINJ_ALL_QPS, false },
	[SROCE_FINJ_TX_DROP] = { "tx_drop", 0, 100, 0, true },
	[SROCE_FINJ_TX_CORRUPT] = { "tx_corrupt", 0, 100, 0, true },
	[SROCE_FINJ_TX_DUPLICATE] = { "tx_duplicate", 0, 100, 0, true },
	[SROCE_FINJ_TX_DELAY] = { "tx_delay", 0, 100, 0, true },
	[SROCE_FINJ_DELAY_MS] = { "delay_ms", 1, SROCE_FINJ_DELAY_MAX, 10,
				  false },
	[SROCE_FINJ_RX_DROP] = { "rx_drop", 0, 100, 0, true },
	[SROCE_FINJ_RX_CORRUPT] = { "rx_corrupt", 0, 100, 0, true },
	[SROCE_FINJ_RNR_NAK] = { "rnr_nak", 0, SROCE_FINJ_COUNT_MAX, 0, true },
	[SROCE_FINJ_SEQ_NAK] = { "seq_nak", 0, SROCE_FINJ_COUNT_MAX, 0, true },
	[SROCE_FINJ_FAIL_WQE] = { "fail_wqe", 0, SROCE_FINJ_COUNT_MAX, 0,
				  true },
	[SROCE_FINJ_FAIL_STATUS] = { "fail_status", IB_WC_LOC_LEN_ERR,
				     IB_WC_GENERAL_ERR, IB_WC_GENERAL_ERR,
				     false },
	[SROCE_FINJ_COMP_STALL_MS] = { "comp_stall_ms", 0,
				       SROCE_FINJ_STALL_MAX, 0, false },
};

static const char *const sroce_finj_counter_names[] = {
	[SROCE_FINJ_CNT_TX_DROPPED] = "tx_dropped",
	[SROCE_FINJ_CNT_TX_CORRUPTED] = "tx_corrupted",
	[SROCE_FINJ_CNT_TX_DUPLICATED] = "tx_duplicated",
	[SROCE_FINJ_CNT_TX_DELAYED] = "tx_delayed",
	[SROCE_FINJ_CNT_RX_DROPPED] = "rx_dropped",
	[SROCE_FINJ_CNT_RX_CORRUPTED] = "rx_corrupted",
	[SROCE_FINJ_CNT_RNR_NAKS] = "rnr_naks",
	[SROCE_FINJ_CNT_SEQ_NAKS] = "seq_naks",
	[SROCE_FINJ_CNT_WQES_FAILED] = "wqes_failed",
	[SROCE_FINJ_CNT_RESPONSES_STALLED] = "responses_stalled",
};

/* Where a held packet keeps its bookkeeping while it waits. */
struct sroce_finj_cb {
	unsigned long	due;	/* delayed: when it is sent */
	u32		qpn;	/* stalled: the QP it is for */
};

static struct sroce_finj_cb *sroce_finj_cb(struct sk_buff *skb)
{
	BUILD_BUG_ON(sizeof(struct sroce_finj_cb) > sizeof(skb->cb));
	return (struct sroce_finj_cb *)skb->cb;
}

static struct dentry *sroce_finj_root;
/*
 * Orders making a device's files against removing them: a device may be
 * deleted while sroce_dev_add() is still finishing.
 */
static DEFINE_MUTEX(sroce_finj_dir_lock);

static int sroce_finj_get(struct sroce_finj *fi, enum sroce_finj_knob knob)
{
	return atomic_read(&fi->knob[knob]);
}

static void sroce_finj_inc(struct sroce_finj *fi,
			   enum sroce_finj_counter counter)
{
	atomic_long_inc(&fi->count[counter]);
}

/* Do the knobs apply to QP @qpn? */
static bool sroce_finj_selects(struct sroce_finj *fi, u32 qpn)
{
	int want = sroce_finj_get(fi, SROCE_FINJ_QPN);

	return want == SROCE_FINJ_ALL_QPS || want == qpn;
}

/*
 * One draw from the device's sequence for a share knob. A knob at 0 draws
 * nothing, so that enabling one share leaves the others' decisions alone.
 */
static bool sroce_finj_chance(struct sroce_finj *fi, enum sroce_finj_knob knob,
			      u32 *bits)
{
	int percent = sroce_finj_get(fi, knob);
	u32 r;

	if (!percent)
		return false;
	spin_lock_bh(&fi->lock);
	r = prandom_u32_state(&fi->rnd);
	spin_unlock_bh(&fi->lock);
	if (bits)
		*bits = r;
	return r % 100 < percent;
}

/* Take one from a count knob; false when it is spent. */
static bool sroce_finj_take(struct sroce_finj *fi, enum sroce_finj_knob knob)
{
	return atomic_dec_if_positive(&fi->knob[knob]) >= 0;
}

/* Flip one bit of the ICRC, the packet's last byte, as a wire error would. */
static bool sroce_finj_flip(struct sk_buff *skb, u32 bits)
{
	if (skb->len < SROCE_ICRC_LEN || skb_ensure_writable(skb, skb->len))
		return false;
	skb->data[skb->len - 1 - (bits >> 8) % SROCE_ICRC_LEN] ^=
		BIT(bits & 7);
	return true;
}

/**
 * __sroce_finj_rx() - see sroce_finj_rx()
 * @sdev: the receiving device
 * @skb: the packet
 *
 * Return: true when the packet was dropped.
 */
bool __sroce_finj_rx(struct sroce_dev *sdev, struct sk_buff *skb)
{
	struct sroce_finj *fi = sdev->finj;
	struct sroce_bth bth;
	u32 bits;

	/* Too short for a BTH: the receive path counts it. */
	if (skb_copy_bits(skb, sizeof(struct udphdr), &bth, sizeof(bth)) ||
	    !sroce_finj_selects(fi, sroce_bth_qpn(&bth)))
		return false;
	if (sroce_finj_chance(fi, SROCE_FINJ_RX_DROP, NULL)) {
		sroce_finj_inc(fi, SROCE_FINJ_CNT_RX_DROPPED);
		kfree_skb(skb);
		return true;
	}
	if (sroce_finj_chance(fi, SROCE_FINJ_RX_CORRUPT, &bits) &&
	    sroce_finj_flip(skb, bits))
		sroce_finj_inc(fi, SROCE_FINJ_CNT_RX_CORRUPTED);
	return false;
}

/* Hand a finished packet on, as sroce_pkt_send() does. */
static void sroce_finj_out(struct sroce_finj *fi, struct sk_buff *skb)
{
	struct net *net = fi->sdev->net;

	memset(skb->cb, 0, sizeof(skb->cb));
	/* RoCE v1 frames are framed for their netdev already. */
	if (skb->protocol == htons(ETH_P_IBOE))
		dev_queue_xmit(skb);
	else
		sroce_ip_out(net, skb);
}

static void sroce_finj_duplicate(struct sroce_finj *fi, struct sk_buff *skb)
{
	struct sk_buff *copy = skb_copy(skb, GFP_ATOMIC);

	if (!copy)
		return;
	sroce_finj_inc(fi, SROCE_FINJ_CNT_TX_DUPLICATED);
	sroce_finj_out(fi, copy);
}

/* Hold @skb back for delay_ms; false when the device is going away. */
static bool sroce_finj_hold(struct sroce_finj *fi, struct sk_buff *skb)
{
	unsigned long due = jiffies +
		msecs_to_jiffies(sroce_finj_get(fi, SROCE_FINJ_DELAY_MS));

	sroce_finj_cb(skb)->due = due;
	spin_lock_bh(&fi->lock);
	if (fi->dying) {
		spin_unlock_bh(&fi->lock);
		return false;
	}
	__skb_queue_tail(&fi->delayq, skb);
	if (!timer_pending(&fi->delay_timer))
		mod_timer(&fi->delay_timer, due);
	spin_unlock_bh(&fi->lock);
	sroce_finj_inc(fi, SROCE_FINJ_CNT_TX_DELAYED);
	return true;
}

/* Send the held packets that are due; wait for the next one. */
static void sroce_finj_delay_timer(struct timer_list *t)
{
	struct sroce_finj *fi = from_timer(fi, t, delay_timer);
	struct sk_buff_head due;
	struct sk_buff *skb;

	__skb_queue_head_init(&due);
	spin_lock(&fi->lock);
	while ((skb = skb_peek(&fi->delayq)) &&
	       time_after_eq(jiffies, sroce_finj_cb(skb)->due)) {
		__skb_unlink(skb, &fi->delayq);
		__skb_queue_tail(&due, skb);
	}
	if (skb)
		mod_timer(&fi->delay_timer, sroce_finj_cb(skb)->due);
	spin_unlock(&fi->lock);

	while ((skb = __skb_dequeue(&due)))
		sroce_finj_out(fi, skb);
}

/**
 * __sroce_finj_tx() - see sroce_finj_tx()
 * @qp: the sending QP
 * @skb: the packet
 *
 * Return: true when the packet was taken.
 */
bool __sroce_finj_tx(struct sroce_qp *qp, struct sk_buff *skb)
{
	struct sroce_finj *fi = qp->sdev->finj;
	u32 bits;

	if (!sroce_finj_selects(fi, qp->ibqp.qp_num))
		return false;
	if (sroce_finj_chance(fi, SROCE_FINJ_TX_DROP, NULL)) {
		sroce_finj_inc(fi, SROCE_FINJ_CNT_TX_DROPPED);
		kfree_skb(skb);
		return true;
	}
	/* Copied before a corruption: one bad packet per corruption. */
	if (sroce_finj_chance(fi, SROCE_FINJ_TX_DUPLICATE, NULL))
		sroce_finj_duplicate(fi, skb);
	if (sroce_finj_chance(fi, SROCE_FINJ_TX_CORRUPT, &bits) &&
	    sroce_finj_flip(skb, bits))
		sroce_finj_inc(fi, SROCE_FINJ_CNT_TX_CORRUPTED);
	if (sroce_finj_chance(fi, SROCE_FINJ_TX_DELAY, NULL)) {
		if (!sroce_finj_hold(fi, skb))
			kfree_skb(skb);
		return true;
	}
	return false;
}

/**
 * __sroce_finj_resp_nak() - see sroce_finj_resp_nak()
 * @qp: the responder
 * @info: the request's opcode
 * @psn: its PSN
 *
 * An RNR NAK answers only a request that would take a receive WQE, the
 * first packet of a SEND; a sequence NAK answers any request, as if the
 * one expected had been lost.
 *
 * Return: true when a NAK was sent instead of handling the request.
 */
bool __sroce_finj_resp_nak(struct sroce_qp *qp,
			   const struct sroce_opcode_info *info, u32 psn)
{
	struct sroce_finj *fi = qp->sdev->finj;

	lockdep_assert_held(&qp->resp.lock);
	if (qp->type != IB_QPT_RC || !sroce_finj_selects(fi, qp->ibqp.qp_num))
		return false;
	if ((info->flags & SROCE_OPF_SEND) &&
	    (info->flags & (SROCE_OPF_FIRST | SROCE_OPF_ONLY)) &&
	    !qp->resp.rwqe_valid && sroce_finj_take(fi, SROCE_FINJ_RNR_NAK)) {
		sroce_finj_inc(fi, SROCE_FINJ_CNT_RNR_NAKS);
		sroce_stat_inc(qp->sdev, SROCE_STAT_RNR_NAK_SENT);
		sroce_resp_send_ack(qp, psn,
				    SROCE_AETH_RNR_NAK | qp->min_rnr_timer);
		return true;
	}
	if (sroce_finj_take(fi, SROCE_FINJ_SEQ_NAK)) {
		sroce_finj_inc(fi, SROCE_FINJ_CNT_SEQ_NAKS);
		sroce_stat_inc(qp->sdev, SROCE_STAT_SEQ_NAK_SENT);
		/* Packets behind it are out of sequence: no second NAK. */
		qp->resp.nak_sent = true;
		sroce_resp_send_ack(qp, psn,
				    SROCE_AETH_NAK | SROCE_NAK_PSN_SEQ_ERR);
		return true;
	}
	return false;
}

/**
 * __sroce_finj_fail_wqe() - see sroce_finj_fail_wqe()
 * @qp: the QP
 * @wqe: the WQE
 *
 * Return: true when the WQE was completed in error.
 */
bool __sroce_finj_fail_wqe(struct sroce_qp *qp, struct sroce_swqe *wqe)
{
	struct sroce_finj *fi = qp->sdev->finj;

	lockdep_assert_held(&qp->req.lock);
	if (!sroce_finj_selects(fi, qp->ibqp.qp_num) ||
	    !sroce_finj_take(fi, SROCE_FINJ_FAIL_WQE))
		return false;
	sroce_finj_inc(fi, SROCE_FINJ_CNT_WQES_FAILED);
	wqe->status = sroce_finj_get(fi, SROCE_FINJ_FAIL_STATUS);
	wqe->state = SROCE_SWQE_DONE;
	wqe->injected = true;
	return true;
}

/**
 * __sroce_finj_comp_stall() - see sroce_finj_comp_stall()
 * @qp: the QP
 * @skb: the response
 *
 * Return: true when the response was taken.
 */
bool __sroce_finj_comp_stall(struct sroce_qp *qp, struct sk_buff *skb)
{
	struct sroce_finj *fi = qp->sdev->finj;
	struct sk_buff *held;

	if (!READ_ONCE(fi->stalling) ||
	    !sroce_finj_selects(fi, qp->ibqp.qp_num))
		return false;
	/* The receive path frees its own reference once this returns. */
	held = skb_clone(skb, GFP_ATOMIC);
	spin_lock_bh(&fi->lock);
	if (!fi->stalling || fi->dying) {
		spin_unlock_bh(&fi->lock);
		kfree_skb(held);
		return false;
	}
	if (held) {
		sroce_finj_cb(held)->qpn = qp->ibqp.qp_num;
		__skb_queue_tail(&fi->stallq, held);
	}
	spin_unlock_bh(&fi->lock);
	/* Without memory the response is lost; the requester resends. */
	sroce_finj_inc(fi, SROCE_FINJ_CNT_RESPONSES_STALLED);
	return true;
}

/* Whether any knob asks for faults; under cfg_lock. */
static bool sroce_finj_any(struct sroce_finj *fi)
{
	int k;

	for (k = 0; k < SROCE_FINJ_NKNOBS; k++)
		if (sroce_finj_knobs[k].arms && sroce_finj_get(fi, k))
			return true;
	return READ_ONCE(fi->stalling);
}

/* The stall is over: the completer takes the responses it missed. */
static void sroce_finj_stall_end(struct work_struct *work)
{
	struct sroce_finj *fi = container_of(to_delayed_work(work),
					     struct sroce_finj, stall_work);
	struct sk_buff_head held;
	struct sroce_qp *qp;
	struct sk_buff *skb;

	__skb_queue_head_init(&held);
	spin_lock_bh(&fi->lock);
	WRITE_ONCE(fi->stalling, false);
	skb_queue_splice_init(&fi->stallq, &held);
	spin_unlock_bh(&fi->lock);
	mutex_lock(&fi->cfg_lock);
	WRITE_ONCE(fi->armed, sroce_finj_any(fi));
	mutex_unlock(&fi->cfg_lock);

	while ((skb = __skb_dequeue(&held))) {
		/* The QP may be gone, or its number taken again. */
		qp = sroce_qp_lookup(fi->sdev, sroce_finj_cb(skb)->qpn);
		if (qp) {
			sroce_comp_replay(qp, skb);
			sroce_qp_put(qp);
		}
		consume_skb(skb);
	}
}

static void sroce_finj_stall(struct sroce_finj *fi, int ms)
{
	spin_lock_bh(&fi->lock);
	if (ms && !fi->dying)
		WRITE_ONCE(fi->stalling, true);
	spin_unlock_bh(&fi->lock);
	/* Ending it at once (0) still hands over what was held. */
	mod_delayed_work(system_wq, &fi->stall_work, msecs_to_jiffies(ms));
}

static void sroce_finj_set(struct sroce_finj *fi, enum sroce_finj_knob knob,
			   int val)
{
	mutex_lock(&fi->cfg_lock);
	atomic_set(&fi->knob[knob], val);
	if (knob == SROCE_FINJ_COMP_STALL_MS)
		sroce_finj_stall(fi, val);
	WRITE_ONCE(fi->armed, sroce_finj_any(fi));
	mutex_unlock(&fi->cfg_lock);
}

/* Parse what was written to a knob: a number in its range, "all" for qpn. */
static int sroce_finj_parse(enum sroce_finj_knob knob, const char *s, int *val)
{
	const struct sroce_finj_knob_desc *desc = &sroce_finj_knobs[knob];

	if (knob == SROCE_FINJ_QPN && !strcmp(s, "all")) {
		*val = SROCE_FINJ_ALL_QPS;
		return 0;
	}
	if (kstrtoint(s, 0, val) || *val < desc->min || *val > desc->max)
		return -EINVAL;
	return 0;
}

/* Copy a short line written by user space; strip its white space. */
static char *sroce_finj_line(const char __user *ubuf, size_t len, loff_t *ppos,
			     char *buf, size_t size)
{
	if (*ppos || !len || len >= size)
		return ERR_PTR(-EINVAL);
	if (copy_from_user(buf, ubuf, len))
		return ERR_PTR(-EFAULT);
	buf[len] = '\0';
	return strim(buf);
}

static ssize_t sroce_finj_knob_write(struct file *file,
				     const char __user *ubuf, size_t len,
				     loff_t *ppos)
{
	struct sroce_finj_file *f = file->private_data;
	char buf[32], *s;
	int val, err;

	s = sroce_finj_line(ubuf, len, ppos, buf, sizeof(buf));
	if (IS_ERR(s))
		return PTR_ERR(s);
	err = sroce_finj_parse(f->knob, s, &val);
	if (err)
		return err;
	sroce_finj_set(f->fi, f->knob, val);
	return len;
}

static ssize_t sroce_finj_knob_read(struct file *file, char __user *ubuf,
				    size_t len, loff_t *ppos)
{
	struct sroce_finj_file *f = file->private_data;
	int val = sroce_finj_get(f->fi, f->knob);
	char buf[16];
	int n;

	if (f->knob == SROCE_FINJ_QPN && val == SROCE_FINJ_ALL_QPS)
		n = scnprintf(buf, sizeof(buf), "all\n");
	else
		n = scnprintf(buf, sizeof(buf), "%d\n", val);
	return simple_read_from_buffer(ubuf, len, ppos, buf, n);
}

static const struct file_operations sroce_finj_knob_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = sroce_finj_knob_read,
	.write = sroce_finj_knob_write,
	.llseek = default_llseek,
};

/* Restart the sequence and zero the counters: a run starts afresh. */
static void sroce_finj_reseed(struct sroce_finj *fi, u64 seed)
{
	int c;

	spin_lock_bh(&fi->lock);
	fi->seed = seed;
	prandom_seed_state(&fi->rnd, seed);
	for (c = 0; c < SROCE_FINJ_NCOUNTERS; c++)
		atomic_long_set(&fi->count[c], 0);
	spin_unlock_bh(&fi->lock);
}

static ssize_t sroce_finj_seed_write(struct file *file,
				     const char __user *ubuf, size_t len,
				     loff_t *ppos)
{
	struct sroce_finj *fi = file->private_data;
	char buf[32], *s;
	u64 seed;

	s = sroce_finj_line(ubuf, len, ppos, buf, sizeof(buf));
	if (IS_ERR(s))
		return PTR_ERR(s);
	if (kstrtou64(s, 0, &seed))
		return -EINVAL;
	sroce_finj_reseed(fi, seed);
	return len;
}

static ssize_t sroce_finj_seed_read(struct file *file, char __user *ubuf,
				    size_t len, loff_t *ppos)
{
	struct sroce_finj *fi = file->private_data;
	char buf[24];
	u64 seed;
	int n;

	spin_lock_bh(&fi->lock);
	seed = fi->seed;
	spin_unlock_bh(&fi->lock);
	n = scnprintf(buf, sizeof(buf), "%llu\n", seed);
	return simple_read_from_buffer(ubuf, len, ppos, buf, n);
}

static const struct file_operations sroce_finj_seed_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = sroce_finj_seed_read,
	.write = sroce_finj_seed_write,
	.llseek = default_llseek,
};

static int sroce_finj_counters_show(struct seq_file *m, void *unused)
{
	struct sroce_finj *fi = m->private;
	int c;

	for (c = 0; c < SROCE_FINJ_NCOUNTERS; c++)
		seq_printf(m, "%s %ld\n", sroce_finj_counter_names[c],
			   atomic_long_read(&fi->count[c]));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(sroce_finj_counters);

/**
 * sroce_finj_dev_alloc() - set up a new device's fault injection, off
 * @sdev: the device, not yet registered
 *
 * Return: 0 or -ENOMEM.
 */
int sroce_finj_dev_alloc(struct sroce_dev *sdev)
{
	struct sroce_finj *fi;
	int k;

	BUILD_BUG_ON(ARRAY_SIZE(sroce_finj_knobs) != SROCE_FINJ_NKNOBS);
	BUILD_BUG_ON(ARRAY_SIZE(sroce_finj_counter_names) !=
		     SROCE_FINJ_NCOUNTERS);
	fi = kzalloc(sizeof(*fi), GFP_KERNEL);
	if (!fi)
		return -ENOMEM;
	fi->sdev = sdev;
	mutex_init(&fi->cfg_lock);
	spin_lock_init(&fi->lock);
	prandom_seed_state(&fi->rnd, 0);
	for (k = 0; k < SROCE_FINJ_NKNOBS; k++) {
		atomic_set(&fi->knob[k], sroce_finj_knobs[k].init);
		fi->files[k].fi = fi;
		fi->files[k].knob = k;
	}
	skb_queue_head_init(&fi->delayq);
	timer_setup(&fi->delay_timer, sroce_finj_delay_timer, 0);
	skb_queue_head_init(&fi->stallq);
	INIT_DELAYED_WORK(&fi->stall_work, sroce_finj_stall_end);
	sdev->finj = fi;
	return 0;
}

/**
 * sroce_finj_dev_register() - give a registered device its debugfs files
 * @sdev: the device
 *
 * Without debugfs, or when the files cannot be made, the device works
 * without fault injection.
 */
void sroce_finj_dev_register(struct sroce_dev *sdev)
{
	struct sroce_finj *fi;
	struct dentry *dir;
	int k;

	mutex_lock(&sroce_finj_dir_lock);
	fi = sdev->finj;
	dir = fi ? debugfs_create_dir(dev_name(&sdev->ibdev.dev),
				      sroce_finj_root) : NULL;
	if (IS_ERR_OR_NULL(dir))
		goto out;
	for (k = 0; k < SROCE_FINJ_NKNOBS; k++)
		debugfs_create_file(sroce_finj_knobs[k].name, 0600, dir,
				    &fi->files[k], &sroce_finj_knob_fops);
	debugfs_create_file("seed", 0600, dir, fi, &sroce_finj_seed_fops);
	debugfs_create_file("counters", 0400, dir, fi,
			    &sroce_finj_counters_fops);
	fi->dir = dir;
out:
	mutex_unlock(&sroce_finj_dir_lock);
}

/**
 * sroce_finj_dev_free() - end a device's fault injection
 * @sdev: the device, with no QP left
 *
 * Removing the debugfs files waits for the reads and writes under way;
 * a file still open afterwards fails them. Held packets are dropped.
 *
 * Context: process context.
 */
void sroce_finj_dev_free(struct sroce_dev *sdev)
{
	struct sroce_finj *fi = sdev->finj;

	if (!fi)
		return;
	mutex_lock(&sroce_finj_dir_lock);
	debugfs_remove_recursive(fi->dir);
	fi->dir = NULL;
	/* The hooks no longer run: no QP is left, and receivers are gone. */
	sdev->finj = NULL;
	mutex_unlock(&sroce_finj_dir_lock);
	spin_lock_bh(&fi->lock);
	fi->dying = true;
	WRITE_ONCE(fi->armed, false);
	spin_unlock_bh(&fi->lock);
	del_timer_sync(&fi->delay_timer);
	cancel_delayed_work_sync(&fi->stall_work);
	skb_queue_purge(&fi->delayq);
	skb_queue_purge(&fi->stallq);
	mutex_destroy(&fi->cfg_lock);
	kfree(fi);
}

int sroce_finj_init(void)
{
	/* Without debugfs there is nothing to configure: not an error. */
	sroce_finj_root = debugfs_create_dir(KBUILD_MODNAME, NULL);
	return 0;
}

void sroce_finj_exit(void)
{
	debugfs_remove_recursive(sroce_finj_root);
	sroce_finj_root = NULL;
}
