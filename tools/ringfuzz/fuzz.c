// SPDX-License-Identifier: GPL-2.0
/*
 * sroce-ringfuzz ring: garbage in the rings the process shares with the
 * driver.
 *
 * First, a table of malformed WQEs, each on fresh QPs: send WQEs with
 * out-of-range num_sge, inline lengths, opcodes, keys, addresses and
 * address handles; receive and SRQ WQEs the next SEND cannot use; CQ
 * headers and indices scribbled over while completions arrive. Each bad
 * WQE must complete with an error status or raise an async event. A send
 * queue's producer index moved back behind WQEs already taken must not
 * make the requester take them again.
 *
 * Then chaos for -n iterations (default 2000): a fuzzing thread writes
 * random WQE bytes and wild indices into the SQ, RQ, SRQ and CQ rings of
 * a few QP sets and rings doorbells, while other threads post and poll
 * valid work on the same sets, resize their CQs and destroy and recreate
 * them. Every WQE the fuzzer wrote carries a wr_id tag and an opcode or
 * SGE list no transport accepts: none may complete with SUCCESS.
 *
 * Meanwhile a second process (forked before anything is opened) keeps an
 * RC QP pair moving SENDs, WRITEs and READs whose payload it checks.
 *
 * librxe reads the indices and the header from the ring and trusts them:
 * every scribble happens under the set's lock, which every librxe call on
 * the set also holds, and is undone before the lock is dropped. The
 * doorbell after a scribble is the raw POST_SEND command, so that the
 * kernel, and only the kernel, sees the wild values.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ringfuzz.h"

#define FUZZ_DEFAULT	2000
#define NSET		3
#define BAD_TAG		0xbad0000000000000ull
#define TAG_MASK	0xfff0000000000000ull
#define MSG		64
#define WAIT_MS		10000

/* ------------------------------------------------------------------ */
/* Async events, read by a thread of their own. */

static struct {
	pthread_mutex_t	lock;
	uint32_t	qpn[256];	/* QPs that got a fatal or error event */
	unsigned int	nqpn, cq_err, srq_err, other;
	volatile bool	stop;
} ev = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void *event_reader(void *arg)
{
	struct ibv_context *ctx = arg;
	struct ibv_async_event e;
	struct pollfd p = { .fd = ctx->async_fd, .events = POLLIN };

	while (!ev.stop) {
		if (poll(&p, 1, 200) <= 0 || ibv_get_async_event(ctx, &e))
			continue;
		pthread_mutex_lock(&ev.lock);
		switch (e.event_type) {
		case IBV_EVENT_QP_FATAL:
		case IBV_EVENT_QP_REQ_ERR:
		case IBV_EVENT_QP_ACCESS_ERR:
			if (ev.nqpn < 256)
				ev.qpn[ev.nqpn++] = e.element.qp->qp_num;
			break;
		case IBV_EVENT_CQ_ERR:
			ev.cq_err++;
			break;
		case IBV_EVENT_SRQ_ERR:
			ev.srq_err++;
			break;
		default:
			ev.other++;
		}
		pthread_mutex_unlock(&ev.lock);
		ibv_ack_async_event(&e);
	}
	return NULL;
}

static bool qp_had_event(uint32_t qpn)
{
	bool found = false;
	unsigned int i;

	pthread_mutex_lock(&ev.lock);
	for (i = 0; i < ev.nqpn; i++)
		found |= ev.qpn[i] == qpn;
	pthread_mutex_unlock(&ev.lock);
	return found;
}

/* ------------------------------------------------------------------ */
/* A set: an RC pair a -> b (b on an SRQ), a UD QP u, one CQ. */

struct set {
	pthread_mutex_t	lock;
	struct rf_dev	*d;
	struct ibv_cq	*cq;
	struct ibv_srq	*srq;
	struct rf_qp	a, b, u;
	struct ibv_ah	*ah;
	struct ibv_mr	*mr;
	struct rf_ring	cq_ring, a_rq, srq_ring;
	bool		up;
};

static void put32(uint8_t *s, unsigned int off, uint32_t v)
{
	memcpy(s + off, &v, 4);
}

static void put64(uint8_t *s, unsigned int off, uint64_t v)
{
	memcpy(s + off, &v, 8);
}

/* The one ring among those @create added. */
static int one_new_ring(const uintptr_t *before, int nb, struct rf_ring *r)
{
	struct rf_ring found[4];

	return rf_maps_new(before, nb, found, 4) == 1 ? (*r = found[0], 0) : -1;
}

static int set_rings_qp(struct set *s, struct rf_qp *q, enum ibv_qp_type t,
			struct ibv_srq *srq, struct rf_ring *rq)
{
	struct ibv_qp_init_attr attr = {
		.send_cq = s->cq, .recv_cq = s->cq, .srq = srq, .qp_type = t,
		.cap = {
			.max_send_wr = 32, .max_recv_wr = srq ? 0 : 32,
			.max_send_sge = 2, .max_recv_sge = 2,
			.max_inline_data = 64,
		},
	};
	struct rf_ring found[4];
	uintptr_t before[256];
	int nb, n, i;

	memset(q, 0, sizeof(*q));
	nb = rf_maps_snapshot(before, NULL, 256);
	q->qp = ibv_create_qp(s->d->pd, &attr);
	if (!q->qp)
		return -1;
	n = rf_maps_new(before, nb, found, 4);
	for (i = 0; i < n; i++) {
		if (found[i].log2 >= 8) {
			q->sq = found[i];
			q->has_sq = true;
		} else if (rq) {
			*rq = found[i];
		}
	}
	return q->has_sq ? 0 : -1;
}

static void set_down(struct set *s)
{
	rf_qp_destroy(&s->a);
	rf_qp_destroy(&s->b);
	rf_qp_destroy(&s->u);
	if (s->srq)
		ibv_destroy_srq(s->srq);
	if (s->ah)
		ibv_destroy_ah(s->ah);
	if (s->cq)
		ibv_destroy_cq(s->cq);
	rf_mr_free(s->mr);
	s->srq = NULL;
	s->ah = NULL;
	s->cq = NULL;
	s->mr = NULL;
	s->up = false;
}

static int set_up(struct set *s, struct rf_dev *d)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 64, .max_sge = 2 } };
	uintptr_t before[256];
	int nb, err = -1;

	s->d = d;
	rf_maps_lock();
	nb = rf_maps_snapshot(before, NULL, 256);
	s->cq = rf_cq(d, 256);
	if (!s->cq || one_new_ring(before, nb, &s->cq_ring))
		goto out;
	nb = rf_maps_snapshot(before, NULL, 256);
	s->srq = ibv_create_srq(d->pd, &sa);
	if (!s->srq || one_new_ring(before, nb, &s->srq_ring))
		goto out;
	if (set_rings_qp(s, &s->a, IBV_QPT_RC, NULL, &s->a_rq) ||
	    set_rings_qp(s, &s->b, IBV_QPT_RC, s->srq, NULL) ||
	    set_rings_qp(s, &s->u, IBV_QPT_UD, NULL, NULL))
		goto out;
	err = 0;
out:
	rf_maps_unlock();
	if (!err) {
		s->ah = rf_ah(d, &d->gid);
		s->mr = rf_mr(d, 16384, IBV_ACCESS_LOCAL_WRITE |
			      IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			      IBV_ACCESS_REMOTE_ATOMIC);
		if (!s->ah || !s->mr ||
		    rf_qp_connect(d, s->a.qp, s->b.qp->qp_num) ||
		    rf_qp_connect(d, s->b.qp, s->a.qp->qp_num) ||
		    rf_qp_connect(d, s->u.qp, 0))
			err = -1;
	}
	if (err)
		set_down(s);
	s->up = !err;
	return err;
}

/* The ah_num librxe writes for the set's AH: post a UD SEND and look. */
static uint32_t set_ah_num(struct set *s)
{
	uint32_t prod = rf_ring_get(&s->u.sq, RF_Q_PROD), ah_num = 0;
	struct ibv_sge sge = { (uintptr_t)s->mr->addr, MSG, s->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 1, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
		.wr.ud = { s->ah, s->u.qp->qp_num, RF_QKEY },
	}, *bad;
	struct ibv_wc wc;

	if (ibv_post_send(s->u.qp, &wr, &bad))
		return 0;
	memcpy(&ah_num, rf_ring_slot(&s->u.sq, prod) + RF_WQE_UD_AH, 4);
	rf_poll(s->cq, &wc, 1, WAIT_MS);
	return ah_num;
}

/* A valid SEND from a to b, for b's SRQ (or a's RQ, from b) to consume. */
static int send_valid(struct set *s, struct ibv_qp *from, uint64_t wr_id)
{
	struct ibv_sge sge = { (uintptr_t)s->mr->addr, MSG, s->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	if (from->qp_type == IBV_QPT_UD) {
		wr.wr.ud.ah = s->ah;
		wr.wr.ud.remote_qpn = from->qp_num;
		wr.wr.ud.remote_qkey = RF_QKEY;
	}
	return ibv_post_send(from, &wr, &bad);
}

static int post_recv_srq(struct set *s, unsigned int k)
{
	struct ibv_sge sge = {
		(uintptr_t)s->mr->addr + 4096 + k * 1024, 1024, s->mr->lkey
	};
	struct ibv_recv_wr wr = { .wr_id = 1000 + k, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	return ibv_post_srq_recv(s->srq, &wr, &bad);
}

static int post_recv_qp(struct set *s, struct ibv_qp *qp, unsigned int k)
{
	struct ibv_sge sge = {
		(uintptr_t)s->mr->addr + 4096 + k * 1024, 1024, s->mr->lkey
	};
	struct ibv_recv_wr wr = { .wr_id = 2000 + k, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	return ibv_post_recv(qp, &wr, &bad);
}

/* ------------------------------------------------------------------ */
/* The table of malformed WQEs. */

struct bad_sq {
	const char	*name;
	enum ibv_qp_type type;
	uint32_t	opcode, flags, num_sge, length;
	uint64_t	addr;		/* SGE address; 0: the MR's */
	uint32_t	lkey;		/* 0: the MR's */
	uint32_t	sge_len;
	uint32_t	ah;		/* UD: 1 = librxe's, else this value */
	uint32_t	rkey;		/* 0: the MR's */
	uint64_t	raddr_off;
};

/* num_sge: one more than the queue was created with. */
#define ONE_PAST	0xfffe

#define S IBV_SEND_SIGNALED
#define RC(n, op, fl) .name = n, .type = IBV_QPT_RC, .opcode = op, .flags = fl
#define UD(n, op) .name = n, .type = IBV_QPT_UD, .opcode = op, .flags = S
static const struct bad_sq bad_sq[] = {
	{ RC("RC num_sge one past the QP's", IBV_WR_SEND, S), .num_sge = ONE_PAST, .length = MSG },
	{ RC("RC num_sge 0xffffffff", IBV_WR_SEND, S), .num_sge = 0xffffffff, .length = MSG },
	{ RC("RC inline length 0xffffffff", IBV_WR_SEND, S | IBV_SEND_INLINE), .length = 0xffffffff },
	{ RC("RC inline length 64 KiB", IBV_WR_SEND, S | IBV_SEND_INLINE), .length = 0x10001 },
	{ RC("RC inline READ", IBV_WR_RDMA_READ, S | IBV_SEND_INLINE), .length = 8 },
	{ RC("RC opcode 0x20 (kernel REG_MR)", 0x20, S), .num_sge = 1, .length = MSG },
	{ RC("RC opcode 0xff", 0xff, S), .num_sge = 1, .length = MSG },
	{ RC("RC opcode 0xffffffff", 0xffffffff, S), .num_sge = 1, .length = MSG },
	{ RC("RC SGE with a foreign lkey", IBV_WR_SEND, S), .num_sge = 1, .length = MSG, .lkey = 0xdeadbe01 },
	{ RC("RC SGE outside its region", IBV_WR_SEND, S), .num_sge = 1, .length = MSG, .addr = 0x1000 },
	{ RC("RC SGE length 0xffffffff", IBV_WR_SEND, S), .num_sge = 1, .length = MSG, .sge_len = 0xffffffff },
	{ RC("RC two SGEs summing past 4 GiB", IBV_WR_SEND, S), .num_sge = 2, .sge_len = 0x80000000 },
	{ RC("RC misaligned CMP_AND_SWP", IBV_WR_ATOMIC_CMP_AND_SWP, S), .num_sge = 1, .length = 8, .sge_len = 8, .raddr_off = 3 },
	{ RC("RC WRITE with a foreign rkey", IBV_WR_RDMA_WRITE, S), .num_sge = 1, .length = MSG, .rkey = 0xdeadbe01 },
	{ RC("RC WRITE past the region", IBV_WR_RDMA_WRITE, S), .num_sge = 1, .length = MSG, .raddr_off = 16384 - 8 },
	{ UD("UD ah_num 0", IBV_WR_SEND), .num_sge = 1, .length = MSG, .ah = 0 },
	{ UD("UD ah_num 0xffffffff", IBV_WR_SEND), .num_sge = 1, .length = MSG, .ah = 0xffffffff },
	{ UD("UD ah_num one past librxe's", IBV_WR_SEND), .num_sge = 1, .length = MSG, .ah = 2 },
	{ UD("UD opcode RDMA_WRITE", IBV_WR_RDMA_WRITE), .num_sge = 1, .length = MSG, .ah = 1 },
};
#undef RC
#undef UD
#undef S

/* The SGE limit the kernel gave a queue: the SRQ's when @qp is NULL. */
static uint32_t max_sge(struct set *s, struct ibv_qp *qp, bool recv)
{
	struct ibv_qp_init_attr init;
	struct ibv_srq_attr sa;
	struct ibv_qp_attr a;

	if (!qp)
		return ibv_query_srq(s->srq, &sa) ? 2 : sa.max_sge;
	if (ibv_query_qp(qp, &a, IBV_QP_CAP, &init))
		return 2;
	return recv ? init.cap.max_recv_sge : init.cap.max_send_sge;
}

static void fill_bad_sq(struct set *s, uint8_t *w, const struct bad_sq *c,
			uint64_t wr_id, uint32_t ah_num)
{
	uint64_t addr = c->addr ? c->addr : (uintptr_t)s->mr->addr;
	uint32_t lkey = c->lkey ? c->lkey : s->mr->lkey;
	uint32_t sge_len = c->sge_len ? c->sge_len : MSG, i, n;

	put64(w, RF_WQE_WR_ID, wr_id);
	put32(w, RF_WQE_OPCODE, c->opcode);
	put32(w, RF_WQE_FLAGS, c->flags);
	if (c->type == IBV_QPT_UD) {
		put32(w, RF_WQE_UD_QPN, s->u.qp->qp_num);
		put32(w, RF_WQE_UD_QKEY, RF_QKEY);
		put32(w, RF_WQE_UD_AH, c->ah == 1 ? ah_num :
		      c->ah == 2 ? ah_num + 1 : c->ah);
	} else {
		put64(w, RF_WQE_RADDR, (uintptr_t)s->mr->addr + 8192 + c->raddr_off);
		put32(w, c->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ? 48 : RF_WQE_RKEY,
		      c->rkey ? c->rkey : s->mr->rkey);
	}
	put32(w, RF_WQE_DMA, c->length);
	put32(w, RF_WQE_DMA + 4, c->length);
	put32(w, RF_WQE_DMA_NUM_SGE, c->num_sge == ONE_PAST ?
	      max_sge(s, c->type == IBV_QPT_UD ? s->u.qp : s->a.qp, false) + 1 :
	      c->num_sge);
	n = c->num_sge < 2 ? c->num_sge : 2;
	for (i = 0; i < n; i++) {
		put64(w, RF_WQE_DATA + 16 * i, addr);
		put32(w, RF_WQE_DATA + 16 * i + 8, sge_len);
		put32(w, RF_WQE_DATA + 16 * i + 12, lkey);
	}
}

/*
 * Wait for @wr_id on the set's CQ: an error status passes; SUCCESS or
 * silence fails unless @qpn got an async error event.
 */
static void expect_error(struct set *s, uint64_t wr_id, uint32_t qpn,
			 const char *what)
{
	uint64_t end = rf_now_ms() + (uint64_t)WAIT_MS * rf_slow;
	struct ibv_wc wc;

	while (rf_now_ms() < end) {
		if (rf_poll(s->cq, &wc, 1, 200) != 1)
			continue;
		if (wc.wr_id != wr_id)
			continue;
		rf_ok(wc.status != IBV_WC_SUCCESS, "ring: %s: %s", what,
		      rf_status(wc.status));
		return;
	}
	rf_ok(qp_had_event(qpn), "ring: %s: %s", what, qp_had_event(qpn) ?
	      "no completion, but an async error event on the QP" :
	      "neither a completion nor an async event");
}

static void table_sq(struct rf_dev *d)
{
	unsigned int i;

	for (i = 0; i < sizeof(bad_sq) / sizeof(bad_sq[0]); i++) {
		const struct bad_sq *c = &bad_sq[i];
		struct set s = {};
		struct rf_qp *q;
		uint32_t ah_num = 0;
		uint8_t *w;

		if (set_up(&s, d)) {
			rf_ok(false, "ring: %s: setup: %s", c->name, strerror(errno));
			continue;
		}
		q = c->type == IBV_QPT_UD ? &s.u : &s.a;
		if (c->type == IBV_QPT_UD)
			ah_num = set_ah_num(&s);
		w = rf_sq_next(&q->sq);
		fill_bad_sq(&s, w, c, BAD_TAG | i, ah_num);
		rf_sq_publish(&q->sq);
		rf_doorbell(q->qp);
		expect_error(&s, BAD_TAG | i, q->qp->qp_num, c->name);
		set_down(&s);
	}
}

/* Receive WQEs the next 64-byte SEND cannot use, in the RQ or the SRQ. */
struct bad_rq {
	const char	*name;
	uint32_t	num_sge, lkey, len;
};

static const struct bad_rq bad_rq[] = {
	{ "num_sge 0xffffffff", 0xffffffff, 0, 1024 },
	{ "num_sge one past the queue's", ONE_PAST, 0, 1024 },
	{ "SGE with a foreign lkey", 1, 0xdeadbe01, 1024 },
	{ "SGE too short for the message", 1, 0, 8 },
};

static void write_bad_rq(struct set *s, struct rf_ring *r,
			 const struct bad_rq *c, uint64_t wr_id)
{
	uint32_t prod = rf_ring_get(r, RF_Q_PROD) & r->mask;
	uint8_t *w = rf_ring_slot(r, prod);
	unsigned int i;

	memset(w, 0, 1u << r->log2);
	put64(w, RF_RWQE_WR_ID, wr_id);
	put32(w, RF_RWQE_DMA, c->len);
	put32(w, RF_RWQE_DMA + 4, c->len);
	put32(w, RF_RWQE_DMA_NUM_SGE, c->num_sge != ONE_PAST ? c->num_sge :
	      r == &s->srq_ring ? max_sge(s, NULL, true) + 1 :
				  max_sge(s, s->a.qp, true) + 1);
	for (i = 0; i < 2 && 40 + 16 * (i + 1) <= (1u << r->log2); i++) {
		put64(w, RF_RWQE_SGE + 16 * i, (uintptr_t)s->mr->addr + 4096);
		put32(w, RF_RWQE_SGE + 16 * i + 8, c->len);
		put32(w, RF_RWQE_SGE + 16 * i + 12, c->lkey ? c->lkey : s->mr->lkey);
	}
	rf_ring_set(r, RF_Q_PROD, (prod + 1) & r->mask);
}

static void table_rq(struct rf_dev *d)
{
	char name[96];
	unsigned int i, srq;

	for (srq = 0; srq < 2; srq++) {
		for (i = 0; i < sizeof(bad_rq) / sizeof(bad_rq[0]); i++) {
			struct set s = {};

			snprintf(name, sizeof(name), "%s WQE %s",
				 srq ? "SRQ" : "RQ", bad_rq[i].name);
			if (set_up(&s, d)) {
				rf_ok(false, "ring: %s: setup", name);
				continue;
			}
			/* RQ: a's, filled by a SEND from b; SRQ: b's. */
			write_bad_rq(&s, srq ? &s.srq_ring : &s.a_rq,
				     &bad_rq[i], BAD_TAG | i);
			send_valid(&s, srq ? s.a.qp : s.b.qp, 1);
			expect_error(&s, BAD_TAG | i,
				     srq ? s.b.qp->qp_num : s.a.qp->qp_num, name);
			set_down(&s);
		}
	}
}

/*
 * The CQ's header and indices scribbled over while completions arrive:
 * the kernel keeps its own copies, so once the values are put back the
 * CQ holds exactly the completions of what was posted.
 */
static void table_cq(struct rf_dev *d)
{
	static const struct { const char *name; unsigned int off; uint32_t v; } c[] = {
		{ "log2_elem_size 31", RF_Q_LOG2, 31 },
		{ "index_mask 0xffffffff", RF_Q_MASK, 0xffffffff },
		{ "producer index 0xfffffff0", RF_Q_PROD, 0xfffffff0 },
		{ "consumer index 0x7fffffff", RF_Q_CONS, 0x7fffffff },
	};
	struct ibv_wc wc[8];
	unsigned int i, k;
	uint32_t saved;
	int n;

	for (i = 0; i < 4; i++) {
		struct set s = {};
		char why[96] = "";

		if (set_up(&s, d)) {
			rf_ok(false, "ring: CQ %s: setup", c[i].name);
			continue;
		}
		for (k = 0; k < 4; k++)
			post_recv_srq(&s, k);
		saved = rf_ring_get(&s.cq_ring, c[i].off);
		rf_ring_set(&s.cq_ring, c[i].off, c[i].v);
		for (k = 0; k < 4; k++)
			send_valid(&s, s.a.qp, 10 + k);
		rf_msleep(300 * rf_slow);
		if (c[i].off == RF_Q_CONS)
			/* A consumer wherever the kernel read it: start over empty. */
			saved = rf_ring_get(&s.cq_ring, RF_Q_PROD) & s.cq_ring.mask;
		if (c[i].off != RF_Q_PROD || rf_ring_get(&s.cq_ring, RF_Q_PROD) == c[i].v)
			rf_ring_set(&s.cq_ring, c[i].off, saved);
		n = rf_poll(s.cq, wc, 8, c[i].off == RF_Q_CONS ? 200 : 2000);
		if (c[i].off != RF_Q_CONS && n != 8)
			snprintf(why, sizeof(why), "%d of 8 completions", n);
		for (k = 0; k < (unsigned int)n && !why[0]; k++)
			if (wc[k].status != IBV_WC_SUCCESS)
				snprintf(why, sizeof(why), "wr_id %llu: %s",
					 (unsigned long long)wc[k].wr_id,
					 rf_status(wc[k].status));
		rf_ok(!why[0], "ring: CQ %s while completions arrive, then put back: %s",
		      c[i].name, why[0] ? why : "completions intact");
		set_down(&s);
	}
}

/*
 * The send queue's producer index moved back between WQEs the requester
 * has sent and not yet seen acknowledged, and the doorbell rung: it must
 * not go round the ring and take them, and the slots before them, again.
 * The peer QP is in ERR, so the two SENDs wait for ACKs that never come
 * until their retries run out: then exactly they complete, in error.
 */
static void backward_producer(struct rf_dev *d)
{
	struct ibv_qp_attr err = { .qp_state = IBV_QPS_ERR }, attr = {};
	struct ibv_qp_init_attr init;
	struct ibv_wc wc[16];
	struct set s = {};
	char why[96] = "";
	uint32_t prod, psn;
	unsigned int k;
	int n;

	if (set_up(&s, d)) {
		rf_ok(false, "ring: SQ producer moved back: setup");
		return;
	}
	if (ibv_modify_qp(s.b.qp, &err, IBV_QP_STATE))
		snprintf(why, sizeof(why), "peer to ERR: %s", strerror(errno));
	for (k = 0; k < 2 && !why[0]; k++)
		if (send_valid(&s, s.a.qp, 20 + k))
			snprintf(why, sizeof(why), "post: %s", strerror(errno));
	if (!why[0] && ibv_query_qp(s.a.qp, &attr, IBV_QP_SQ_PSN, &init))
		snprintf(why, sizeof(why), "ibv_query_qp: %s", strerror(errno));
	if (!why[0]) {
		psn = attr.sq_psn;
		prod = rf_ring_get(&s.a.sq, RF_Q_PROD);
		rf_ring_set(&s.a.sq, RF_Q_PROD, (prod - 1) & s.a.sq.mask);
		rf_doorbell(s.a.qp);
		rf_msleep(50 * rf_slow);
		rf_ring_set(&s.a.sq, RF_Q_PROD, prod);
		/* No new PSN: a go-back on a timeout may only have rewound. */
		if (ibv_query_qp(s.a.qp, &attr, IBV_QP_SQ_PSN, &init))
			snprintf(why, sizeof(why), "ibv_query_qp: %s",
				 strerror(errno));
		psn = (attr.sq_psn - psn) & 0xffffff;
		if (!why[0] && psn && psn < 0x800000)
			snprintf(why, sizeof(why), "%u more packets sent", psn);
		n = rf_poll(s.cq, wc, 16, 10000);
		if (n == 2)
			n += rf_poll(s.cq, wc + 2, 14, 500);
		if (!why[0] && n != 2)
			snprintf(why, sizeof(why), "%d completions, not 2", n);
		for (k = 0; k < (unsigned int)n && !why[0]; k++)
			if (wc[k].wr_id != 20 + k ||
			    wc[k].status == IBV_WC_SUCCESS)
				snprintf(why, sizeof(why), "completion %u: wr_id %llu, %s",
					 k, (unsigned long long)wc[k].wr_id,
					 rf_status(wc[k].status));
	}
	rf_ok(!why[0], "ring: SQ producer moved back between WQEs awaiting ACKs, doorbell rung: %s",
	      why[0] ? why : "no packet sent again, the two SENDs complete once each");
	set_down(&s);
}

/* ------------------------------------------------------------------ */
/* Chaos. */

#define CHAOS_TAG	(BAD_TAG | 1ull << 40)

static const uint32_t bad_opcodes[] = {
	10, 11, 12, 13, 16, 17, 20, 24, 31, 0x20, 0x21, 0xff, 0x10000,
	0xffffffff,
};

struct chaos {
	struct rf_dev	*d;
	struct set	set[NSET];
	unsigned int	iters;
	pthread_mutex_t	lock;		/* the counters */
	unsigned long	written, tagged_err, tagged_ok, wc_ok, wc_err;
	unsigned long	resized, recycled, mutations[6];
	char		first_bad[160];
};

struct chaos_thread {
	struct chaos	*c;
	int		id;
	uint64_t	rng;
};

/* Account for completions; a tagged one with SUCCESS is a failure. */
static void chaos_drain(struct chaos *c, struct set *s, unsigned int ms)
{
	struct ibv_wc wc[32];
	int n, i;

	if (!s->up)
		return;
	n = rf_poll(s->cq, wc, 32, ms);
	pthread_mutex_lock(&c->lock);
	for (i = 0; i < n; i++) {
		bool tagged = (wc[i].wr_id & TAG_MASK) == BAD_TAG;

		if (!tagged)
			wc[i].status == IBV_WC_SUCCESS ? c->wc_ok++ : c->wc_err++;
		else if (wc[i].status != IBV_WC_SUCCESS)
			c->tagged_err++;
		else if (!c->tagged_ok++)
			snprintf(c->first_bad, sizeof(c->first_bad),
				 "wr_id 0x%llx on QP 0x%x: SUCCESS, opcode %d",
				 (unsigned long long)wc[i].wr_id, wc[i].qp_num,
				 wc[i].opcode);
	}
	pthread_mutex_unlock(&c->lock);
}

static bool ring_has_room(struct rf_ring *r, uint32_t k)
{
	uint32_t used = (rf_ring_get(r, RF_Q_PROD) - rf_ring_get(r, RF_Q_CONS)) &
			r->mask;

	return used + k < r->mask;
}

/* Random bytes in @k send slots, each with an opcode nobody carries. */
static void mut_sq_garbage(struct chaos *c, struct rf_qp *q, uint64_t *rng,
			   uint32_t k)
{
	uint32_t prod, i, j;
	uint8_t *w;

	if (!ring_has_room(&q->sq, k))
		return;
	prod = rf_ring_get(&q->sq, RF_Q_PROD) & q->sq.mask;
	for (i = 0; i < k; i++) {
		w = rf_ring_slot(&q->sq, prod + i);
		for (j = 0; j < (1u << q->sq.log2); j += 8)
			put64(w, j, rf_rand(rng));
		put64(w, RF_WQE_WR_ID, CHAOS_TAG | (rf_rand(rng) & 0xffffffff));
		put32(w, RF_WQE_OPCODE, bad_opcodes[rf_rand(rng) %
			(sizeof(bad_opcodes) / sizeof(bad_opcodes[0]))]);
		/* Some look like the real thing apart from the opcode. */
		if (rf_rand(rng) & 1)
			memset(w + RF_WQE_FIXED - 64, 0, 64);
	}
	rf_ring_set(&q->sq, RF_Q_PROD, (prod + k) & q->sq.mask);
	rf_doorbell(q->qp);
	pthread_mutex_lock(&c->lock);
	c->written += k;
	pthread_mutex_unlock(&c->lock);
}

/* Random receive WQEs whose SGE list no message fits. */
static void mut_rq_garbage(struct chaos *c, struct set *s, struct rf_ring *r,
			   uint64_t *rng, uint32_t k)
{
	uint32_t prod, i, j;
	uint8_t *w;

	if (!ring_has_room(r, k))
		return;
	prod = rf_ring_get(r, RF_Q_PROD) & r->mask;
	for (i = 0; i < k; i++) {
		w = rf_ring_slot(r, prod + i);
		for (j = 0; j < (1u << r->log2); j += 8)
			put64(w, j, rf_rand(rng));
		put64(w, RF_RWQE_WR_ID, CHAOS_TAG | (rf_rand(rng) & 0xffffffff));
		if (rf_rand(rng) & 1) {
			put32(w, RF_RWQE_DMA_NUM_SGE, 3 + rf_rand(rng) % 0xffff);
		} else {
			put32(w, RF_RWQE_DMA_NUM_SGE, 1);
			put32(w, RF_RWQE_SGE + 12,
			      0xfff00000 | (rf_rand(rng) & 0xfffff));
		}
	}
	rf_ring_set(r, RF_Q_PROD, (prod + k) & r->mask);
	pthread_mutex_lock(&c->lock);
	c->written += k;
	pthread_mutex_unlock(&c->lock);
	send_valid(s, r == &s->srq_ring ? s->a.qp : s->b.qp, 3);
}

/*
 * A word of @r's header (@off) set to @v while the kernel works on the
 * ring, then put back: the producer and consumer indices to where the
 * ring is empty, the geometry to what it was.
 */
static void scribble(struct rf_ring *r, unsigned int off, uint32_t v,
		     struct ibv_qp *qp)
{
	uint32_t saved = rf_ring_get(r, off);

	rf_ring_set(r, off, v);
	if (qp)
		rf_doorbell(qp);
	rf_msleep(1);
	if (off == RF_Q_PROD && qp)	/* SQ/RQ/SRQ: the user's producer */
		saved = rf_ring_get(r, RF_Q_CONS) & r->mask;
	else if (off == RF_Q_CONS)	/* CQ: the user's consumer */
		saved = rf_ring_get(r, RF_Q_PROD) & r->mask;
	else if (off == RF_Q_PROD)	/* CQ: the kernel's; it rewrote it? */
		saved = rf_ring_get(r, off) == v ? saved : rf_ring_get(r, off);
	rf_ring_set(r, off, saved);
}

static void fuzz_once(struct chaos *c, struct set *s, uint64_t *rng)
{
	static const unsigned int offs[] = { RF_Q_LOG2, RF_Q_MASK, RF_Q_PROD };
	uint64_t r = rf_rand(rng);
	unsigned int m = r % 6;
	struct rf_ring *rq = (r >> 8) & 1 ? &s->srq_ring : &s->a_rq;
	struct rf_qp *q = (r >> 9) & 1 ? &s->u : &s->a;
	uint32_t v = rf_rand(rng);

	switch (m) {
	case 0:
		mut_sq_garbage(c, q, rng, 1 + (r >> 16) % 4);
		break;
	case 1:
		scribble(&q->sq, RF_Q_PROD, v, q->qp);
		break;
	case 2:
		mut_rq_garbage(c, s, rq, rng, 1 + (r >> 16) % 3);
		break;
	case 3:
		scribble(rq, RF_Q_PROD, v, NULL);
		send_valid(s, rq == &s->srq_ring ? s->a.qp : s->b.qp, 4);
		rf_msleep(1);
		rf_ring_set(rq, RF_Q_PROD, rf_ring_get(rq, RF_Q_CONS) & rq->mask);
		break;
	case 4:
		post_recv_srq(s, 0);
		rf_ring_set(&s->cq_ring, RF_Q_CONS, v);
		send_valid(s, s->a.qp, 5);
		scribble(&s->cq_ring, offs[(r >> 16) % 3], v >> 4, NULL);
		rf_ring_set(&s->cq_ring, RF_Q_CONS,
			    rf_ring_get(&s->cq_ring, RF_Q_PROD) & s->cq_ring.mask);
		break;
	default:
		scribble(&q->sq, offs[(r >> 16) % 2], v, q->qp);
		break;
	}
	pthread_mutex_lock(&c->lock);
	c->mutations[m]++;
	pthread_mutex_unlock(&c->lock);
}

/* Valid work on the set: SENDs both ways and a UD datagram to itself. */
static void post_once(struct chaos *c, struct set *s, uint64_t *rng)
{
	(void)rng;
	post_recv_srq(s, 1);
	post_recv_qp(s, s->a.qp, 2);
	post_recv_qp(s, s->u.qp, 3);
	send_valid(s, s->a.qp, 6);
	send_valid(s, s->b.qp, 7);
	send_valid(s, s->u.qp, 8);
	chaos_drain(c, s, 20);
}

static void resize_once(struct chaos *c, struct set *s, uint64_t *rng)
{
	struct rf_ring found[4];
	uintptr_t before[256], now[256];
	size_t len[256];
	int nb, n, i;

	chaos_drain(c, s, 0);
	rf_maps_lock();
	nb = rf_maps_snapshot(before, NULL, 256);
	if (ibv_resize_cq(s->cq, 32 + rf_rand(rng) % 480)) {
		rf_maps_unlock();
		return;
	}
	if (rf_maps_new(before, nb, found, 4) == 1) {
		s->cq_ring = found[0];
	} else {
		/* The new ring landed where the old one was. */
		n = rf_maps_snapshot(now, len, 256);
		for (i = 0; i < n; i++)
			if (now[i] == (uintptr_t)s->cq_ring.base)
				break;
		if (i == n || rf_ring_at(&s->cq_ring, now[i], len[i])) {
			/* Lost track of it: no scribble may hit a stale address. */
			rf_diag("chaos: CQ ring not found after a resize");
			set_down(s);
		}
	}
	rf_maps_unlock();
	pthread_mutex_lock(&c->lock);
	c->resized++;
	pthread_mutex_unlock(&c->lock);
}

static void recycle_once(struct chaos *c, struct set *s)
{
	chaos_drain(c, s, 0);
	/*
	 * A destroy unmaps rings: under the maps lock, lest a resize elsewhere
	 * take a ring mapped where one of these was for an old mapping.
	 */
	rf_maps_lock();
	set_down(s);
	rf_maps_unlock();
	if (!set_up(s, c->d)) {
		pthread_mutex_lock(&c->lock);
		c->recycled++;
		pthread_mutex_unlock(&c->lock);
	}
}

static void *chaos_run(void *arg)
{
	struct chaos_thread *t = arg;
	struct chaos *c = t->c;
	unsigned int i, n = t->id >= 2 ? c->iters / 20 + 1 : c->iters;
	struct set *s;

	for (i = 0; i < n; i++) {
		s = &c->set[rf_rand(&t->rng) % NSET];
		pthread_mutex_lock(&s->lock);
		if (!s->up && t->id != 3) {
			pthread_mutex_unlock(&s->lock);
			continue;
		}
		if (t->id == 0)
			fuzz_once(c, s, &t->rng);
		else if (t->id == 1)
			post_once(c, s, &t->rng);
		else if (t->id == 2)
			resize_once(c, s, &t->rng);
		else
			recycle_once(c, s);
		pthread_mutex_unlock(&s->lock);
		if (t->id >= 2)
			rf_msleep(5);
	}
	return NULL;
}

static void chaos(struct rf_dev *d)
{
	static const char *const mut[6] = {
		"SQ garbage", "SQ wild producer", "RQ/SRQ garbage",
		"RQ/SRQ wild producer", "CQ scribbles", "SQ geometry"
	};
	struct chaos_thread t[4];
	pthread_t th[4];
	struct chaos *c;
	int i, up = 0;

	c = calloc(1, sizeof(*c));
	if (!c)
		return;
	c->d = d;
	c->iters = rf_iters ? rf_iters : FUZZ_DEFAULT;
	pthread_mutex_init(&c->lock, NULL);
	for (i = 0; i < NSET; i++) {
		pthread_mutex_init(&c->set[i].lock, NULL);
		up += !set_up(&c->set[i], d);
	}
	rf_ok(up == NSET, "ring: chaos: %d QP sets set up", up);
	for (i = 0; i < 4; i++) {
		t[i] = (struct chaos_thread){ c, i, rf_seed * 7 + i };
		pthread_create(&th[i], NULL, chaos_run, &t[i]);
	}
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < NSET; i++) {
		chaos_drain(c, &c->set[i], 500);
		set_down(&c->set[i]);
	}
	for (i = 0; i < 6; i++)
		rf_diag("chaos: %lu x %s", c->mutations[i], mut[i]);
	rf_diag("chaos: %lu garbage WQEs written, %lu completed with an error; %lu CQ resizes, %lu recreations",
		c->written, c->tagged_err, c->resized, c->recycled);
	rf_diag("chaos: valid work: %lu completions SUCCESS, %lu errors (QPs in ERR)",
		c->wc_ok, c->wc_err);
	pthread_mutex_lock(&ev.lock);
	rf_diag("async events: %u QP errors, %u CQ errors, %u SRQ errors, %u others",
		ev.nqpn, ev.cq_err, ev.srq_err, ev.other);
	pthread_mutex_unlock(&ev.lock);
	rf_ok(!c->tagged_ok, "ring: chaos: %u iterations, no garbage WQE completed with SUCCESS%s%s",
	      c->iters, c->tagged_ok ? ": " : "", c->first_bad);
	rf_ok(c->tagged_err > 0, "ring: chaos: garbage WQEs completed with errors (%lu)",
	      c->tagged_err);
	free(c);
}

/* The well-behaved process's report: "MESSAGES ERROR WHY". */
static void traffic_report(int fd, pid_t pid)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char line[256] = "", why[200] = "no report";
	unsigned long long n = 0;
	int err = 1, st, got;

	if (poll(&p, 1, 120000 * rf_slow) > 0) {
		got = read(fd, line, sizeof(line) - 1);
		if (got > 0) {
			line[got] = 0;
			sscanf(line, "%llu %d %199[^\n]", &n, &err, why);
		}
	}
	waitpid(pid, &st, 0);
	rf_ok(!err && n > 0, "ring: a second process moved %llu checked SENDs, WRITEs and READs meanwhile%s%s",
	      n, err ? ": " : "", err ? why : "");
}

int rf_mode_ring(const char *dev, int gidx)
{
	int stop[2], rep[2];
	pthread_t evt;
	struct rf_dev d;
	pid_t pid;

	if (pipe(stop) || pipe(rep))
		return 2;
	pid = fork();
	if (pid < 0)
		return 2;
	if (!pid) {
		close(stop[1]);
		close(rep[0]);
		_exit(rf_mode_traffic(dev, gidx, stop[0], rep[1]));
	}
	close(stop[0]);
	close(rep[1]);
	if (rf_dev_open(&d, dev, gidx)) {
		close(stop[1]);
		waitpid(pid, NULL, 0);
		return 2;
	}
	pthread_create(&evt, NULL, event_reader, d.ctx);
	table_sq(&d);
	table_rq(&d);
	table_cq(&d);
	backward_producer(&d);
	chaos(&d);
	ev.stop = true;
	pthread_join(evt, NULL);
	close(stop[1]);
	traffic_report(rep[0], pid);
	rf_dev_close(&d);
	return rf_done();
}
