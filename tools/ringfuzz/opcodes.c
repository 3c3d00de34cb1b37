// SPDX-License-Identifier: GPL-2.0
/*
 * sroce-ringfuzz opcodes: every send opcode value 0..31 on every QP type.
 *
 * For each (QP type, opcode) a fresh pair of QPs of the device's own GID:
 * QP a posts one WQE with the opcode to QP b. An opcode the transport
 * carries must complete with SUCCESS and its effect is checked where it
 * lands (payload, immediate, atomic result, invalidated key, bound
 * window). Any other must complete with an error status and leave b's
 * memory and receive queue alone. Opcodes libibverbs names go through
 * ibv_post_send(); the others (and any it refuses) are written into the
 * mapped send ring and the doorbell is rung by posting a valid WRITE or
 * SEND behind them.
 */
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ringfuzz.h"

#define OP_LEN		200		/* payload of sends, writes, reads */
#define BUF_SIZE	(4 * 4096)
#define RSLOT		512		/* one receive buffer */
#define NRECV		8
#define ATOMIC_OFF	8192		/* the atomic target in the region */
#define WIN_OFF		4096		/* the memory window in a's region */
#define WAIT_MS		10000
#define QUIET_MS	300
#define IMM		0x5eed1234u

#define ACCESS_ALL	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

/* A pair of QPs, a sending to b, with their memory. */
struct bench {
	struct rf_dev	*d;
	enum ibv_qp_type type;
	struct ibv_cq	*scq_a, *rcq_a, *scq_b, *rcq_b;
	struct rf_qp	a, b;
	struct ibv_ah	*ah;		/* UD: to the device's own GID */
	uint32_t	ah_num;		/* UD: what librxe wrote for it */
	struct ibv_mr	*amr;		/* a's memory: sources, window */
	struct ibv_mr	*bmr;		/* b's memory: targets */
	struct ibv_mr	*rbuf;		/* b's receive buffers */
	struct ibv_mr	*arbuf;		/* a's receive buffers */
	struct ibv_mr	*victim;	/* memory behind a key to invalidate */
	struct ibv_mw	*vmw;		/* type 2 window on it: the key */
	uint32_t	vkey;		/* the window's rkey once bound */
	struct ibv_mw	*mw;		/* type 2 window for BIND_MW */
	unsigned int	next_recv;	/* b's next receive slot */
	unsigned int	next_arecv;
	uint64_t	key;		/* payload key of the case */
	char		why[256];	/* the first failure */
	char		note[64];	/* the refused WQE's status */
};

static const char *const op_names[32] = {
	[0] = "RDMA_WRITE", [1] = "RDMA_WRITE_WITH_IMM", [2] = "SEND",
	[3] = "SEND_WITH_IMM", [4] = "RDMA_READ", [5] = "ATOMIC_CMP_AND_SWP",
	[6] = "ATOMIC_FETCH_AND_ADD", [7] = "LOCAL_INV", [8] = "BIND_MW",
	[9] = "SEND_WITH_INV", [10] = "TSO", [11] = "DRIVER1/READ_WITH_INV",
	[12] = "MASKED_CMP_AND_SWP", [13] = "MASKED_FETCH_AND_ADD",
	[14] = "FLUSH", [15] = "ATOMIC_WRITE",
};

static const char *type_name(enum ibv_qp_type t)
{
	return t == IBV_QPT_RC ? "RC" : t == IBV_QPT_UC ? "UC" : "UD";
}

/* What each transport carries (IBTA 1.5 and its FLUSH/ATOMIC WRITE annex). */
static bool op_valid(enum ibv_qp_type t, int op)
{
	static const uint32_t rc = 0x3ff | 1u << 14 | 1u << 15;
	static const uint32_t uc = 1u << 0 | 1u << 1 | 1u << 2 | 1u << 3 |
				   1u << 7 | 1u << 8;
	static const uint32_t ud = 1u << 2 | 1u << 3;

	return (t == IBV_QPT_RC ? rc : t == IBV_QPT_UC ? uc : ud) & 1u << op;
}

static void put32(uint8_t *s, unsigned int off, uint32_t v)
{
	memcpy(s + off, &v, 4);
}

static void put64(uint8_t *s, unsigned int off, uint64_t v)
{
	memcpy(s + off, &v, 8);
}

static int fail(struct bench *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int fail(struct bench *t, const char *fmt, ...)
{
	va_list ap;

	if (!t->why[0]) {
		va_start(ap, fmt);
		vsnprintf(t->why, sizeof(t->why), fmt, ap);
		va_end(ap);
	}
	return -1;
}

static int post_recv(struct ibv_qp *qp, struct ibv_mr *mr, unsigned int slot)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)mr->addr + slot * RSLOT,
		.length = RSLOT,
		.lkey = mr->lkey,
	};
	struct ibv_recv_wr wr = {
		.wr_id = 100 + slot, .sg_list = &sge, .num_sge = 1,
	}, *bad;

	return ibv_post_recv(qp, &wr, &bad);
}

/* One completion of @wr_id on @cq, with @status (-1: any status). */
static int wait_wc(struct bench *t, struct ibv_cq *cq, uint64_t wr_id,
		   int status, struct ibv_wc *wc, const char *what)
{
	int n = rf_poll(cq, wc, 1, WAIT_MS);

	if (n < 0)
		return fail(t, "%s: ibv_poll_cq failed", what);
	if (n == 0)
		return fail(t, "%s: no completion in %u s", what,
			    WAIT_MS / 1000 * rf_slow);
	if (wc->wr_id != wr_id)
		return fail(t, "%s: completion of wr_id %" PRIu64
			    " (status %s), expected %" PRIu64, what,
			    (uint64_t)wc->wr_id, rf_status(wc->status), wr_id);
	if (status >= 0 && wc->status != (enum ibv_wc_status)status)
		return fail(t, "%s: status %s (vendor_err %u), expected %s",
			    what, rf_status(wc->status), wc->vendor_err,
			    rf_status(status));
	return 0;
}

static int wait_ok(struct bench *t, struct ibv_cq *cq, uint64_t wr_id,
		   enum ibv_wc_opcode opcode, const char *what)
{
	struct ibv_wc wc;

	if (wait_wc(t, cq, wr_id, IBV_WC_SUCCESS, &wc, what))
		return -1;
	if (wc.opcode != opcode)
		return fail(t, "%s: completion opcode %d, expected %d", what,
			    wc.opcode, opcode);
	return 0;
}

static int compare(struct bench *t, const void *got, uint64_t key,
		   size_t len, const char *what)
{
	uint8_t want[RSLOT];
	const uint8_t *g = got;
	size_t i;

	rf_fill(want, len, key);
	for (i = 0; i < len; i++)
		if (g[i] != want[i])
			return fail(t, "%s: byte %zu is 0x%02x, expected 0x%02x",
				    what, i, g[i], want[i]);
	return 0;
}

static void bench_free(struct bench *t)
{
	rf_qp_destroy(&t->a);
	rf_qp_destroy(&t->b);
	if (t->mw)
		ibv_dealloc_mw(t->mw);
	if (t->vmw)
		ibv_dealloc_mw(t->vmw);
	if (t->ah)
		ibv_destroy_ah(t->ah);
	rf_mr_free(t->amr);
	rf_mr_free(t->bmr);
	rf_mr_free(t->rbuf);
	rf_mr_free(t->arbuf);
	rf_mr_free(t->victim);
	if (t->scq_a)
		ibv_destroy_cq(t->scq_a);
	if (t->rcq_a)
		ibv_destroy_cq(t->rcq_a);
	if (t->scq_b)
		ibv_destroy_cq(t->scq_b);
	if (t->rcq_b)
		ibv_destroy_cq(t->rcq_b);
}

/* A UD SEND of @len bytes from a's memory at @off to b. */
static void ud_dest(struct bench *t, struct ibv_send_wr *wr)
{
	wr->wr.ud.ah = t->ah;
	wr->wr.ud.remote_qpn = t->b.qp->qp_num;
	wr->wr.ud.remote_qkey = RF_QKEY;
}

static int send_from(struct bench *t, struct ibv_qp *qp, struct ibv_mr *mr,
		     uint64_t wr_id, enum ibv_wr_opcode op, size_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)mr->addr, .length = len, .lkey = mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED, .imm_data = htobe32(IMM),
	}, *bad;

	if (t->type == IBV_QPT_UD)
		ud_dest(t, &wr);
	return ibv_post_send(qp, &wr, &bad);
}

/*
 * The pair, its memory and receives; a first SEND proves it moves data
 * and, on UD, shows the ah_num librxe puts into a WQE for the AH.
 */
static int bench_init(struct bench *t, struct rf_dev *d, enum ibv_qp_type type)
{
	int access = ACCESS_ALL | (d->new_kernel ? RF_ACCESS_FLUSH_GLOBAL : 0);
	uint32_t prod;
	unsigned int i;

	memset(t, 0, sizeof(*t));
	t->d = d;
	t->type = type;
	t->scq_a = rf_cq(d, 64);
	t->rcq_a = rf_cq(d, 64);
	t->scq_b = rf_cq(d, 64);
	t->rcq_b = rf_cq(d, 64);
	if (!t->scq_a || !t->rcq_a || !t->scq_b || !t->rcq_b)
		return fail(t, "ibv_create_cq: %s", strerror(errno));
	t->amr = rf_mr(d, BUF_SIZE, ACCESS_ALL | IBV_ACCESS_MW_BIND);
	t->bmr = rf_mr(d, BUF_SIZE, access);
	t->rbuf = rf_mr(d, NRECV * RSLOT, IBV_ACCESS_LOCAL_WRITE);
	t->arbuf = rf_mr(d, NRECV * RSLOT, IBV_ACCESS_LOCAL_WRITE);
	t->victim = rf_mr(d, 4096, ACCESS_ALL | IBV_ACCESS_MW_BIND);
	if (!t->amr || !t->bmr || !t->rbuf || !t->arbuf || !t->victim)
		return fail(t, "ibv_reg_mr: %s", strerror(errno));
	if (rf_qp_create(d, &t->a, type, t->scq_a, t->rcq_a, NULL, 16, true) ||
	    rf_qp_create(d, &t->b, type, t->scq_b, t->rcq_b, NULL, 16, false))
		return fail(t, "ibv_create_qp: %s", strerror(errno));
	if (rf_qp_connect(d, t->a.qp, t->b.qp->qp_num) ||
	    rf_qp_connect(d, t->b.qp, t->a.qp->qp_num))
		return fail(t, "ibv_modify_qp to RTS: %s", strerror(errno));
	if (type == IBV_QPT_UD) {
		t->ah = rf_ah(d, &d->gid);
		if (!t->ah)
			return fail(t, "ibv_create_ah: %s", strerror(errno));
	}
	for (i = 0; i < NRECV; i++)
		if (post_recv(t->b.qp, t->rbuf, i) ||
		    post_recv(t->a.qp, t->arbuf, i))
			return fail(t, "ibv_post_recv: %s", strerror(errno));

	rf_fill(t->amr->addr, OP_LEN, 1);
	prod = rf_ring_get(&t->a.sq, RF_Q_PROD);
	if (send_from(t, t->a.qp, t->amr, 1, IBV_WR_SEND, OP_LEN))
		return fail(t, "first SEND: ibv_post_send: %s", strerror(errno));
	if (type == IBV_QPT_UD)
		memcpy(&t->ah_num, rf_ring_slot(&t->a.sq, prod) + RF_WQE_UD_AH,
		       4);
	if (wait_ok(t, t->scq_a, 1, IBV_WC_SEND, "first SEND, sender") ||
	    wait_ok(t, t->rcq_b, 100, IBV_WC_RECV, "first SEND, receiver"))
		return -1;
	t->next_recv = 1;
	return compare(t, (uint8_t *)t->rbuf->addr +
		       (type == IBV_QPT_UD ? RF_UD_GRH : 0), 1, OP_LEN,
		       "first SEND, payload");
}

/* The receive slot the next message to b lands in, past any GRH image. */
static uint8_t *b_recv_data(struct bench *t, unsigned int slot)
{
	return (uint8_t *)t->rbuf->addr + slot * RSLOT +
	       (t->type == IBV_QPT_UD ? RF_UD_GRH : 0);
}

/*
 * UC has no acknowledgement: a SEND from @from, received in order behind
 * what went before it, shows everything before it has landed.
 */
static int uc_fence(struct bench *t, struct ibv_qp *from, struct ibv_cq *scq,
		    struct ibv_cq *rcq, struct ibv_mr *mr, uint64_t recv_id)
{
	if (send_from(t, from, mr, 77, IBV_WR_SEND, 8))
		return fail(t, "fence SEND: %s", strerror(errno));
	if (wait_ok(t, scq, 77, IBV_WC_SEND, "fence SEND, sender"))
		return -1;
	return wait_ok(t, rcq, recv_id, IBV_WC_RECV, "fence SEND, receiver");
}

/*
 * Key @rkey of @mr no longer grants access: a WRITE through it from
 * @from (with @scq) fails on RC with a remote access error, and on UC
 * leaves the memory as it was.
 */
static int key_dead(struct bench *t, struct ibv_qp *from, struct ibv_cq *scq,
		    struct ibv_cq *peer_rcq, struct ibv_mr *src,
		    struct ibv_mr *mr, uint32_t rkey, uint64_t fence_id)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)src->addr, .length = 64, .lkey = src->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 88, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)mr->addr, .rkey = rkey },
	}, *bad;
	static const uint8_t zero[64];
	struct ibv_wc wc;

	memset(mr->addr, 0, 64);
	rf_fill(src->addr, 64, 88);
	if (ibv_post_send(from, &wr, &bad))
		return fail(t, "WRITE through the invalidated key: %s",
			    strerror(errno));
	if (t->type == IBV_QPT_RC) {
		if (wait_wc(t, scq, 88, IBV_WC_REM_ACCESS_ERR, &wc,
			    "WRITE through the invalidated key"))
			return -1;
	} else {
		if (wait_wc(t, scq, 88, -1, &wc,
			    "WRITE through the invalidated key") ||
		    uc_fence(t, from, scq, peer_rcq, src, fence_id))
			return -1;
	}
	if (memcmp(mr->addr, zero, sizeof(zero)))
		return fail(t, "a WRITE through the invalidated key landed");
	return 0;
}

static int post_a(struct bench *t, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;

	if (ibv_post_send(t->a.qp, wr, &bad))
		return fail(t, "ibv_post_send: %s", strerror(errno));
	return 0;
}

/* Build the WQE of opcode @op in a's ring at its producer index. */
static void ring_wqe(struct bench *t, uint8_t *s, int op, uint64_t wr_id)
{
	uint64_t dst = (uintptr_t)t->bmr->addr;
	uint32_t len = OP_LEN;

	put64(s, RF_WQE_WR_ID, wr_id);
	put32(s, RF_WQE_OPCODE, op);
	put32(s, RF_WQE_FLAGS, IBV_SEND_SIGNALED);
	if (op == RF_WR_FLUSH) {
		put64(s, RF_WQE_RADDR, dst);
		put32(s, RF_WQE_FLUSH_LEN, OP_LEN);
		put32(s, RF_WQE_FLUSH_RKEY, t->bmr->rkey);
		s[RF_WQE_FLUSH_TYPE] = RF_FLUSH_GLOBAL;
		s[RF_WQE_FLUSH_LEVEL] = RF_FLUSH_RANGE;
		put64(s, RF_WQE_IOVA, dst);
		put32(s, RF_WQE_DMA, OP_LEN);
		put32(s, RF_WQE_DMA + 4, OP_LEN);
		return;
	}
	if (op == IBV_WR_ATOMIC_WRITE) {
		dst += ATOMIC_OFF;
		put64(s, RF_WQE_RADDR, dst);
		put32(s, RF_WQE_RKEY, t->bmr->rkey);
		put64(s, RF_WQE_IOVA, dst);
		put32(s, RF_WQE_DMA, 8);
		put32(s, RF_WQE_DMA + 4, 8);
		rf_fill(s + RF_WQE_DATA, 8, t->key);
		return;
	}
	if (op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		dst += ATOMIC_OFF;
		put64(s, RF_WQE_RADDR, dst);
		put64(s, 32, 1);
		put64(s, 40, 2);
		put32(s, 48, t->bmr->rkey);
		len = 8;
	} else if (t->type == IBV_QPT_UD) {
		put32(s, RF_WQE_UD_QPN, t->b.qp->qp_num);
		put32(s, RF_WQE_UD_QKEY, RF_QKEY);
		put32(s, RF_WQE_UD_AH, t->ah_num);
	} else {
		put64(s, RF_WQE_RADDR, dst);
		put32(s, RF_WQE_RKEY, t->bmr->rkey);
	}
	put32(s, RF_WQE_EX, t->victim->rkey);
	put64(s, RF_WQE_IOVA, dst);
	put32(s, RF_WQE_DMA, len);
	put32(s, RF_WQE_DMA + 4, len);
	put32(s, RF_WQE_DMA_NUM_SGE, 1);
	put64(s, RF_WQE_DATA, (uintptr_t)t->amr->addr);
	put32(s, RF_WQE_DATA + 8, len);
	put32(s, RF_WQE_DATA + 12, t->amr->lkey);
}

/*
 * Post @op by writing the ring, then ring the doorbell with a valid WRITE
 * (on UD a SEND to a itself) of wr_id 99 behind it, whose completion the
 * caller polls.
 */
static int ring_post(struct bench *t, int op, uint64_t wr_id)
{
	uint8_t *slot = rf_sq_next(&t->a.sq);
	struct ibv_sge sge = {
		.addr = (uintptr_t)t->amr->addr + BUF_SIZE - 8, .length = 8,
		.lkey = t->amr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 99, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = {
			.remote_addr = (uintptr_t)t->bmr->addr + BUF_SIZE - 8,
			.rkey = t->bmr->rkey,
		},
	}, *bad;

	if (!slot)
		return fail(t, "the send ring is full");
	ring_wqe(t, slot, op, wr_id);
	rf_sq_publish(&t->a.sq);
	if (t->type == IBV_QPT_UD) {
		/* To a itself: b must receive nothing. */
		wr.opcode = IBV_WR_SEND;
		ud_dest(t, &wr);
		wr.wr.ud.remote_qpn = t->a.qp->qp_num;
	}
	/* In ERR the doorbell flushes rather than fails; both are fine. */
	if (ibv_post_send(t->a.qp, &wr, &bad) && errno != EINVAL)
		return fail(t, "doorbell: ibv_post_send: %s", strerror(errno));
	return 0;
}

static int valid_write(struct bench *t, int imm)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)t->amr->addr, .length = OP_LEN,
		.lkey = t->amr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 10, .sg_list = &sge, .num_sge = 1,
		.opcode = imm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED, .imm_data = htobe32(IMM),
		.wr.rdma = {
			.remote_addr = (uintptr_t)t->bmr->addr + 100,
			.rkey = t->bmr->rkey,
		},
	};
	struct ibv_wc wc;

	rf_fill(t->amr->addr, OP_LEN, t->key);
	if (post_a(t, &wr) ||
	    wait_ok(t, t->scq_a, 10, IBV_WC_RDMA_WRITE, "WRITE, sender"))
		return -1;
	if (imm) {
		if (wait_wc(t, t->rcq_b, 100 + t->next_recv++, IBV_WC_SUCCESS,
			    &wc, "WRITE_WITH_IMM, receiver"))
			return -1;
		if (wc.opcode != IBV_WC_RECV_RDMA_WITH_IMM ||
		    !(wc.wc_flags & IBV_WC_WITH_IMM) ||
		    be32toh(wc.imm_data) != IMM || wc.byte_len != OP_LEN)
			return fail(t, "receiver: opcode %d, flags 0x%x, imm 0x%x, byte_len %u",
				    wc.opcode, wc.wc_flags, be32toh(wc.imm_data),
				    wc.byte_len);
	} else if (t->type == IBV_QPT_UC &&
		   uc_fence(t, t->a.qp, t->scq_a, t->rcq_b, t->amr,
			    100 + t->next_recv++)) {
		return -1;
	}
	return compare(t, (uint8_t *)t->bmr->addr + 100, t->key, OP_LEN,
		       "written data");
}

/*
 * Only a fast-registration region or a type 2 window may be invalidated,
 * and a window only by a SEND_WITH_INV arriving on the QP it is bound to:
 * bind a type 2 window over the victim region through @qp.
 */
static int bind_victim(struct bench *t, struct ibv_qp *qp, struct ibv_cq *scq)
{
	struct ibv_send_wr wr = {
		.wr_id = 12, .opcode = IBV_WR_BIND_MW,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	t->vmw = ibv_alloc_mw(t->d->pd, IBV_MW_TYPE_2);
	if (!t->vmw)
		return fail(t, "ibv_alloc_mw(type 2): %s", strerror(errno));
	t->vkey = ibv_inc_rkey(t->vmw->rkey);
	wr.bind_mw.mw = t->vmw;
	wr.bind_mw.rkey = t->vkey;
	wr.bind_mw.bind_info.mr = t->victim;
	wr.bind_mw.bind_info.addr = (uintptr_t)t->victim->addr;
	wr.bind_mw.bind_info.length = t->victim->length;
	wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
	if (ibv_post_send(qp, &wr, &bad))
		return fail(t, "BIND_MW of the victim window: %s",
			    strerror(errno));
	return wait_ok(t, scq, 12, IBV_WC_BIND_MW, "BIND_MW of the victim window");
}

static int valid_send(struct bench *t, enum ibv_wr_opcode op)
{
	uint32_t grh = t->type == IBV_QPT_UD ? RF_UD_GRH : 0;
	unsigned int slot = t->next_recv++;
	struct ibv_sge sge = {
		.addr = (uintptr_t)t->amr->addr, .length = OP_LEN,
		.lkey = t->amr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 10, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	};
	unsigned int flags = 0;
	struct ibv_wc wc;

	if (op == IBV_WR_SEND_WITH_IMM) {
		wr.imm_data = htobe32(IMM);
		flags = IBV_WC_WITH_IMM;
	} else if (op == IBV_WR_SEND_WITH_INV) {
		/* b's window, bound through b's QP, which the SEND reaches. */
		if (bind_victim(t, t->b.qp, t->scq_b))
			return -1;
		wr.invalidate_rkey = t->vkey;
		flags = IBV_WC_WITH_INV;
	}
	if (t->type == IBV_QPT_UD)
		ud_dest(t, &wr);
	rf_fill(t->amr->addr, OP_LEN, t->key);
	if (post_a(t, &wr) ||
	    wait_ok(t, t->scq_a, 10, IBV_WC_SEND, "sender") ||
	    wait_wc(t, t->rcq_b, 100 + slot, IBV_WC_SUCCESS, &wc, "receiver"))
		return -1;
	if (wc.opcode != IBV_WC_RECV || wc.byte_len != OP_LEN + grh ||
	    (wc.wc_flags & (IBV_WC_WITH_IMM | IBV_WC_WITH_INV)) != flags)
		return fail(t, "receiver: opcode %d, byte_len %u, flags 0x%x",
			    wc.opcode, wc.byte_len, wc.wc_flags);
	if ((flags & IBV_WC_WITH_IMM) && be32toh(wc.imm_data) != IMM)
		return fail(t, "receiver: immediate 0x%x", be32toh(wc.imm_data));
	if ((flags & IBV_WC_WITH_INV) && wc.invalidated_rkey != t->vkey)
		return fail(t, "receiver: invalidated key 0x%x, sent 0x%x",
			    wc.invalidated_rkey, t->vkey);
	if (compare(t, b_recv_data(t, slot), t->key, OP_LEN, "payload"))
		return -1;
	if (op != IBV_WR_SEND_WITH_INV)
		return 0;
	return key_dead(t, t->a.qp, t->scq_a, t->rcq_b, t->amr, t->victim,
			t->vkey, 100 + t->next_recv++);
}

static int valid_read(struct bench *t)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)t->amr->addr + 300, .length = OP_LEN,
		.lkey = t->amr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 10, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_READ, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = {
			.remote_addr = (uintptr_t)t->bmr->addr + 700,
			.rkey = t->bmr->rkey,
		},
	};

	rf_fill((uint8_t *)t->bmr->addr + 700, OP_LEN, t->key);
	if (post_a(t, &wr) ||
	    wait_ok(t, t->scq_a, 10, IBV_WC_RDMA_READ, "READ"))
		return -1;
	return compare(t, (uint8_t *)t->amr->addr + 300, t->key, OP_LEN,
		       "data read");
}

static int valid_atomic(struct bench *t, int cas)
{
	volatile uint64_t *target = (uint64_t *)((uint8_t *)t->bmr->addr +
						 ATOMIC_OFF);
	uint64_t *result = (uint64_t *)((uint8_t *)t->amr->addr + 64);
	uint64_t old = 0x1122334455667788ull ^ t->key, want;
	struct ibv_sge sge = {
		.addr = (uintptr_t)result, .length = 8, .lkey = t->amr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 10, .sg_list = &sge, .num_sge = 1,
		.opcode = cas ? IBV_WR_ATOMIC_CMP_AND_SWP :
				IBV_WR_ATOMIC_FETCH_AND_ADD,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.atomic = {
			.remote_addr = (uintptr_t)target,
			.compare_add = cas ? old : 0x1001,
			.swap = 0xa5a5a5a5a5a5a5a5ull,
			.rkey = t->bmr->rkey,
		},
	};

	*target = old;
	*result = 0;
	want = cas ? 0xa5a5a5a5a5a5a5a5ull : old + 0x1001;
	if (post_a(t, &wr) ||
	    wait_ok(t, t->scq_a, 10, cas ? IBV_WC_COMP_SWAP : IBV_WC_FETCH_ADD,
		    "atomic"))
		return -1;
	if (*result != old)
		return fail(t, "atomic returned 0x%" PRIx64 ", expected 0x%" PRIx64,
			    *result, old);
	if (*target != want)
		return fail(t, "target is 0x%" PRIx64 ", expected 0x%" PRIx64,
			    *target, want);
	return 0;
}

static int valid_local_inv(struct bench *t)
{
	struct ibv_send_wr wr = {
		.wr_id = 10, .opcode = IBV_WR_LOCAL_INV,
		.send_flags = IBV_SEND_SIGNALED,
	};

	if (bind_victim(t, t->a.qp, t->scq_a))
		return -1;
	wr.invalidate_rkey = t->vkey;
	if (post_a(t, &wr) ||
	    wait_ok(t, t->scq_a, 10, IBV_WC_LOCAL_INV, "LOCAL_INV"))
		return -1;
	/* The region is a's: b writes to it. */
	return key_dead(t, t->b.qp, t->scq_b, t->rcq_a, t->rbuf, t->victim,
			t->vkey, 100 + t->next_arecv++);
}

/* Bind a type 2 window on a's region, then b writes through it. */
static int valid_bind_mw(struct bench *t)
{
	uint8_t *win = (uint8_t *)t->amr->addr + WIN_OFF;
	struct ibv_send_wr wr = {
		.wr_id = 10, .opcode = IBV_WR_BIND_MW,
		.send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_sge sge;
	struct ibv_send_wr w2 = {
		.wr_id = 11, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	uint32_t rkey;

	t->mw = ibv_alloc_mw(t->d->pd, IBV_MW_TYPE_2);
	if (!t->mw)
		return fail(t, "ibv_alloc_mw(type 2): %s", strerror(errno));
	rkey = ibv_inc_rkey(t->mw->rkey);
	wr.bind_mw.mw = t->mw;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info.mr = t->amr;
	wr.bind_mw.bind_info.addr = (uintptr_t)win;
	wr.bind_mw.bind_info.length = 1024;
	wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
	if (post_a(t, &wr) ||
	    wait_ok(t, t->scq_a, 10, IBV_WC_BIND_MW, "BIND_MW"))
		return -1;

	memset(win, 0, 1024);
	rf_fill(t->rbuf->addr, OP_LEN, t->key);
	sge = (struct ibv_sge){ (uintptr_t)t->rbuf->addr, OP_LEN,
				t->rbuf->lkey };
	w2.wr.rdma.remote_addr = (uintptr_t)win + 100;
	w2.wr.rdma.rkey = rkey;
	if (ibv_post_send(t->b.qp, &w2, &bad))
		return fail(t, "WRITE through the window: %s", strerror(errno));
	if (wait_ok(t, t->scq_b, 11, IBV_WC_RDMA_WRITE,
		    "WRITE through the window"))
		return -1;
	if (t->type == IBV_QPT_UC &&
	    uc_fence(t, t->b.qp, t->scq_b, t->rcq_a, t->rbuf,
		     100 + t->next_arecv++))
		return -1;
	return compare(t, win + 100, t->key, OP_LEN, "data written through the window");
}

/* FLUSH (ring) of a range a WRITE just filled; its data stays. */
static int valid_flush(struct bench *t)
{
	struct ibv_wc wc;

	if (valid_write(t, 0))
		return -1;
	if (ring_post(t, RF_WR_FLUSH, 20) ||
	    wait_wc(t, t->scq_a, 20, IBV_WC_SUCCESS, &wc, "FLUSH"))
		return -1;
	if (wc.opcode != RF_WC_FLUSH)
		return fail(t, "FLUSH: completion opcode %d", wc.opcode);
	if (wait_ok(t, t->scq_a, 99, IBV_WC_RDMA_WRITE, "doorbell WRITE"))
		return -1;
	return compare(t, (uint8_t *)t->bmr->addr + 100, t->key, OP_LEN,
		       "flushed data");
}

static int valid_atomic_write(struct bench *t)
{
	uint8_t *target = (uint8_t *)t->bmr->addr + ATOMIC_OFF;

	memset(target, 0, 8);
	if (ring_post(t, IBV_WR_ATOMIC_WRITE, 20) ||
	    wait_ok(t, t->scq_a, 20, IBV_WC_ATOMIC_WRITE, "ATOMIC_WRITE") ||
	    wait_ok(t, t->scq_a, 99, IBV_WC_RDMA_WRITE, "doorbell WRITE"))
		return -1;
	return compare(t, target, t->key, 8, "atomically written value");
}

static int run_valid(struct bench *t, int op)
{
	switch (op) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return valid_write(t, op == IBV_WR_RDMA_WRITE_WITH_IMM);
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
	case IBV_WR_SEND_WITH_INV:
		return valid_send(t, op);
	case IBV_WR_RDMA_READ:
		return valid_read(t);
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		return valid_atomic(t, op == IBV_WR_ATOMIC_CMP_AND_SWP);
	case IBV_WR_LOCAL_INV:
		return valid_local_inv(t);
	case IBV_WR_BIND_MW:
		return valid_bind_mw(t);
	case RF_WR_FLUSH:
		return valid_flush(t);
	case IBV_WR_ATOMIC_WRITE:
		return valid_atomic_write(t);
	}
	return fail(t, "no check for opcode %d", op);
}

/* Opcodes libibverbs names and whose fields its legacy post fills. */
static bool op_postable(int op)
{
	return op <= IBV_WR_DRIVER1 || op == IBV_WR_ATOMIC_WRITE;
}

/*
 * An opcode the transport cannot carry: try ibv_post_send, else the ring.
 * *@path says which took it.
 */
static int post_invalid(struct bench *t, int op, const char **path)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)t->amr->addr, .length = OP_LEN,
		.lkey = t->amr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 10, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = {
			.remote_addr = (uintptr_t)t->bmr->addr,
			.rkey = t->bmr->rkey,
		},
	}, *bad;

	if (op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		sge.length = 8;
		wr.wr.atomic.remote_addr = (uintptr_t)t->bmr->addr + ATOMIC_OFF;
		wr.wr.atomic.compare_add = 1;
		wr.wr.atomic.rkey = t->bmr->rkey;
	} else if (op == IBV_WR_BIND_MW) {
		/* A real window: librxe reads it. */
		t->mw = ibv_alloc_mw(t->d->pd, IBV_MW_TYPE_2);
		if (!t->mw)
			return fail(t, "ibv_alloc_mw: %s", strerror(errno));
		wr.num_sge = 0;
		wr.bind_mw.mw = t->mw;
		wr.bind_mw.rkey = ibv_inc_rkey(t->mw->rkey);
		wr.bind_mw.bind_info.mr = t->amr;
		wr.bind_mw.bind_info.addr = (uintptr_t)t->amr->addr;
		wr.bind_mw.bind_info.length = 1024;
		wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
	} else if (op == IBV_WR_LOCAL_INV || op == IBV_WR_SEND_WITH_INV) {
		wr.invalidate_rkey = t->victim->rkey;
	} else if (t->type == IBV_QPT_UD) {
		ud_dest(t, &wr);
	}
	if (op_postable(op) && !ibv_post_send(t->a.qp, &wr, &bad)) {
		*path = "ibv_post_send";
		return 0;
	}
	*path = "ring";
	return ring_post(t, op, 10);
}

static int run_invalid(struct bench *t, int op, const char **path)
{
	static const uint8_t zero[BUF_SIZE];
	struct ibv_wc wc;
	int n;

	memset(t->bmr->addr, 0, BUF_SIZE);
	if (post_invalid(t, op, path))
		return -1;
	if (wait_wc(t, t->scq_a, 10, -1, &wc, "the refused WQE"))
		return -1;
	if (wc.status == IBV_WC_SUCCESS)
		return fail(t, "completed with SUCCESS (completion opcode %d)",
			    wc.opcode);
	snprintf(t->note, sizeof(t->note), "%s", rf_status(wc.status));
	if (!strcmp(*path, "ring"))
		wait_wc(t, t->scq_a, 99, -1, &wc, "the doorbell WQE");
	t->why[0] = 0;
	/* Nothing reached b: no receive, no byte of its memory. */
	n = rf_poll(t->rcq_b, &wc, 1, QUIET_MS);
	if (n > 0 && wc.status == IBV_WC_SUCCESS)
		return fail(t, "b received a message (opcode %d, %u bytes)",
			    wc.opcode, wc.byte_len);
	if (memcmp(t->bmr->addr, zero, BUF_SIZE - 8))
		return fail(t, "b's memory was written");
	return 0;
}

static void one_case(struct rf_dev *d, enum ibv_qp_type type, int op)
{
	const char *name = op_names[op] ? op_names[op] : "unnamed";
	bool valid = op_valid(type, op);
	const char *path = op_postable(op) ? "ibv_post_send" : "ring";
	struct bench t;
	int err;

	err = bench_init(&t, d, type);
	t.key = (uint64_t)type << 8 | op;
	if (!err)
		err = valid ? run_valid(&t, op) : run_invalid(&t, op, &path);
	if (valid && (op == RF_WR_FLUSH || op == IBV_WR_ATOMIC_WRITE))
		path = "ring";
	if (err)
		rf_ok(false, "%s opcode %d %s (%s, %s): %s", type_name(type),
		      op, name, valid ? "carried" : "refused", path, t.why);
	else if (valid)
		rf_ok(true, "%s opcode %d %s (carried, %s): SUCCESS, effect checked",
		      type_name(type), op, name, path);
	else
		rf_ok(true, "%s opcode %d %s (refused, %s): %s, nothing reached the peer",
		      type_name(type), op, name, path, t.note);
	bench_free(&t);
}

int rf_mode_opcodes(struct rf_dev *d)
{
	static const enum ibv_qp_type types[] = {
		IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD
	};
	int op, last = rf_iters && rf_iters < 32 ? (int)rf_iters : 31;
	unsigned int i;

	/* -n: the highest opcode to try, for slow kernels. */
	for (i = 0; i < 3; i++)
		for (op = 0; op <= last; op++)
			one_case(d, types[i], op);
	return 0;
}
