// SPDX-License-Identifier: GPL-2.0
/*
 * sroce-ringfuzz: the well-behaved process of the ring mode. An RC QP
 * pair of its own device context moves SENDs, WRITEs and READs whose
 * payload it checks, until the parent closes @stop_fd; then it writes one
 * line to @report_fd: "MESSAGES ERRORS first error".
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ringfuzz.h"

#define TR_LEN	1024

struct traffic {
	struct rf_dev	d;
	struct ibv_cq	*cq;
	struct rf_qp	a, b;
	struct ibv_mr	*mr;	/* a's source at 0, b's target at 8192 */
	char		why[200];
};

static bool stopped(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) > 0;
}

/* Two completions, both SUCCESS: the request's and the receive's. */
static int tr_wait(struct traffic *t, int n, const char *what)
{
	struct ibv_wc wc[2];
	int got = rf_poll(t->cq, wc, n, 30000), i;

	if (got < n) {
		snprintf(t->why, sizeof(t->why), "%s: %d of %d completions",
			 what, got, n);
		return -1;
	}
	for (i = 0; i < n; i++) {
		if (wc[i].status != IBV_WC_SUCCESS) {
			snprintf(t->why, sizeof(t->why), "%s: %s", what,
				 rf_status(wc[i].status));
			return -1;
		}
	}
	return 0;
}

static int tr_check(struct traffic *t, const uint8_t *got, uint64_t key,
		    const char *what)
{
	uint8_t want[TR_LEN];

	rf_fill(want, TR_LEN, key);
	if (memcmp(got, want, TR_LEN)) {
		snprintf(t->why, sizeof(t->why), "%s: payload differs", what);
		return -1;
	}
	return 0;
}

/* Message @i: a SEND, a WRITE or a READ, alternately. */
static int tr_one(struct traffic *t, uint64_t i)
{
	uint8_t *buf = t->mr->addr, *dst = buf + 8192;
	struct ibv_sge sge = { (uintptr_t)buf, TR_LEN, t->mr->lkey };
	struct ibv_sge rsge = { (uintptr_t)dst, TR_LEN, t->mr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = i, .sg_list = &rsge, .num_sge = 1 };
	struct ibv_send_wr wr = {
		.wr_id = i, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { (uintptr_t)dst, t->mr->rkey },
	}, *bad;
	struct ibv_recv_wr *rbad;
	int kind = i % 3;

	memset(dst, 0, TR_LEN);
	if (kind == 2) {
		/* READ b's memory into a's. */
		rf_fill(dst, TR_LEN, i);
		memset(buf, 0, TR_LEN);
		wr.opcode = IBV_WR_RDMA_READ;
	} else {
		rf_fill(buf, TR_LEN, i);
		if (kind == 1)
			wr.opcode = IBV_WR_RDMA_WRITE;
		else if (ibv_post_recv(t->b.qp, &rwr, &rbad))
			goto post_err;
	}
	if (ibv_post_send(t->a.qp, &wr, &bad))
		goto post_err;
	if (tr_wait(t, kind ? 1 : 2, kind == 0 ? "SEND" : kind == 1 ?
		    "WRITE" : "READ"))
		return -1;
	return tr_check(t, kind == 2 ? buf : dst, i,
			kind == 0 ? "SEND" : kind == 1 ? "WRITE" : "READ");
post_err:
	snprintf(t->why, sizeof(t->why), "post: %s", strerror(errno));
	return -1;
}

int rf_mode_traffic(const char *dev, int gidx, int stop_fd, int report_fd)
{
	struct traffic t = {};
	uint64_t n = 0;
	int err = -1;

	snprintf(t.why, sizeof(t.why), "setup failed");
	if (rf_dev_open(&t.d, dev, gidx))
		goto report;
	t.cq = rf_cq(&t.d, 64);
	t.mr = rf_mr(&t.d, 16384, IBV_ACCESS_LOCAL_WRITE |
		     IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!t.cq || !t.mr ||
	    rf_qp_create(&t.d, &t.a, IBV_QPT_RC, t.cq, t.cq, NULL, 8, false) ||
	    rf_qp_create(&t.d, &t.b, IBV_QPT_RC, t.cq, t.cq, NULL, 8, false) ||
	    rf_qp_connect(&t.d, t.a.qp, t.b.qp->qp_num) ||
	    rf_qp_connect(&t.d, t.b.qp, t.a.qp->qp_num))
		goto report;
	t.why[0] = 0;
	err = 0;
	while (!stopped(stop_fd) && !err) {
		err = tr_one(&t, n);
		if (!err)
			n++;
	}
report:
	dprintf(report_fd, "%llu %d %s\n", (unsigned long long)n, err ? 1 : 0,
		t.why[0] ? t.why : "-");
	rf_qp_destroy(&t.a);
	rf_qp_destroy(&t.b);
	if (t.cq)
		ibv_destroy_cq(t.cq);
	rf_mr_free(t.mr);
	rf_dev_close(&t.d);
	return err ? 1 : 0;
}
