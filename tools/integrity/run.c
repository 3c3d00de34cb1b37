// SPDX-License-Identifier: GPL-2.0
/*
 * sroce-integrity: one test case, client and server side.
 *
 * Per case the client sends CASE (what to run and its QP), the server
 * builds its QP and buffers, brings the QP to RTS and answers REPLY (its
 * QP, rkey and buffer). The client runs the case, then sends END (done or
 * aborted); the server checks what it has to check and answers RESULT,
 * at once if it fails on the way. UC and UD receivers hand out credits
 * with ACK, as those transports drop what finds no receive WQE.
 */
#include <endian.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "integrity.h"

#define SI_POLL_BATCH	16

static uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

static bool is_inline(enum si_variant var)
{
	return var == SI_V_INLINE || var == SI_V_INLINE_SGE;
}

static void vfail(bool *failed, char *err, size_t errlen, const char *fmt,
		  va_list ap)
{
	if (*failed)
		return;
	*failed = true;
	vsnprintf(err, errlen, fmt, ap);
}

static void fill_sges(struct ibv_sge *sge, const struct si_layout *l,
		      uint8_t *slot, uint32_t lkey)
{
	unsigned int j;

	for (j = 0; j < l->nseg; j++) {
		sge[j].addr = (uintptr_t)(slot + l->seg[j].off);
		sge[j].length = l->seg[j].len;
		sge[j].lkey = lkey;
	}
}

/* The canary around the 8 bytes of an atomic slot. */
static bool atomic_guard_check(const uint8_t *slot, size_t stride,
			       size_t *bad)
{
	size_t tail = SI_ATOMIC_OFF + 8;

	if (!si_canary_check(slot, SI_ATOMIC_OFF, bad))
		return false;
	if (si_canary_check(slot + tail, stride - tail, bad))
		return true;
	*bad += tail;
	return false;
}

/* ------------------------------------------------------------------ */
/* Client */

struct client_run {
	struct si_client *cl;
	const struct si_case *c;
	const struct si_op_info *op;
	struct si_res r;
	size_t stride;
	uint32_t window;
	uint32_t posted;
	uint32_t done;
	bool flow;
	uint32_t ring;
	uint32_t acked;
	uint32_t sqpn;
	uint64_t raddr;
	uint32_t rkey;
	size_t rstride;
	uint64_t vals[SI_ATOMIC_SLOTS];
	uint64_t *orig;
	bool failed;
	bool broken;
	bool got_result;
	char *err;
	size_t errlen;
};

static __printf(2, 3) void cfail(struct client_run *cr, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfail(&cr->failed, cr->err, cr->errlen, fmt, ap);
	va_end(ap);
}

static uint8_t *client_slot(struct client_run *cr, uint32_t i)
{
	return cr->r.buf + (size_t)(i % cr->window) * cr->stride;
}

/* Flip a bit of the byte at logical offset @at of a message image. */
static void inject_flip(uint8_t *slot, const struct si_layout *l, uint32_t at)
{
	unsigned int j;

	for (j = 0; j < l->nseg; j++) {
		if (at >= l->seg[j].logical &&
		    at < l->seg[j].logical + l->seg[j].len) {
			slot[l->seg[j].off + at - l->seg[j].logical] ^= 0x40;
			return;
		}
	}
}

static void client_post(struct client_run *cr, uint32_t i)
{
	const struct si_case *c = cr->c;
	const struct si_op_info *op = cr->op;
	uint64_t key = si_msg_key(c->seed, c->index, i);
	uint8_t *slot = client_slot(cr, i);
	struct ibv_send_wr wr, *bad = NULL;
	struct ibv_sge sge[SI_MAX_SGE];
	uint64_t cmp_add, swap;
	enum si_inject inj = SI_INJ_NONE;
	uint32_t imm = si_msg_imm(key);
	struct si_layout l;
	unsigned int j;
	int rc;

	if (i == c->count / 2)
		inj = cr->cl->o->inject;
	memset(&wr, 0, sizeof(wr));
	if (op->atomic) {
		memset(slot, SI_CANARY, cr->stride);
		memset(&l, 0, sizeof(l));
		l.nseg = 1;
		l.seg[0].off = SI_ATOMIC_OFF;
		l.seg[0].len = 8;
		si_atomic_step(c, cr->vals, i, &cmp_add, &swap, &cr->orig[i]);
		wr.wr.atomic.remote_addr = cr->raddr + SI_ATOMIC_OFF +
			(i % SI_ATOMIC_SLOTS) * SI_ATOMIC_STRIDE;
		if (inj == SI_INJ_PAYLOAD)
			cmp_add ^= 1;
		wr.wr.atomic.compare_add = cmp_add;
		wr.wr.atomic.swap = swap;
		wr.wr.atomic.rkey = cr->rkey;
	} else if (c->op == SI_OP_RC_READ) {
		/* Scatter the read the way a receiver would. */
		si_layout_local(&l, c->size, c->var, i, true);
		memset(slot, SI_CANARY, cr->stride);
	} else {
		si_layout_local(&l, c->size, c->var, i, false);
		si_slot_fill(slot, cr->stride, &l, key);
	}
	if (op->remote && !op->atomic) {
		wr.wr.rdma.remote_addr = cr->raddr + (uint64_t)i * cr->rstride +
					 si_pad(c->var, i);
		wr.wr.rdma.rkey = cr->rkey;
		if (inj == SI_INJ_PAYLOAD && c->op == SI_OP_RC_READ)
			wr.wr.rdma.remote_addr++;
	}
	if (inj == SI_INJ_PAYLOAD && !op->atomic && c->op != SI_OP_RC_READ)
		inject_flip(slot, &l, c->size / 2);
	if (inj == SI_INJ_IMM)
		imm ^= 0x100;
	if (inj == SI_INJ_SHORT && l.nseg)
		l.seg[l.nseg - 1].len--;
	if (op->qpt == IBV_QPT_UD) {
		wr.wr.ud.ah = cr->r.ah;
		wr.wr.ud.remote_qpn = cr->sqpn;
		wr.wr.ud.remote_qkey = SI_QKEY;
	}
	fill_sges(sge, &l, slot, cr->r.mr->lkey);
	wr.wr_id = i;
	wr.sg_list = l.nseg ? sge : NULL;
	wr.num_sge = l.nseg;
	wr.opcode = op->wr_opcode;
	wr.send_flags = IBV_SEND_SIGNALED;
	if (is_inline(c->var))
		wr.send_flags |= IBV_SEND_INLINE;
	if (op->imm)
		wr.imm_data = htobe32(imm);

	rc = ibv_post_send(cr->r.qp, &wr, &bad);
	if (rc) {
		cfail(cr, "msg %u: ibv_post_send: %s", i, strerror(rc));
		return;
	}
	cr->posted++;
	/* Inline data is the device's once posted: the buffer is free. */
	if (is_inline(c->var))
		for (j = 0; j < l.nseg; j++)
			memset(slot + l.seg[j].off, SI_SCRIBBLE, l.seg[j].len);
}

static void client_complete(struct client_run *cr, const struct ibv_wc *wc)
{
	const struct si_case *c = cr->c;
	uint32_t i = cr->done;
	uint8_t *slot = client_slot(cr, i);
	unsigned int flags, want;
	char why[SI_ERR_LEN];
	struct si_layout l;
	uint64_t got;
	size_t bad;

	if (wc->status != IBV_WC_SUCCESS) {
		cfail(cr, "msg %llu: completion status %s (%d), vendor_err 0x%x",
		      (unsigned long long)wc->wr_id,
		      ibv_wc_status_str(wc->status), wc->status,
		      wc->vendor_err);
		return;
	}
	if (wc->wr_id != i) {
		cfail(cr, "completion for wr_id %llu, expected wr_id %u",
		      (unsigned long long)wc->wr_id, i);
		return;
	}
	if (wc->opcode != cr->op->send_wc) {
		cfail(cr, "msg %u: completion opcode %d, expected %d", i,
		      wc->opcode, cr->op->send_wc);
		return;
	}
	if (wc->qp_num != cr->r.qp->qp_num) {
		cfail(cr, "msg %u: completion qp_num 0x%x, expected 0x%x", i,
		      wc->qp_num, cr->r.qp->qp_num);
		return;
	}
	/* Requesters flag the completion of a work request with immediate. */
	flags = wc->wc_flags & (IBV_WC_WITH_IMM | IBV_WC_GRH);
	want = cr->op->imm ? IBV_WC_WITH_IMM : 0;
	if (flags != want) {
		cfail(cr, "msg %u: completion wc_flags 0x%x, expected 0x%x", i,
		      flags, want);
		return;
	}
	if (c->op == SI_OP_RC_READ) {
		if (wc->byte_len != c->size) {
			cfail(cr, "msg %u: read completion byte_len %u, expected %u",
			      i, wc->byte_len, c->size);
			return;
		}
		si_layout_local(&l, c->size, c->var, i, true);
		if (!si_slot_check(slot, cr->stride, &l,
				   si_msg_key(c->seed, c->index, i), 0, NULL,
				   why, sizeof(why))) {
			cfail(cr, "msg %u: data read: %s", i, why);
			return;
		}
	} else if (cr->op->atomic) {
		if (wc->byte_len != 8) {
			cfail(cr, "msg %u: atomic completion byte_len %u, expected 8",
			      i, wc->byte_len);
			return;
		}
		memcpy(&got, slot + SI_ATOMIC_OFF, 8);
		if (got != cr->orig[i]) {
			cfail(cr, "msg %u: atomic returned original value 0x%016llx, expected 0x%016llx",
			      i, (unsigned long long)got,
			      (unsigned long long)cr->orig[i]);
			return;
		}
		if (!atomic_guard_check(slot, cr->stride, &bad)) {
			cfail(cr, "msg %u: atomic result: guard byte at slot offset %zu: expected 0x%02x, got 0x%02x",
			      i, bad, SI_CANARY, slot[bad]);
			return;
		}
	}
	cr->done++;
}

/* A control message in the middle of a case: credits or an early end. */
static void client_ctl(struct client_run *cr)
{
	const struct si_opts *o = cr->cl->o;
	struct si_msg m;

	if (si_ctl_recv(cr->cl->fd, &m, si_now() + o->timeout)) {
		cr->broken = true;
		cfail(cr, "control connection lost");
		return;
	}
	switch (m.type) {
	case SI_MSG_ACK:
		if (m.v[SI_ACK_CONSUMED] > cr->acked)
			cr->acked = m.v[SI_ACK_CONSUMED];
		break;
	case SI_MSG_RESULT:
		cr->got_result = true;
		if (m.v[SI_RESULT_FAILED])
			cfail(cr, "%s", m.text);
		else
			cfail(cr, "server ended the case early");
		break;
	default:
		cr->broken = true;
		cfail(cr, "unexpected control message %u", m.type);
		break;
	}
}

static void client_run(struct client_run *cr)
{
	const struct si_case *c = cr->c;
	double deadline = si_now() + cr->cl->o->timeout;
	struct ibv_wc wc[SI_POLL_BATCH];
	int n, i, ev;

	while (!cr->failed && cr->done < c->count) {
		while (!cr->failed && cr->posted < c->count &&
		       cr->posted - cr->done < cr->window &&
		       (!cr->flow || cr->posted < cr->acked + cr->ring))
			client_post(cr, cr->posted);
		if (cr->failed)
			break;
		n = ibv_poll_cq(cr->r.cq, SI_POLL_BATCH, wc);
		if (n < 0) {
			cfail(cr, "ibv_poll_cq failed");
			break;
		}
		for (i = 0; i < n && !cr->failed; i++)
			client_complete(cr, &wc[i]);
		if (n > 0)
			continue;
		ev = si_wait(&cr->r, cr->cl->fd, deadline);
		if (ev < 0) {
			cfail(cr, "waiting for completions: %s",
			      strerror(errno));
		} else if (ev == 0) {
			if (cr->flow)
				cfail(cr, "timeout after %u s: %u of %u completions, %u posted, %u received by the server",
				      cr->cl->o->timeout, cr->done, c->count,
				      cr->posted, cr->acked);
			else
				cfail(cr, "timeout after %u s: %u of %u completions, %u posted",
				      cr->cl->o->timeout, cr->done, c->count,
				      cr->posted);
		} else if (ev & SI_EV_FD) {
			client_ctl(cr);
		}
	}
}

/* Wait for the RESULT of the case, skipping late credits. */
static void client_result(struct client_run *cr)
{
	double deadline = si_now() + cr->cl->o->timeout + 5;
	struct si_msg m;
	int rc;

	while (!cr->got_result && !cr->broken) {
		rc = si_ctl_recv(cr->cl->fd, &m, deadline);
		if (rc) {
			cr->broken = true;
			cfail(cr, "%s", rc == -2 ?
			      "no result from the server" :
			      "control connection lost");
			return;
		}
		if (m.type == SI_MSG_ACK)
			continue;
		if (m.type != SI_MSG_RESULT) {
			cr->broken = true;
			cfail(cr, "unexpected control message %u", m.type);
			return;
		}
		cr->got_result = true;
		if (m.v[SI_RESULT_FAILED])
			cfail(cr, "%s", m.text);
	}
}

int si_client_case(struct si_client *cl, const struct si_case *c, char *err,
		   size_t errlen)
{
	const struct si_op_info *op = &si_ops[c->op];
	struct client_run cr = {
		.cl = cl,
		.c = c,
		.op = op,
		.err = err,
		.errlen = errlen,
	};
	struct si_msg m;
	char why[SI_ERR_LEN];
	int rc;

	err[0] = '\0';
	cr.window = min_u32(min_u32(cl->o->window, c->count), cl->d->max_wr);
	if (!cr.window)
		cr.window = 1;
	cr.stride = op->atomic ? SI_ATOMIC_STRIDE : si_stride(c->size);
	if (si_res_create(cl->d, &cr.r, op->qpt, cr.window, 1,
			  (size_t)cr.window * cr.stride, why, sizeof(why))) {
		cfail(&cr, "client setup: %s", why);
		return 1;
	}
	if (is_inline(c->var) && c->size > cr.r.max_inline) {
		cfail(&cr, "client setup: inline size %u above the QP's max_inline_data %u",
		      c->size, cr.r.max_inline);
		si_res_destroy(&cr.r);
		return 1;
	}
	if (op->atomic) {
		cr.orig = calloc(c->count, sizeof(*cr.orig));
		if (!cr.orig) {
			cfail(&cr, "client setup: out of memory");
			si_res_destroy(&cr.r);
			return 1;
		}
		si_atomic_init(c, cr.vals);
	}

	memset(&m, 0, sizeof(m));
	m.type = SI_MSG_CASE;
	m.v[SI_CASE_INDEX] = c->index;
	m.v[SI_CASE_OP] = c->op;
	m.v[SI_CASE_VAR] = c->var;
	m.v[SI_CASE_SIZE] = c->size;
	m.v[SI_CASE_COUNT] = c->count;
	m.v[SI_CASE_SEED] = c->seed;
	m.v[SI_CASE_MTU] = c->mtu;
	m.v[SI_CASE_CPSN] = c->cpsn;
	m.v[SI_CASE_SPSN] = c->spsn;
	m.v[SI_CASE_QPN] = cr.r.qp->qp_num;
	memcpy(m.gid, cl->d->gid.raw, 16);
	if (si_ctl_send(cl->fd, &m) ||
	    si_ctl_recv(cl->fd, &m, si_now() + cl->o->timeout) ||
	    m.type != SI_MSG_REPLY) {
		cfail(&cr, "no reply from the server");
		cr.broken = true;
		goto out;
	}
	if (m.v[SI_REPLY_STATUS]) {
		cfail(&cr, "%s", m.text);
		goto out;
	}
	cr.sqpn = m.v[SI_REPLY_QPN];
	cr.rkey = m.v[SI_REPLY_RKEY];
	cr.raddr = m.v[SI_REPLY_ADDR];
	cr.ring = m.v[SI_REPLY_RING];
	cr.rstride = si_stride(c->size);
	cr.flow = op->qpt != IBV_QPT_RC && op->recv;

	if (si_res_connect(cl->d, &cr.r, cr.sqpn, m.gid, c->cpsn, c->spsn,
			   c->mtu, why, sizeof(why)))
		cfail(&cr, "client setup: %s", why);
	else
		client_run(&cr);

	si_vlog(2, "case %u: client posted %u, completed %u", c->index,
		cr.posted, cr.done);
	if (!cr.broken) {
		memset(&m, 0, sizeof(m));
		m.type = SI_MSG_END;
		m.v[SI_END_ABORT] = cr.failed;
		if (si_ctl_send(cl->fd, &m)) {
			cr.broken = true;
			cfail(&cr, "control connection lost");
		}
	}
	client_result(&cr);
out:
	free(cr.orig);
	si_res_destroy(&cr.r);
	rc = cr.broken ? -1 : cr.failed ? 1 : 0;
	return rc;
}

/* ------------------------------------------------------------------ */
/* Server */

struct server_run {
	struct si_dev *d;
	const struct si_opts *o;
	int fd;
	struct si_case c;
	const struct si_op_info *op;
	struct si_res r;
	size_t total;		/* bytes a receive WQE takes (UD: + GRH) */
	size_t stride;		/* of a receive slot or a region slot */
	uint32_t ring;
	uint32_t expect;
	uint32_t consumed;
	uint32_t posted;
	bool flow;
	uint32_t cqpn;
	uint8_t cgid[16];
	bool failed;
	bool reported;
	bool end;
	bool aborted;
	bool broken;
	char err[SI_ERR_LEN];
};

static __printf(2, 3) void sfail(struct server_run *sr, const char *fmt, ...)
{
	char buf[SI_ERR_LEN - 16];
	va_list ap;

	if (sr->failed)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	sr->failed = true;
	snprintf(sr->err, sizeof(sr->err), "server: %s", buf);
	si_vlog(0, "case %u: %s", sr->c.index, sr->err);
}

static bool write_target(const struct server_run *sr)
{
	return sr->c.op == SI_OP_RC_WRITE || sr->c.op == SI_OP_RC_WRITE_IMM ||
	       sr->c.op == SI_OP_RC_READ;
}

static uint8_t *server_slot(struct server_run *sr, uint32_t i)
{
	if (write_target(sr))
		return sr->r.buf + (size_t)i * sr->stride;
	return sr->r.buf + (size_t)(i % sr->ring) * sr->stride;
}

static int server_post_recv(struct server_run *sr, uint32_t i)
{
	struct ibv_recv_wr wr, *bad = NULL;
	struct ibv_sge sge[SI_MAX_SGE];
	struct si_layout l;
	uint8_t *slot;
	int rc;

	memset(&wr, 0, sizeof(wr));
	memset(&l, 0, sizeof(l));
	if (sr->c.op != SI_OP_RC_WRITE_IMM) {
		slot = server_slot(sr, i);
		memset(slot, SI_CANARY, sr->stride);
		si_layout_local(&l, sr->total, sr->c.var, i, true);
		fill_sges(sge, &l, slot, sr->r.mr->lkey);
	}
	wr.wr_id = i;
	wr.sg_list = l.nseg ? sge : NULL;
	wr.num_sge = l.nseg;
	rc = ibv_post_recv(sr->r.qp, &wr, &bad);
	if (rc) {
		sfail(sr, "msg %u: ibv_post_recv: %s", i, strerror(rc));
		return -1;
	}
	sr->posted++;
	return 0;
}

static void server_send_ack(struct server_run *sr)
{
	struct si_msg m;

	memset(&m, 0, sizeof(m));
	m.type = SI_MSG_ACK;
	m.v[SI_ACK_CONSUMED] = sr->consumed;
	if (si_ctl_send(sr->fd, &m))
		sr->broken = true;
}

static bool check_region_slot(struct server_run *sr, uint32_t i)
{
	struct si_layout l;
	char why[SI_ERR_LEN];

	si_layout_remote(&l, sr->c.size, sr->c.var, i);
	if (si_slot_check(server_slot(sr, i), sr->stride, &l,
			  si_msg_key(sr->c.seed, sr->c.index, i), 0, NULL,
			  why, sizeof(why)))
		return true;
	sfail(sr, "msg %u: %s buffer: %s", i,
	      sr->c.op == SI_OP_RC_READ ? "read source" : "written", why);
	return false;
}

static void server_complete(struct server_run *sr, const struct ibv_wc *wc)
{
	const struct si_case *c = &sr->c;
	uint32_t i = sr->consumed;
	uint64_t key = si_msg_key(c->seed, c->index, i);
	bool ud = sr->op->qpt == IBV_QPT_UD;
	enum ibv_wc_opcode opc;
	uint8_t grh[SI_GRH_LEN];
	char why[SI_ERR_LEN];
	struct si_layout l;
	unsigned int flags, want;
	uint32_t ack_every;

	if (sr->consumed >= sr->expect) {
		sfail(sr, "unexpected completion: wr_id %llu, status %s, opcode %d, byte_len %u",
		      (unsigned long long)wc->wr_id,
		      ibv_wc_status_str(wc->status), wc->opcode,
		      wc->byte_len);
		return;
	}
	if (wc->status != IBV_WC_SUCCESS) {
		sfail(sr, "msg %llu: receive completion status %s (%d), vendor_err 0x%x",
		      (unsigned long long)wc->wr_id,
		      ibv_wc_status_str(wc->status), wc->status,
		      wc->vendor_err);
		return;
	}
	if (wc->wr_id != i) {
		sfail(sr, "receive completion for wr_id %llu, expected wr_id %u",
		      (unsigned long long)wc->wr_id, i);
		return;
	}
	opc = c->op == SI_OP_RC_WRITE_IMM ? IBV_WC_RECV_RDMA_WITH_IMM :
					    IBV_WC_RECV;
	if (wc->opcode != opc) {
		sfail(sr, "msg %u: receive completion opcode %d, expected %d",
		      i, wc->opcode, opc);
		return;
	}
	if (wc->qp_num != sr->r.qp->qp_num) {
		sfail(sr, "msg %u: receive completion qp_num 0x%x, expected 0x%x",
		      i, wc->qp_num, sr->r.qp->qp_num);
		return;
	}
	if (wc->byte_len != sr->total) {
		sfail(sr, "msg %u: receive completion byte_len %u, expected %zu",
		      i, wc->byte_len, sr->total);
		return;
	}
	flags = wc->wc_flags & (IBV_WC_WITH_IMM | (ud ? IBV_WC_GRH : 0));
	want = (sr->op->imm ? IBV_WC_WITH_IMM : 0) | (ud ? IBV_WC_GRH : 0);
	if (flags != want) {
		sfail(sr, "msg %u: receive completion wc_flags 0x%x, expected 0x%x",
		      i, flags, want);
		return;
	}
	if (sr->op->imm && be32toh(wc->imm_data) != si_msg_imm(key)) {
		sfail(sr, "msg %u: immediate data 0x%08x, expected 0x%08x", i,
		      be32toh(wc->imm_data), si_msg_imm(key));
		return;
	}
	if (ud && wc->src_qp != sr->cqpn) {
		sfail(sr, "msg %u: receive completion src_qp 0x%x, expected 0x%x",
		      i, wc->src_qp, sr->cqpn);
		return;
	}
	if (c->op == SI_OP_RC_WRITE_IMM) {
		if (!check_region_slot(sr, i))
			return;
	} else {
		si_layout_local(&l, sr->total, c->var, i, true);
		if (!si_slot_check(server_slot(sr, i), sr->stride, &l, key,
				   ud ? SI_GRH_LEN : 0, grh, why,
				   sizeof(why))) {
			sfail(sr, "msg %u: data received: %s", i, why);
			return;
		}
		if (ud && !si_grh_check(grh, sr->cgid, sr->d->gid.raw, why,
					sizeof(why))) {
			sfail(sr, "msg %u: %s", i, why);
			return;
		}
	}
	sr->consumed++;
	if (sr->posted < c->count && server_post_recv(sr, sr->posted))
		return;
	ack_every = sr->ring / 2 ? sr->ring / 2 : 1;
	if (sr->flow &&
	    (sr->consumed % ack_every == 0 || sr->consumed == c->count))
		server_send_ack(sr);
}

static void server_final_check(struct server_run *sr)
{
	const struct si_case *c = &sr->c;
	uint64_t vals[SI_ATOMIC_SLOTS], a, b, o, got;
	uint8_t *slot;
	uint32_t i;
	size_t bad;

	if (write_target(sr)) {
		for (i = 0; i < c->count; i++)
			if (!check_region_slot(sr, i))
				return;
		return;
	}
	if (!sr->op->atomic)
		return;
	si_atomic_init(c, vals);
	for (i = 0; i < c->count; i++)
		si_atomic_step(c, vals, i, &a, &b, &o);
	for (i = 0; i < SI_ATOMIC_SLOTS; i++) {
		slot = sr->r.buf + i * SI_ATOMIC_STRIDE;
		memcpy(&got, slot + SI_ATOMIC_OFF, 8);
		if (got != vals[i]) {
			sfail(sr, "atomic target %u (offset %u): final value 0x%016llx, expected 0x%016llx",
			      i, i * SI_ATOMIC_STRIDE + SI_ATOMIC_OFF,
			      (unsigned long long)got,
			      (unsigned long long)vals[i]);
			return;
		}
		if (!atomic_guard_check(slot, SI_ATOMIC_STRIDE, &bad)) {
			sfail(sr, "atomic target %u: guard byte at offset %zu: expected 0x%02x, got 0x%02x",
			      i, i * SI_ATOMIC_STRIDE + bad, SI_CANARY,
			      slot[bad]);
			return;
		}
	}
}

static void server_send_result(struct server_run *sr)
{
	struct si_msg m;

	memset(&m, 0, sizeof(m));
	m.type = SI_MSG_RESULT;
	m.v[SI_RESULT_FAILED] = sr->failed;
	if (sr->failed)
		snprintf(m.text, sizeof(m.text), "%s", sr->err);
	if (si_ctl_send(sr->fd, &m))
		sr->broken = true;
	sr->reported = true;
}

static void server_ctl(struct server_run *sr)
{
	struct si_msg m;

	if (si_ctl_recv(sr->fd, &m, si_now() + sr->o->timeout) ||
	    m.type != SI_MSG_END) {
		sr->broken = true;
		return;
	}
	sr->end = true;
	sr->aborted = m.v[SI_END_ABORT];
}

static void server_run(struct server_run *sr)
{
	double deadline = si_now() + sr->o->timeout;
	double hard = deadline + sr->o->timeout;
	struct ibv_wc wc[SI_POLL_BATCH];
	int n, i, ev;
	bool idle;

	while (!sr->broken) {
		idle = sr->failed || sr->consumed >= sr->expect;
		if (sr->end && (idle || sr->aborted))
			break;
		n = ibv_poll_cq(sr->r.cq, SI_POLL_BATCH, wc);
		if (n < 0) {
			sfail(sr, "ibv_poll_cq failed");
			n = 0;
		}
		for (i = 0; i < n; i++)
			if (!sr->failed)
				server_complete(sr, &wc[i]);
		if (sr->failed && !sr->reported)
			server_send_result(sr);
		if (n > 0)
			continue;
		ev = si_wait(&sr->r, sr->fd, idle ? hard : deadline);
		if (ev < 0) {
			sfail(sr, "waiting for completions: %s",
			      strerror(errno));
		} else if (ev == 0) {
			if (idle) {
				si_vlog(0, "case %u: the client never ended the case",
					sr->c.index);
				sr->broken = true;
			} else {
				sfail(sr, "timeout after %u s: received %u of %u messages",
				      sr->o->timeout, sr->consumed,
				      sr->expect);
			}
		} else if (ev & SI_EV_FD) {
			server_ctl(sr);
		}
	}
}

static int server_setup(struct server_run *sr)
{
	const struct si_case *c = &sr->c;
	const struct si_op_info *op = sr->op;
	struct si_layout l;
	size_t buflen;
	char why[SI_ERR_LEN];
	uint32_t i;

	sr->flow = op->qpt != IBV_QPT_RC && op->recv;
	sr->expect = op->recv ? c->count : 0;
	sr->ring = op->recv ? min_u32(c->count, sr->flow ? SI_FLOW_RING :
							   SI_MAX_RING) : 1;
	if (op->atomic) {
		sr->stride = SI_ATOMIC_STRIDE;
		buflen = SI_ATOMIC_SLOTS * SI_ATOMIC_STRIDE;
	} else if (write_target(sr)) {
		sr->total = c->size;
		sr->stride = si_stride(c->size);
		buflen = c->count * sr->stride;
	} else {
		sr->total = c->size + (op->qpt == IBV_QPT_UD ? SI_GRH_LEN : 0);
		sr->stride = si_stride(sr->total);
		buflen = sr->ring * sr->stride;
	}
	if (buflen > SI_MAX_REGION) {
		sfail(sr, "setup: %zu bytes of buffer are too many", buflen);
		return -1;
	}
	if (si_res_create(sr->d, &sr->r, op->qpt, 1, sr->ring, buflen, why,
			  sizeof(why))) {
		sfail(sr, "setup: %s", why);
		return -1;
	}
	if (c->op == SI_OP_RC_READ) {
		for (i = 0; i < c->count; i++) {
			si_layout_remote(&l, c->size, c->var, i);
			si_slot_fill(server_slot(sr, i), sr->stride, &l,
				     si_msg_key(c->seed, c->index, i));
		}
	} else if (op->atomic) {
		uint64_t vals[SI_ATOMIC_SLOTS];

		si_atomic_init(c, vals);
		for (i = 0; i < SI_ATOMIC_SLOTS; i++)
			memcpy(sr->r.buf + i * SI_ATOMIC_STRIDE + SI_ATOMIC_OFF,
			       &vals[i], 8);
	}
	if (op->recv)
		for (i = 0; i < sr->ring; i++)
			if (server_post_recv(sr, i))
				return -1;
	if (si_res_connect(sr->d, &sr->r, sr->cqpn, sr->cgid, c->spsn,
			   c->cpsn, c->mtu, why, sizeof(why))) {
		sfail(sr, "setup: %s", why);
		return -1;
	}
	return 0;
}

static bool case_valid(const struct si_msg *m)
{
	return m->v[SI_CASE_OP] < SI_OP_COUNT &&
	       m->v[SI_CASE_VAR] < SI_V_COUNT &&
	       m->v[SI_CASE_COUNT] >= 1 && m->v[SI_CASE_COUNT] <= UINT32_MAX &&
	       m->v[SI_CASE_SIZE] <= (1u << 30) &&
	       m->v[SI_CASE_MTU] >= IBV_MTU_256 &&
	       m->v[SI_CASE_MTU] <= IBV_MTU_4096;
}

/* 0: passed, 1: failed, -1: the session is broken */
static int server_case(struct si_dev *d, const struct si_opts *o, int fd,
		       const struct si_msg *cm)
{
	struct server_run *sr;
	struct si_msg m;
	int rc;

	sr = calloc(1, sizeof(*sr));
	if (!sr)
		return -1;
	sr->d = d;
	sr->o = o;
	sr->fd = fd;
	sr->c.index = cm->v[SI_CASE_INDEX];
	sr->c.op = cm->v[SI_CASE_OP];
	sr->c.var = cm->v[SI_CASE_VAR];
	sr->c.size = cm->v[SI_CASE_SIZE];
	sr->c.count = cm->v[SI_CASE_COUNT];
	sr->c.seed = cm->v[SI_CASE_SEED];
	sr->c.mtu = cm->v[SI_CASE_MTU];
	sr->c.cpsn = cm->v[SI_CASE_CPSN];
	sr->c.spsn = cm->v[SI_CASE_SPSN];
	sr->cqpn = cm->v[SI_CASE_QPN];
	memcpy(sr->cgid, cm->gid, 16);
	sr->op = &si_ops[sr->c.op];

	memset(&m, 0, sizeof(m));
	m.type = SI_MSG_REPLY;
	if (!case_valid(cm)) {
		sfail(sr, "invalid case description");
	} else if (!server_setup(sr)) {
		m.v[SI_REPLY_QPN] = sr->r.qp->qp_num;
		m.v[SI_REPLY_RKEY] = sr->r.mr->rkey;
		m.v[SI_REPLY_ADDR] = (uintptr_t)sr->r.buf;
		m.v[SI_REPLY_LEN] = sr->r.buflen;
		m.v[SI_REPLY_RING] = sr->ring;
		memcpy(m.gid, d->gid.raw, 16);
	}
	m.v[SI_REPLY_STATUS] = sr->failed;
	if (sr->failed)
		snprintf(m.text, sizeof(m.text), "%s", sr->err);
	if (si_ctl_send(fd, &m)) {
		sr->broken = true;
		goto out;
	}
	if (sr->failed)
		goto out;

	server_run(sr);
	if (!sr->broken && !sr->failed && !sr->aborted)
		server_final_check(sr);
	if (!sr->broken && !sr->reported)
		server_send_result(sr);
	si_vlog(2, "case %u: server received %u of %u, %s", sr->c.index,
		sr->consumed, sr->expect,
		sr->failed ? "failed" : sr->aborted ? "aborted by the client" :
		"passed");
out:
	si_res_destroy(&sr->r);
	rc = sr->broken ? -1 : sr->failed ? 1 : 0;
	free(sr);
	return rc;
}

int si_server_session(struct si_dev *d, const struct si_opts *o, int fd)
{
	unsigned int cases = 0, failed = 0;
	struct si_msg m;
	int rc;

	for (;;) {
		rc = si_ctl_recv(fd, &m, si_now() + o->wait);
		if (rc) {
			si_vlog(0, "%s", rc == -2 ?
				"the client went quiet" :
				"the client closed the connection");
			return 1;
		}
		switch (m.type) {
		case SI_MSG_CASE:
			cases++;
			rc = server_case(d, o, fd, &m);
			if (rc < 0) {
				si_vlog(0, "control connection lost in case %u",
					cases);
				return 1;
			}
			failed += rc;
			break;
		case SI_MSG_QUIT:
			si_vlog(1, "%u cases, %u failed here, %llu failed in all",
				cases, failed,
				(unsigned long long)m.v[SI_QUIT_FAILED]);
			return failed || m.v[SI_QUIT_FAILED] ? 1 : 0;
		default:
			si_vlog(0, "unexpected control message %u", m.type);
			return 1;
		}
	}
}
