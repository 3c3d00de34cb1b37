/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The responder (resp.c): validation and placement of incoming requests,
 * ACKs and NAKs, READ responses and atomics.
 */
#ifndef _SROCE_RESP_H
#define _SROCE_RESP_H

#include <linux/types.h>

#include <sroce/wire.h>

struct sk_buff;
struct sroce_mr;
struct sroce_qp;
struct work_struct;

/**
 * struct sroce_rd_res - a responder resource: a READ or atomic in progress
 * @psn: PSN of the request (READ: of the first response)
 * @last_psn: PSN of the last response
 * @is_atomic: an atomic (replay cache) rather than a READ
 * @atomic_orig: the value returned for an atomic
 * @mr: READ: the region read from; a reference is held
 * @va: READ: the address of the next byte to send
 * @resid: READ: bytes left to send
 * @next_psn: READ: PSN of the next response
 * @length: READ: the whole request's length
 */
struct sroce_rd_res {
	u32			psn;
	u32			last_psn;
	bool			is_atomic;
	u64			atomic_orig;
	struct sroce_mr		*mr;
	u64			va;
	u32			resid;
	u32			next_psn;
	u32			length;
};

void sroce_resp_recv(struct sroce_qp *qp, struct sk_buff *skb,
		     const struct sroce_bth *bth,
		     const struct sroce_opcode_info *info, u32 payload);
void sroce_resp_work(struct work_struct *work);
void sroce_resp_release(struct sroce_qp *qp);

#endif /* _SROCE_RESP_H */
