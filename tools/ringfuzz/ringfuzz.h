/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sroce-ringfuzz: hostile and busy users of the rings the rxe user ABI
 * shares between a process and the driver.
 */
#ifndef RINGFUZZ_H
#define RINGFUZZ_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <infiniband/verbs.h>

/* struct rxe_queue_buf: the ring header, then the slots. */
#define RF_Q_LOG2	0
#define RF_Q_MASK	4
#define RF_Q_PROD	128
#define RF_Q_CONS	256
#define RF_Q_DATA	384

/* struct rxe_send_wqe offsets (user ABI, x86-64). */
#define RF_WQE_WR_ID		0
#define RF_WQE_OPCODE		12
#define RF_WQE_FLAGS		16
#define RF_WQE_EX		20
#define RF_WQE_RADDR		24	/* wr.rdma.remote_addr, wr.flush too */
#define RF_WQE_RKEY		32	/* wr.rdma.rkey */
#define RF_WQE_FLUSH_LEN	32	/* wr.flush.length */
#define RF_WQE_FLUSH_RKEY	36
#define RF_WQE_FLUSH_TYPE	40
#define RF_WQE_FLUSH_LEVEL	41
#define RF_WQE_UD_QPN		24
#define RF_WQE_UD_QKEY		28
#define RF_WQE_UD_AH		36
#define RF_WQE_IOVA		152
#define RF_WQE_DMA		184	/* length, resid, cur_sge, num_sge, ... */
#define RF_WQE_DMA_NUM_SGE	196
#define RF_WQE_DATA		208	/* SGEs, inline data or atomic_wr */
#define RF_WQE_FIXED		208

/* struct rxe_recv_wqe offsets. */
#define RF_RWQE_WR_ID		0
#define RF_RWQE_DMA		16
#define RF_RWQE_DMA_NUM_SGE	28
#define RF_RWQE_SGE		40

/* Send opcodes beyond what rdma-core 44's verbs.h names. */
#define RF_WR_FLUSH		14
#define RF_WC_FLUSH		8
#define RF_ACCESS_FLUSH_GLOBAL	(1 << 8)
#define RF_FLUSH_GLOBAL		1
#define RF_FLUSH_RANGE		0

#define RF_QKEY			0x11110000u
#define RF_UD_GRH		40

/* A ring mapped from the uverbs file: an SQ, RQ, SRQ or CQ. */
struct rf_ring {
	uint8_t		*base;
	uint32_t	log2;
	uint32_t	mask;
	size_t		len;	/* the mapping's length */
};

struct rf_dev {
	struct ibv_context	*ctx;
	struct ibv_pd		*pd;
	union ibv_gid		gid;
	int			gidx;
	int			gidx6;	/* -G: an IPv6 GID, or -1 */
	enum ibv_mtu		mtu;
	uint32_t		max_inline;
	bool			new_kernel;	/* 6.2 or later */
};

/* A QP and, when asked for, its send ring. */
struct rf_qp {
	struct ibv_qp		*qp;
	struct rf_ring		sq;
	bool			has_sq;
};

extern unsigned int rf_slow;		/* SROCE_SLOW: waits scale by it */
extern unsigned int rf_iters;		/* -n */
extern uint64_t rf_seed;		/* -s */
extern const char *rf_hold;		/* --hold FILE (asyncflood) */
extern int rf_gidx6;			/* -G */

/* TAP */
void rf_ok(bool pass, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void rf_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int rf_done(void);
unsigned int rf_failed(void);

/* verbs.c */
int rf_dev_open(struct rf_dev *d, const char *name, int gidx);
void rf_dev_close(struct rf_dev *d);
struct ibv_cq *rf_cq(struct rf_dev *d, int cqe);
int rf_qp_create(struct rf_dev *d, struct rf_qp *q, enum ibv_qp_type type,
		 struct ibv_cq *scq, struct ibv_cq *rcq, struct ibv_srq *srq,
		 uint32_t sq_depth, bool find_sq);
int rf_qp_init(struct rf_dev *d, struct ibv_qp *qp);
int rf_qp_rtr(struct rf_dev *d, struct ibv_qp *qp, uint32_t dqpn);
int rf_qp_rts(struct rf_dev *d, struct ibv_qp *qp);
int rf_qp_connect(struct rf_dev *d, struct ibv_qp *qp, uint32_t dqpn);
void rf_qp_destroy(struct rf_qp *q);
struct ibv_ah *rf_ah(struct rf_dev *d, const union ibv_gid *dgid);
struct ibv_ah *rf_ah_from(struct rf_dev *d, const union ibv_gid *dgid, int sgidx);
struct ibv_mr *rf_mr(struct rf_dev *d, size_t len, int access);
void rf_mr_free(struct ibv_mr *mr);
int rf_poll(struct ibv_cq *cq, struct ibv_wc *wc, int n, unsigned int ms);
bool rf_poll_quiet(struct ibv_cq *cq, unsigned int ms);
const char *rf_status(enum ibv_wc_status st);
int rf_doorbell(struct ibv_qp *qp);
void rf_fill(void *buf, size_t len, uint64_t key);
uint64_t rf_rand(uint64_t *state);
void rf_msleep(unsigned int ms);
uint64_t rf_now_ms(void);

/* ring.c */
void rf_maps_lock(void);
void rf_maps_unlock(void);
int rf_maps_snapshot(uintptr_t *lo, size_t *len, int max);
int rf_maps_new(const uintptr_t *before, int nbefore, struct rf_ring *out,
		int max);
int rf_ring_at(struct rf_ring *r, uintptr_t addr, size_t len);
uint32_t rf_ring_get(const struct rf_ring *r, unsigned int off);
void rf_ring_set(struct rf_ring *r, unsigned int off, uint32_t v);
uint8_t *rf_ring_slot(const struct rf_ring *r, uint32_t idx);
uint8_t *rf_sq_next(struct rf_ring *r);
void rf_sq_publish(struct rf_ring *r);

/* modes */
int rf_mode_opcodes(struct rf_dev *d);
int rf_mode_ring(const char *dev, int gidx);
int rf_mode_churn(struct rf_dev *d);
int rf_mode_asyncflood(struct rf_dev *d);
int rf_mode_traffic(const char *dev, int gidx, int stop_fd, int report_fd);

#endif
