/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sroce-integrity: end-to-end data integrity tests for an RDMA device
 * driven through libibverbs. One instance runs as the server, the other as
 * the client; they agree on every test case over a TCP control connection
 * and the client reports the results as TAP.
 */
#ifndef SROCE_INTEGRITY_H
#define SROCE_INTEGRITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#define __printf(a, b)	__attribute__((format(printf, a, b)))

#define SI_PROTO_VERSION	1
#define SI_DEFAULT_PORT		"18520"
#define SI_GRH_LEN		40
#define SI_MAX_SGE		3
#define SI_QKEY			0x11111111u
#define SI_CANARY		0xa5
#define SI_SCRIBBLE		0xee
#define SI_ATOMIC_SLOTS		8
#define SI_ATOMIC_STRIDE	64
#define SI_ATOMIC_OFF		8
#define SI_ERR_LEN		320
#define SI_MAX_RING		256
#define SI_FLOW_RING		64
#define SI_MAX_REGION		(512ul << 20)

enum si_op {
	SI_OP_RC_SEND,
	SI_OP_RC_SEND_IMM,
	SI_OP_RC_WRITE,
	SI_OP_RC_WRITE_IMM,
	SI_OP_RC_READ,
	SI_OP_RC_CMP_SWP,
	SI_OP_RC_FETCH_ADD,
	SI_OP_UC_SEND,
	SI_OP_UD_SEND,
	SI_OP_COUNT
};

enum si_variant {
	SI_V_PLAIN,		/* one SGE, aligned buffers */
	SI_V_ODD,		/* one SGE at odd offsets */
	SI_V_SGE,		/* three uneven SGEs at odd offsets, both sides */
	SI_V_INLINE,		/* IBV_SEND_INLINE, one SGE at an odd offset */
	SI_V_INLINE_SGE,	/* IBV_SEND_INLINE, three SGEs */
	SI_V_COUNT
};

struct si_op_info {
	const char *name;		/* --tests name */
	const char *label;		/* TAP label */
	enum ibv_qp_type qpt;
	enum ibv_wr_opcode wr_opcode;
	enum ibv_wc_opcode send_wc;	/* requester completion opcode */
	bool recv;			/* consumes receive WQEs at the server */
	bool imm;			/* carries immediate data */
	bool remote;			/* targets the server's memory region */
	bool atomic;
	bool can_inline;
};

extern const struct si_op_info si_ops[SI_OP_COUNT];
extern const char *const si_variant_names[SI_V_COUNT];

struct si_case {
	uint32_t index;		/* TAP number, 1-based */
	enum si_op op;
	enum si_variant var;
	uint32_t size;		/* payload bytes (8 for atomics) */
	uint32_t count;		/* messages */
	uint64_t seed;
	enum ibv_mtu mtu;	/* path MTU */
	uint32_t cpsn;		/* client's first send PSN */
	uint32_t spsn;		/* server's first send PSN */
};

/* Deliberate faults in what the client sends, to prove the checks work. */
enum si_inject {
	SI_INJ_NONE,
	SI_INJ_PAYLOAD,		/* a flipped bit, a wrong atomic operand */
	SI_INJ_IMM,		/* wrong immediate data */
	SI_INJ_SHORT,		/* one byte short */
};

struct si_opts {
	const char *dev_name;
	int gidx;
	int ib_port;
	const char *port;
	const char *server;	/* NULL: run as the server */
	unsigned int iters;
	uint64_t seed;
	unsigned int window;
	unsigned int timeout;
	unsigned int wait;
	unsigned long budget;
	uint32_t tests;		/* bit mask of enum si_op */
	bool quick;
	bool keep_going;
	enum si_inject inject;
	int verbose;
};

/* main.c */
double si_now(void);
__printf(2, 3) void si_vlog(int level, const char *fmt, ...);
extern int si_verbose;
extern unsigned int si_ack_timeout;

/* ctl.c: the TCP control channel */
enum si_msg_type {
	SI_MSG_HELLO = 1,
	SI_MSG_CASE,
	SI_MSG_REPLY,
	SI_MSG_ACK,
	SI_MSG_END,
	SI_MSG_RESULT,
	SI_MSG_QUIT,
};

#define SI_MSG_WORDS	14

struct si_msg {
	uint32_t type;
	uint64_t v[SI_MSG_WORDS];
	uint8_t gid[16];
	char text[SI_ERR_LEN];
};

/* HELLO */
#define SI_HELLO_VERSION	0
#define SI_HELLO_MTU		1
/* CASE */
#define SI_CASE_INDEX		0
#define SI_CASE_OP		1
#define SI_CASE_VAR		2
#define SI_CASE_SIZE		3
#define SI_CASE_COUNT		4
#define SI_CASE_SEED		5
#define SI_CASE_MTU		6
#define SI_CASE_CPSN		7
#define SI_CASE_SPSN		8
#define SI_CASE_QPN		9
/* REPLY */
#define SI_REPLY_STATUS		0
#define SI_REPLY_QPN		1
#define SI_REPLY_RKEY		2
#define SI_REPLY_ADDR		3
#define SI_REPLY_LEN		4
#define SI_REPLY_RING		5
/* ACK */
#define SI_ACK_CONSUMED		0
/* END */
#define SI_END_ABORT		0
/* RESULT */
#define SI_RESULT_FAILED	0
/* QUIT */
#define SI_QUIT_FAILED		0

int si_ctl_listen(const char *port, char *err, size_t errlen);
int si_ctl_accept(int lfd, unsigned int wait_s, char *err, size_t errlen);
int si_ctl_connect(const char *host, const char *port, unsigned int wait_s,
		   char *err, size_t errlen);
int si_ctl_send(int fd, const struct si_msg *m);
/* 0: a message; -1: error or end of stream; -2: deadline passed */
int si_ctl_recv(int fd, struct si_msg *m, double deadline);

/* pattern.c: payload patterns, buffer layouts and their checks */
struct si_seg {
	uint32_t off;		/* in the slot */
	uint32_t len;
	uint32_t logical;	/* offset in the message image */
};

struct si_layout {
	unsigned int nseg;
	struct si_seg seg[SI_MAX_SGE];
};

uint64_t si_mix(uint64_t x);
uint64_t si_msg_key(uint64_t seed, uint32_t case_index, uint32_t msg);
uint32_t si_msg_imm(uint64_t key);
size_t si_stride(size_t total);
uint32_t si_pad(enum si_variant var, uint32_t msg);
void si_layout_local(struct si_layout *l, size_t total, enum si_variant var,
		     uint32_t msg, bool recv);
void si_layout_remote(struct si_layout *l, size_t total,
		      enum si_variant var, uint32_t msg);
void si_pattern_fill(uint8_t *dst, size_t len, uint64_t key, size_t logical);
void si_slot_fill(uint8_t *slot, size_t stride, const struct si_layout *l,
		  uint64_t key);
bool si_slot_check(const uint8_t *slot, size_t stride,
		   const struct si_layout *l, uint64_t key, size_t skip,
		   uint8_t *head, char *err, size_t errlen);
bool si_canary_check(const uint8_t *p, size_t len, size_t *bad);
void si_atomic_init(const struct si_case *c, uint64_t *vals);
void si_atomic_step(const struct si_case *c, uint64_t *vals, uint32_t msg,
		    uint64_t *cmp_add, uint64_t *swap, uint64_t *orig);
bool si_grh_check(const uint8_t *grh, const uint8_t *sgid,
		  const uint8_t *dgid, char *err, size_t errlen);

/* verbs.c */
struct si_dev {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	uint8_t port;
	int gidx;
	union ibv_gid gid;
	enum ibv_mtu mtu;
	uint8_t rd_atomic;		/* as initiator */
	uint8_t dest_rd_atomic;		/* as responder */
	uint32_t max_wr;
	uint32_t inline_req[3];		/* RC, UC, UD: what to ask for */
	uint32_t max_inline[3];		/* and what create_qp granted */
};

struct si_res {
	struct ibv_comp_channel *chan;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_ah *ah;
	struct ibv_mr *mr;
	uint8_t *buf;
	size_t buflen;
	enum ibv_qp_type qpt;
	uint32_t max_inline;
	bool armed;
};

#define SI_EV_CQ	1
#define SI_EV_FD	2

int si_dev_open(struct si_dev *d, const struct si_opts *o, char *err,
		size_t errlen);
void si_dev_close(struct si_dev *d);
uint32_t si_mtu_bytes(enum ibv_mtu mtu);
uint32_t si_dev_max_inline(const struct si_dev *d, enum ibv_qp_type qpt);
int si_res_create(struct si_dev *d, struct si_res *r, enum ibv_qp_type qpt,
		  uint32_t sq, uint32_t rq, size_t buflen, char *err,
		  size_t errlen);
int si_res_connect(struct si_dev *d, struct si_res *r, uint32_t rqpn,
		   const uint8_t *rgid, uint32_t my_psn, uint32_t peer_psn,
		   enum ibv_mtu mtu, char *err, size_t errlen);
void si_res_destroy(struct si_res *r);
int si_wait(struct si_res *r, int fd, double deadline);

/* run.c */
struct si_client {
	const struct si_opts *o;
	struct si_dev *d;
	int fd;
};

/* 0: passed; 1: failed (err says why); -1: the session is broken */
int si_client_case(struct si_client *cl, const struct si_case *c, char *err,
		   size_t errlen);
int si_server_session(struct si_dev *d, const struct si_opts *o, int fd);

#endif /* SROCE_INTEGRITY_H */
