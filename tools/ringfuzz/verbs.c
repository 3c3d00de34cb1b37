// SPDX-License-Identifier: GPL-2.0
/*
 * sroce-ringfuzz: device, queue pairs on one device sending to its own GID,
 * completions, and the raw doorbell.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/utsname.h>
#include <rdma/ib_user_verbs.h>

#include "ringfuzz.h"

#define RF_HOP_LIMIT	64
#define RF_PSN		0x123

static bool kernel_is_new(void)
{
	struct utsname u;
	int major = 0, minor = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &major, &minor) != 2)
		return false;
	return major > 6 || (major == 6 && minor >= 2);
}

int rf_dev_open(struct rf_dev *d, const char *name, int gidx)
{
	struct ibv_device **list;
	struct ibv_port_attr port;
	int i, n;

	memset(d, 0, sizeof(*d));
	list = ibv_get_device_list(&n);
	if (!list) {
		fprintf(stderr, "ibv_get_device_list: %s\n", strerror(errno));
		return -1;
	}
	for (i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			d->ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!d->ctx) {
		fprintf(stderr, "cannot open %s: %s\n", name, strerror(errno));
		return -1;
	}
	d->gidx = gidx;
	d->gidx6 = rf_gidx6;
	if (ibv_query_gid(d->ctx, 1, gidx, &d->gid) ||
	    ibv_query_port(d->ctx, 1, &port)) {
		fprintf(stderr, "%s: no GID %d or port 1\n", name, gidx);
		goto err;
	}
	d->mtu = port.active_mtu;
	d->pd = ibv_alloc_pd(d->ctx);
	if (!d->pd) {
		fprintf(stderr, "ibv_alloc_pd: %s\n", strerror(errno));
		goto err;
	}
	d->max_inline = 64;
	d->new_kernel = kernel_is_new();
	return 0;
err:
	ibv_close_device(d->ctx);
	d->ctx = NULL;
	return -1;
}

void rf_dev_close(struct rf_dev *d)
{
	if (d->pd)
		ibv_dealloc_pd(d->pd);
	if (d->ctx)
		ibv_close_device(d->ctx);
	d->pd = NULL;
	d->ctx = NULL;
}

struct ibv_cq *rf_cq(struct rf_dev *d, int cqe)
{
	return ibv_create_cq(d->ctx, cqe, NULL, NULL, 0);
}

/*
 * Create a QP sending on @scq and receiving on @rcq. With @find_sq the send ring is
 * found among the mappings the creation added: the only one whose slots
 * hold a send WQE (at least 256 bytes; receive slots are smaller here).
 */
int rf_qp_create(struct rf_dev *d, struct rf_qp *q, enum ibv_qp_type type,
		 struct ibv_cq *scq, struct ibv_cq *rcq, struct ibv_srq *srq,
		 uint32_t sq_depth, bool find_sq)
{
	struct ibv_qp_init_attr attr = {
		.send_cq = scq,
		.recv_cq = rcq,
		.srq = srq,
		.cap = {
			.max_send_wr = sq_depth,
			.max_recv_wr = srq ? 0 : 32,
			.max_send_sge = 2,
			.max_recv_sge = 1,
			.max_inline_data = d->max_inline,
		},
		.qp_type = type,
	};
	uintptr_t before[256];
	struct rf_ring found[8];
	int nb = 0, nf, i;

	memset(q, 0, sizeof(*q));
	if (find_sq) {
		rf_maps_lock();
		nb = rf_maps_snapshot(before, NULL, 256);
	}
	q->qp = ibv_create_qp(d->pd, &attr);
	if (!q->qp) {
		if (find_sq)
			rf_maps_unlock();
		return -errno;
	}
	if (!find_sq)
		return 0;
	nf = rf_maps_new(before, nb, found, 8);
	rf_maps_unlock();
	for (i = 0; i < nf; i++) {
		if (found[i].log2 >= 8) {
			q->sq = found[i];
			q->has_sq = true;
		}
	}
	if (!q->has_sq) {
		fprintf(stderr, "QP %u: no send ring among %d new mappings\n",
			q->qp->qp_num, nf);
		ibv_destroy_qp(q->qp);
		q->qp = NULL;
		return -ENOENT;
	}
	return 0;
}

void rf_qp_destroy(struct rf_qp *q)
{
	if (q->qp)
		ibv_destroy_qp(q->qp);
	q->qp = NULL;
	q->has_sq = false;
}

int rf_qp_init(struct rf_dev *d, struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.pkey_index = 0,
	};
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	(void)d;
	if (qp->qp_type == IBV_QPT_UD) {
		a.qkey = RF_QKEY;
		mask |= IBV_QP_QKEY;
	} else {
		a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				    IBV_ACCESS_REMOTE_READ |
				    IBV_ACCESS_REMOTE_ATOMIC;
		mask |= IBV_QP_ACCESS_FLAGS;
	}
	return ibv_modify_qp(qp, &a, mask) ? -errno : 0;
}

int rf_qp_rtr(struct rf_dev *d, struct ibv_qp *qp, uint32_t dqpn)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR };
	int mask = IBV_QP_STATE;

	if (qp->qp_type != IBV_QPT_UD) {
		a.path_mtu = d->mtu;
		a.dest_qp_num = dqpn;
		a.rq_psn = RF_PSN;
		a.ah_attr.is_global = 1;
		a.ah_attr.port_num = 1;
		a.ah_attr.grh.dgid = d->gid;
		a.ah_attr.grh.sgid_index = d->gidx;
		a.ah_attr.grh.hop_limit = RF_HOP_LIMIT;
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			IBV_QP_RQ_PSN;
	}
	if (qp->qp_type == IBV_QPT_RC) {
		a.max_dest_rd_atomic = 16;
		a.min_rnr_timer = 12;
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	}
	return ibv_modify_qp(qp, &a, mask) ? -errno : 0;
}

int rf_qp_rts(struct rf_dev *d, struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTS,
		.sq_psn = RF_PSN,
	};
	int mask = IBV_QP_STATE | IBV_QP_SQ_PSN;

	(void)d;
	if (qp->qp_type == IBV_QPT_RC) {
		/* Bounded retries: no wait here may last for ever. */
		a.timeout = 14;
		a.retry_cnt = 7;
		a.rnr_retry = 6;
		a.max_rd_atomic = 16;
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	}
	return ibv_modify_qp(qp, &a, mask) ? -errno : 0;
}

/* RESET to RTS, towards QP @dqpn of the same GID (ignored for UD). */
int rf_qp_connect(struct rf_dev *d, struct ibv_qp *qp, uint32_t dqpn)
{
	int err;

	err = rf_qp_init(d, qp);
	if (!err)
		err = rf_qp_rtr(d, qp, dqpn);
	if (!err)
		err = rf_qp_rts(d, qp);
	return err;
}

struct ibv_ah *rf_ah(struct rf_dev *d, const union ibv_gid *dgid)
{
	return rf_ah_from(d, dgid, d->gidx);
}

/* An AH from source GID @sgidx: an IPv6 destination needs an IPv6 one. */
struct ibv_ah *rf_ah_from(struct rf_dev *d, const union ibv_gid *dgid, int sgidx)
{
	struct ibv_ah_attr a = {
		.is_global = 1,
		.port_num = 1,
		.grh = {
			.dgid = *dgid,
			.sgid_index = sgidx,
			.hop_limit = RF_HOP_LIMIT,
		},
	};

	return ibv_create_ah(d->pd, &a);
}

/* A page-aligned buffer registered with @access. */
struct ibv_mr *rf_mr(struct rf_dev *d, size_t len, int access)
{
	struct ibv_mr *mr;
	void *buf;

	if (posix_memalign(&buf, 4096, len))
		return NULL;
	memset(buf, 0, len);
	mr = ibv_reg_mr(d->pd, buf, len, access);
	if (!mr)
		free(buf);
	return mr;
}

void rf_mr_free(struct ibv_mr *mr)
{
	void *buf;

	if (!mr)
		return;
	buf = mr->addr;
	ibv_dereg_mr(mr);
	free(buf);
}

uint64_t rf_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void rf_msleep(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/*
 * Poll up to @n completions for at most @ms milliseconds (times
 * SROCE_SLOW). Sleeps between empty polls: in a one-vCPU guest a spinning
 * process takes the time the kernel needs to make the completions.
 * Return: the number polled, or -1 on a poll error.
 */
int rf_poll(struct ibv_cq *cq, struct ibv_wc *wc, int n, unsigned int ms)
{
	uint64_t end = rf_now_ms() + (uint64_t)ms * rf_slow;
	int got = 0, r;

	while (got < n) {
		r = ibv_poll_cq(cq, n - got, wc + got);
		if (r < 0)
			return -1;
		got += r;
		if (got == n || rf_now_ms() > end)
			break;
		if (!r) {
			struct timespec ts = { 0, 200000 };

			nanosleep(&ts, NULL);
		}
	}
	return got;
}

/* No completion arrives within @ms milliseconds. */
bool rf_poll_quiet(struct ibv_cq *cq, unsigned int ms)
{
	struct ibv_wc wc;

	return rf_poll(cq, &wc, 1, ms) == 0;
}

const char *rf_status(enum ibv_wc_status st)
{
	return ibv_wc_status_str(st);
}

/*
 * The send doorbell as librxe rings it (a POST_SEND command with no work
 * request), without librxe reading the ring: the ring may hold values
 * librxe would trip over.
 */
int rf_doorbell(struct ibv_qp *qp)
{
	struct ib_uverbs_post_send_resp resp;
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_post_send cmd;
	} req;

	memset(&req, 0, sizeof(req));
	req.hdr.command = IB_USER_VERBS_CMD_POST_SEND;
	req.hdr.in_words = sizeof(req) / 4;
	req.hdr.out_words = sizeof(resp) / 4;
	req.cmd.response = (uintptr_t)&resp;
	req.cmd.qp_handle = qp->handle;
	req.cmd.wqe_size = sizeof(struct ibv_send_wr);
	if (write(qp->context->cmd_fd, &req, sizeof(req)) != sizeof(req))
		return -errno;
	return 0;
}

/* xorshift64*: cheap, and the same stream for the same seed. */
uint64_t rf_rand(uint64_t *state)
{
	uint64_t x = *state ? *state : 0x9e3779b97f4a7c15ull;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545f4914f6cdd1dull;
}

/* Bytes that depend on @key and the offset: misplaced data never matches. */
void rf_fill(void *buf, size_t len, uint64_t key)
{
	uint64_t s = key * 0x9e3779b97f4a7c15ull + 1;
	uint8_t *p = buf;
	size_t i;

	for (i = 0; i < len; i++) {
		if (!(i & 7))
			rf_rand(&s);
		p[i] = s >> ((i & 7) * 8);
	}
}
