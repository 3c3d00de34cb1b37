// SPDX-License-Identifier: GPL-2.0
/*
 * sroce-ringfuzz asyncflood: a completion queue that overflows again and
 * again while the process never reads its async events.
 *
 * A UD QP sends -n datagrams (default 100000), every one signaled, to a
 * QP with no receive posted, on a send CQ of capacity 1 that nobody polls:
 * all but the first completion find the CQ full. With --hold PATH the tool
 * then creates PATH.ready and waits for PATH.go, so that the caller can
 * measure the kernel's memory while the process, and anything the kernel
 * queued for it, is still there. Only then does it read its async events
 * and check what the CQ kept.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ringfuzz.h"

#define FLOOD_DEFAULT	100000
#define FLOOD_BATCH	32
#define FLOOD_SQ	128
#define FLOOD_EVENTS_MAX 1000	/* "bounded": far below one per drop */
#define HOLD_MS		600000

struct flood {
	struct rf_dev	*d;
	struct ibv_cq	*scq, *rcq;
	struct rf_qp	a, b;
	struct ibv_ah	*ah;
	unsigned int	posted;
};

/* Post @n zero-length signaled SENDs, waiting for ring space as needed. */
static int flood_post(struct flood *f, unsigned int n)
{
	struct ibv_send_wr wr[FLOOD_BATCH], *bad;
	uint64_t end = rf_now_ms() + 600000ull * rf_slow;
	unsigned int i, k;
	int ret;

	while (n) {
		k = n < FLOOD_BATCH ? n : FLOOD_BATCH;
		memset(wr, 0, sizeof(wr));
		for (i = 0; i < k; i++) {
			wr[i].wr_id = f->posted + i;
			wr[i].opcode = IBV_WR_SEND;
			wr[i].send_flags = IBV_SEND_SIGNALED;
			wr[i].wr.ud.ah = f->ah;
			wr[i].wr.ud.remote_qpn = f->b.qp->qp_num;
			wr[i].wr.ud.remote_qkey = RF_QKEY;
			wr[i].next = i + 1 < k ? &wr[i + 1] : NULL;
		}
		ret = ibv_post_send(f->a.qp, wr, &bad);
		if (ret) {
			/* Part of the list may have gone in. */
			k = bad ? (unsigned int)(bad - wr) : 0;
			if (ret != ENOMEM || rf_now_ms() > end) {
				rf_diag("ibv_post_send after %u: %s", f->posted,
					strerror(ret));
				f->posted += k;
				return -1;
			}
			rf_msleep(1);
		}
		f->posted += k;
		n -= k;
	}
	return 0;
}

/* The send ring's consumer caught up with its producer. */
static bool flood_drained(struct flood *f)
{
	uint64_t end = rf_now_ms() + 120000ull * rf_slow;

	while (rf_ring_get(&f->a.sq, RF_Q_CONS) != rf_ring_get(&f->a.sq, RF_Q_PROD)) {
		if (rf_now_ms() > end)
			return false;
		rf_msleep(10);
	}
	return true;
}

static void flood_hold(void)
{
	char path[4096];
	uint64_t end;
	int fd;

	snprintf(path, sizeof(path), "%s.ready", rf_hold);
	fd = open(path, O_CREAT | O_WRONLY, 0666);
	if (fd >= 0)
		close(fd);
	snprintf(path, sizeof(path), "%s.go", rf_hold);
	end = rf_now_ms() + (uint64_t)HOLD_MS * rf_slow;
	while (access(path, F_OK) && rf_now_ms() < end)
		rf_msleep(100);
}

/* Read every queued async event; count the CQ errors. */
static unsigned int flood_events(struct rf_dev *d, unsigned int *other)
{
	struct ibv_async_event ev;
	unsigned int cq_err = 0;
	int fl;

	*other = 0;
	fl = fcntl(d->ctx->async_fd, F_GETFL);
	fcntl(d->ctx->async_fd, F_SETFL, fl | O_NONBLOCK);
	while (!ibv_get_async_event(d->ctx, &ev)) {
		if (ev.event_type == IBV_EVENT_CQ_ERR)
			cq_err++;
		else
			(*other)++;
		ibv_ack_async_event(&ev);
	}
	fcntl(d->ctx->async_fd, F_SETFL, fl);
	return cq_err;
}

static int flood_setup(struct flood *f, struct rf_dev *d)
{
	memset(f, 0, sizeof(*f));
	f->d = d;
	f->scq = rf_cq(d, 1);
	f->rcq = rf_cq(d, 16);
	if (!f->scq || !f->rcq)
		return -1;
	if (rf_qp_create(d, &f->a, IBV_QPT_UD, f->scq, f->rcq, NULL,
			 FLOOD_SQ, true) ||
	    rf_qp_create(d, &f->b, IBV_QPT_UD, f->rcq, f->rcq, NULL, 16, false))
		return -1;
	if (rf_qp_connect(d, f->a.qp, 0) || rf_qp_connect(d, f->b.qp, 0))
		return -1;
	f->ah = rf_ah(d, &d->gid);
	return f->ah ? 0 : -1;
}

static void flood_free(struct flood *f)
{
	rf_qp_destroy(&f->a);
	rf_qp_destroy(&f->b);
	if (f->ah)
		ibv_destroy_ah(f->ah);
	if (f->scq)
		ibv_destroy_cq(f->scq);
	if (f->rcq)
		ibv_destroy_cq(f->rcq);
}

/* The entries the full CQ kept are the first completions, intact. */
static void flood_check_kept(struct flood *f)
{
	struct ibv_wc wc[64];
	int n, i;

	n = ibv_poll_cq(f->scq, 64, wc);
	for (i = 0; i < n; i++)
		if (wc[i].wr_id != (uint64_t)i || wc[i].status != IBV_WC_SUCCESS)
			break;
	rf_ok(n > 0 && i == n,
	      "asyncflood: the full CQ kept its first %d completion(s) intact%s",
	      n, n > 0 && i == n ? "" : " (wrong wr_id or status)");
}

int rf_mode_asyncflood(struct rf_dev *d)
{
	unsigned int n = rf_iters ? rf_iters : FLOOD_DEFAULT, cap, cq_err, other;
	struct flood f;
	int err;

	if (flood_setup(&f, d)) {
		rf_ok(false, "asyncflood: setup: %s", strerror(errno));
		flood_free(&f);
		return 0;
	}
	cap = f.scq->cqe;
	err = flood_post(&f, n);
	rf_ok(!err, "asyncflood: %u signaled SENDs posted on a CQ of %u entries never polled",
	      f.posted, cap);
	rf_ok(flood_drained(&f), "asyncflood: the send queue drained although its CQ is full");
	printf("# flooded: %u completions, %u dropped\n", f.posted,
	       f.posted > cap ? f.posted - cap : 0);
	fflush(stdout);
	if (rf_hold)
		flood_hold();
	cq_err = flood_events(d, &other);
	rf_diag("async events queued: %u CQ errors, %u others", cq_err, other);
	rf_ok(cq_err >= 1 && cq_err <= FLOOD_EVENTS_MAX,
	      "asyncflood: overflow reported, and a bounded number of CQ error events queued (%u for %u dropped completions)",
	      cq_err, f.posted > cap ? f.posted - cap : 0);
	flood_check_kept(&f);
	flood_free(&f);
	return 0;
}
