// SPDX-License-Identifier: GPL-2.0
/*
 * sroce-integrity: device, queue pair and completion handling.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "integrity.h"

#define SI_HOP_LIMIT	64
/* The RC local ACK timeout: 4.096 us << this; --ack-timeout changes it. */
unsigned int si_ack_timeout = 14;
#define SI_RETRY	7
#define SI_RNR_RETRY	7
#define SI_MIN_RNR	12
#define SI_RD_ATOMIC	16

static unsigned int qpt_slot(enum ibv_qp_type qpt)
{
	return qpt == IBV_QPT_RC ? 0 : qpt == IBV_QPT_UC ? 1 : 2;
}

uint32_t si_mtu_bytes(enum ibv_mtu mtu)
{
	return 128u << mtu;
}

uint32_t si_dev_max_inline(const struct si_dev *d, enum ibv_qp_type qpt)
{
	return d->max_inline[qpt_slot(qpt)];
}

static struct ibv_qp *create_qp(struct si_dev *d, struct ibv_cq *cq,
				enum ibv_qp_type qpt, uint32_t sq, uint32_t rq,
				uint32_t max_inline, uint32_t *got_inline)
{
	struct ibv_qp_init_attr attr = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = {
			.max_send_wr = sq,
			.max_recv_wr = rq,
			.max_send_sge = SI_MAX_SGE,
			.max_recv_sge = SI_MAX_SGE,
			.max_inline_data = max_inline,
		},
		.qp_type = qpt,
	};
	struct ibv_qp *qp;

	qp = ibv_create_qp(d->pd, &attr);
	if (qp && got_inline)
		*got_inline = attr.cap.max_inline_data;
	return qp;
}

/*
 * Find the inline size each QP type supports: ask for a generous one and
 * halve it until the device agrees; what create_qp hands back is the limit.
 */
static int probe_inline(struct si_dev *d, char *err, size_t errlen)
{
	static const enum ibv_qp_type types[] = {
		IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD
	};
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	uint32_t req, got;
	unsigned int i;

	cq = ibv_create_cq(d->ctx, 64, NULL, NULL, 0);
	if (!cq) {
		snprintf(err, errlen, "ibv_create_cq: %s", strerror(errno));
		return -1;
	}
	for (i = 0; i < 3; i++) {
		for (req = 512;; req /= 2) {
			got = 0;
			qp = create_qp(d, cq, types[i], 16, 16, req, &got);
			if (qp || !req)
				break;
		}
		if (!qp) {
			snprintf(err, errlen, "ibv_create_qp(%s): %s",
				 types[i] == IBV_QPT_RC ? "RC" :
				 types[i] == IBV_QPT_UC ? "UC" : "UD",
				 strerror(errno));
			ibv_destroy_cq(cq);
			return -1;
		}
		d->inline_req[i] = req;
		d->max_inline[i] = got;
		ibv_destroy_qp(qp);
	}
	ibv_destroy_cq(cq);
	return 0;
}

int si_dev_open(struct si_dev *d, const struct si_opts *o, char *err,
		size_t errlen)
{
	struct ibv_device **list, *dev = NULL;
	struct ibv_device_attr attr;
	struct ibv_port_attr pattr;
	static const uint8_t zero[16];
	int n, i;

	memset(d, 0, sizeof(*d));
	list = ibv_get_device_list(&n);
	if (!list) {
		snprintf(err, errlen, "ibv_get_device_list: %s",
			 strerror(errno));
		return -1;
	}
	for (i = 0; i < n && !dev; i++)
		if (!o->dev_name ||
		    !strcmp(ibv_get_device_name(list[i]), o->dev_name))
			dev = list[i];
	if (!dev) {
		snprintf(err, errlen, "RDMA device %s not found",
			 o->dev_name ? o->dev_name : "(any)");
		ibv_free_device_list(list);
		return -1;
	}
	d->ctx = ibv_open_device(dev);
	ibv_free_device_list(list);
	if (!d->ctx) {
		snprintf(err, errlen, "ibv_open_device: %s", strerror(errno));
		return -1;
	}
	d->port = o->ib_port;
	d->gidx = o->gidx;
	if (ibv_query_device(d->ctx, &attr)) {
		snprintf(err, errlen, "ibv_query_device failed");
		goto fail;
	}
	if (ibv_query_port(d->ctx, d->port, &pattr)) {
		snprintf(err, errlen, "ibv_query_port %u failed", d->port);
		goto fail;
	}
	if (pattr.state != IBV_PORT_ACTIVE)
		si_vlog(0, "warning: port %u is %s", d->port,
			ibv_port_state_str(pattr.state));
	d->mtu = pattr.active_mtu;
	if (ibv_query_gid(d->ctx, d->port, d->gidx, &d->gid) ||
	    !memcmp(d->gid.raw, zero, sizeof(zero))) {
		snprintf(err, errlen, "no GID at index %d of port %u",
			 d->gidx, d->port);
		goto fail;
	}
	d->rd_atomic = attr.max_qp_init_rd_atom < SI_RD_ATOMIC ?
		       attr.max_qp_init_rd_atom : SI_RD_ATOMIC;
	d->dest_rd_atomic = attr.max_qp_rd_atom < SI_RD_ATOMIC ?
			    attr.max_qp_rd_atom : SI_RD_ATOMIC;
	d->max_wr = attr.max_qp_wr;
	d->pd = ibv_alloc_pd(d->ctx);
	if (!d->pd) {
		snprintf(err, errlen, "ibv_alloc_pd: %s", strerror(errno));
		goto fail;
	}
	if (probe_inline(d, err, errlen))
		goto fail;
	return 0;
fail:
	si_dev_close(d);
	return -1;
}

void si_dev_close(struct si_dev *d)
{
	if (d->pd)
		ibv_dealloc_pd(d->pd);
	if (d->ctx)
		ibv_close_device(d->ctx);
	d->pd = NULL;
	d->ctx = NULL;
}

int si_res_create(struct si_dev *d, struct si_res *r, enum ibv_qp_type qpt,
		  uint32_t sq, uint32_t rq, size_t buflen, char *err,
		  size_t errlen)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = d->port,
	};
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
	int flags;

	memset(r, 0, sizeof(*r));
	r->qpt = qpt;
	r->chan = ibv_create_comp_channel(d->ctx);
	if (!r->chan) {
		snprintf(err, errlen, "ibv_create_comp_channel: %s",
			 strerror(errno));
		goto fail;
	}
	flags = fcntl(r->chan->fd, F_GETFL);
	fcntl(r->chan->fd, F_SETFL, flags | O_NONBLOCK);
	r->cq = ibv_create_cq(d->ctx, sq + rq + 1, NULL, r->chan, 0);
	if (!r->cq) {
		snprintf(err, errlen, "ibv_create_cq(%u): %s", sq + rq + 1,
			 strerror(errno));
		goto fail;
	}
	r->buflen = (buflen + 4095) & ~(size_t)4095;
	if (!r->buflen)
		r->buflen = 4096;
	r->buf = aligned_alloc(4096, r->buflen);
	if (!r->buf) {
		snprintf(err, errlen, "out of memory (%zu bytes)", r->buflen);
		goto fail;
	}
	memset(r->buf, SI_CANARY, r->buflen);
	r->mr = ibv_reg_mr(d->pd, r->buf, r->buflen,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	if (!r->mr) {
		snprintf(err, errlen, "ibv_reg_mr(%zu bytes): %s", r->buflen,
			 strerror(errno));
		goto fail;
	}
	r->qp = create_qp(d, r->cq, qpt, sq, rq,
			  d->inline_req[qpt_slot(qpt)], &r->max_inline);
	if (!r->qp) {
		snprintf(err, errlen, "ibv_create_qp(sq %u, rq %u): %s", sq,
			 rq, strerror(errno));
		goto fail;
	}
	switch (qpt) {
	case IBV_QPT_RC:
		attr.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				       IBV_ACCESS_REMOTE_READ |
				       IBV_ACCESS_REMOTE_ATOMIC;
		mask |= IBV_QP_ACCESS_FLAGS;
		break;
	case IBV_QPT_UC:
		attr.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
		mask |= IBV_QP_ACCESS_FLAGS;
		break;
	default:
		attr.qkey = SI_QKEY;
		mask |= IBV_QP_QKEY;
		break;
	}
	errno = ibv_modify_qp(r->qp, &attr, mask);
	if (errno) {
		snprintf(err, errlen, "modify_qp to INIT: %s", strerror(errno));
		goto fail;
	}
	return 0;
fail:
	si_res_destroy(r);
	return -1;
}

int si_res_connect(struct si_dev *d, struct si_res *r, uint32_t rqpn,
		   const uint8_t *rgid, uint32_t my_psn, uint32_t peer_psn,
		   enum ibv_mtu mtu, char *err, size_t errlen)
{
	struct ibv_ah_attr ah = {
		.is_global = 1,
		.grh = {
			.sgid_index = d->gidx,
			.hop_limit = SI_HOP_LIMIT,
		},
		.port_num = d->port,
	};
	struct ibv_qp_attr attr;
	int mask;

	memcpy(ah.grh.dgid.raw, rgid, 16);

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTR;
	mask = IBV_QP_STATE;
	if (r->qpt != IBV_QPT_UD) {
		attr.path_mtu = mtu;
		attr.dest_qp_num = rqpn;
		attr.rq_psn = peer_psn;
		attr.ah_attr = ah;
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			IBV_QP_RQ_PSN;
	}
	if (r->qpt == IBV_QPT_RC) {
		attr.max_dest_rd_atomic = d->dest_rd_atomic;
		attr.min_rnr_timer = SI_MIN_RNR;
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	}
	errno = ibv_modify_qp(r->qp, &attr, mask);
	if (errno) {
		snprintf(err, errlen, "modify_qp to RTR: %s", strerror(errno));
		return -1;
	}

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = my_psn;
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (r->qpt == IBV_QPT_RC) {
		attr.timeout = si_ack_timeout;
		attr.retry_cnt = SI_RETRY;
		attr.rnr_retry = SI_RNR_RETRY;
		attr.max_rd_atomic = d->rd_atomic;
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	}
	errno = ibv_modify_qp(r->qp, &attr, mask);
	if (errno) {
		snprintf(err, errlen, "modify_qp to RTS: %s", strerror(errno));
		return -1;
	}

	if (r->qpt == IBV_QPT_UD) {
		r->ah = ibv_create_ah(d->pd, &ah);
		if (!r->ah) {
			snprintf(err, errlen, "ibv_create_ah: %s",
				 strerror(errno));
			return -1;
		}
	}
	return 0;
}

void si_res_destroy(struct si_res *r)
{
	if (r->qp)
		ibv_destroy_qp(r->qp);
	if (r->ah)
		ibv_destroy_ah(r->ah);
	if (r->mr)
		ibv_dereg_mr(r->mr);
	free(r->buf);
	if (r->cq)
		ibv_destroy_cq(r->cq);
	if (r->chan)
		ibv_destroy_comp_channel(r->chan);
	memset(r, 0, sizeof(*r));
}

/*
 * Wait for the CQ to have work or @fd to be readable, whichever comes
 * first, until @deadline. Returns a mask of SI_EV_*, 0 when the deadline
 * passed, -1 on an error. The first call after an event only arms the CQ
 * and returns SI_EV_CQ, so the caller polls once more before sleeping.
 */
int si_wait(struct si_res *r, int fd, double deadline)
{
	struct pollfd pfd[2] = {
		{ .fd = r->chan->fd, .events = POLLIN },
		{ .fd = fd, .events = POLLIN },
	};
	struct ibv_cq *cq;
	void *cq_ctx;
	double left;
	int n, ev = 0;

	if (!r->armed) {
		if (ibv_req_notify_cq(r->cq, 0))
			return -1;
		r->armed = true;
		return SI_EV_CQ;
	}
	left = deadline - si_now();
	if (left <= 0)
		return 0;
	n = poll(pfd, fd >= 0 ? 2 : 1, (int)(left * 1000) + 1);
	if (n < 0)
		return errno == EINTR ? SI_EV_CQ : -1;
	if (n == 0)
		return si_now() >= deadline ? 0 : SI_EV_CQ;
	if (pfd[0].revents) {
		if (!ibv_get_cq_event(r->chan, &cq, &cq_ctx)) {
			ibv_ack_cq_events(cq, 1);
			r->armed = false;
		}
		ev |= SI_EV_CQ;
	}
	if (fd >= 0 && pfd[1].revents)
		ev |= SI_EV_FD;
	return ev;
}
