/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Event counters: every packet dropped and every request refused is counted
 * by reason, and shown by "rdma statistic show".
 */
#ifndef _SROCE_STATS_H
#define _SROCE_STATS_H

#include <linux/percpu.h>
#include <rdma/ib_verbs.h>

#include "sroce.h"

enum sroce_stat {
	SROCE_STAT_TX_PACKETS,
	SROCE_STAT_RX_PACKETS,
	SROCE_STAT_TX_NO_ROUTE,
	SROCE_STAT_TX_NOMEM,
	SROCE_STAT_TX_QUEUE_FULL,
	SROCE_STAT_TX_DEVICE_WAIT,
	SROCE_STAT_RX_BAD_HEADER,
	SROCE_STAT_RX_BAD_OPCODE,
	SROCE_STAT_RX_BAD_ICRC,
	SROCE_STAT_RX_NO_QP,
	SROCE_STAT_RX_BAD_QP_STATE,
	SROCE_STAT_RX_BAD_QKEY,
	SROCE_STAT_RX_DUPLICATE,
	SROCE_STAT_RX_OUT_OF_SEQUENCE,
	SROCE_STAT_RX_UC_DROPPED,
	SROCE_STAT_TX_UD_TOO_LONG,
	SROCE_STAT_RX_STALE_RESPONSE,
	SROCE_STAT_SEQ_NAK_SENT,
	SROCE_STAT_RNR_NAK_SENT,
	SROCE_STAT_ACCESS_NAK_SENT,
	SROCE_STAT_INVALID_NAK_SENT,
	SROCE_STAT_SEQ_NAK_RCVD,
	SROCE_STAT_RNR_NAK_RCVD,
	SROCE_STAT_ERR_NAK_RCVD,
	SROCE_STAT_RETRANS_TIMEOUT,
	SROCE_STAT_RETRANS_DEFERRED,
	SROCE_STAT_RETRY_EXCEEDED,
	SROCE_STAT_RNR_RETRY_EXCEEDED,
	SROCE_STAT_BAD_SEND_WQE,
	SROCE_STAT_COMPLETER_RETRY,
	SROCE_STAT_READ_RESTART,
	SROCE_STAT_ODP_FAULT,
	SROCE_STAT_ODP_FAULT_ERR,
	SROCE_STAT_CQ_OVERFLOW,
	SROCE_STAT_RX_BACKLOG_FULL,
	SROCE_STAT_RX_BAD_SOURCE,
	SROCE_STAT_RX_BAD_PKEY,
	SROCE_STAT_RX_PSN_OUT_OF_WINDOW,
	SROCE_STAT_RX_DUP_NO_MATCH,
	SROCE_STAT_RX_DUP_REFUSED,
	SROCE_STAT_RX_UC_MALFORMED,
	SROCE_STAT_TX_BYTES,
	SROCE_STAT_RX_BYTES,
	SROCE_STAT_RX_BACKLOG_DISCARDED,
	SROCE_STAT_ECN_MARKED,
	SROCE_STAT_CNP_SENT,
	SROCE_STAT_CNP_HANDLED,
	SROCE_STAT_TX_BURSTS,
	SROCE_STAT_ACK_COALESCED,
	SROCE_STAT_TX_ZCOPY_PACKETS,
	SROCE_STAT_TX_ZCOPY_BYTES,
	SROCE_STAT_TX_COPY_PACKETS,
	SROCE_STAT_TX_COPY_BYTES,
	SROCE_STAT_RX_GRO_PACKETS,
	SROCE_STAT_RX_ICRC_IN_COPY,
	SROCE_STAT_ACK_HELD,
	SROCE_STAT_ACK_JOINED,
	SROCE_STAT_ACK_HOLD_EXPIRED,
	SROCE_STAT_RESP_BATCHED,
	SROCE_STAT_TX_CORKED,
	SROCE_STAT_RX_NOMEM,
	SROCE_STAT_COUNT,
};

/*
 * Whether @stat counts received packets (or UC messages) dropped: those are
 * counted and traced by sroce_rx_drop(), never by sroce_stat_inc(), so that
 * no drop is counted without its trace event. trace.h lists them again, by
 * name, for the event's format.
 */
static inline bool sroce_stat_is_rx_drop(enum sroce_stat stat)
{
	switch (stat) {
	case SROCE_STAT_RX_BAD_HEADER:
	case SROCE_STAT_RX_BAD_OPCODE:
	case SROCE_STAT_RX_BAD_ICRC:
	case SROCE_STAT_RX_NO_QP:
	case SROCE_STAT_RX_BAD_QP_STATE:
	case SROCE_STAT_RX_BAD_QKEY:
	case SROCE_STAT_RX_OUT_OF_SEQUENCE:
	case SROCE_STAT_RX_UC_DROPPED:
	case SROCE_STAT_RX_STALE_RESPONSE:
	case SROCE_STAT_RX_BACKLOG_FULL:
	case SROCE_STAT_RX_BAD_SOURCE:
	case SROCE_STAT_RX_BAD_PKEY:
	case SROCE_STAT_RX_PSN_OUT_OF_WINDOW:
	case SROCE_STAT_RX_DUP_NO_MATCH:
	case SROCE_STAT_RX_DUP_REFUSED:
	case SROCE_STAT_RX_UC_MALFORMED:
	case SROCE_STAT_RX_BACKLOG_DISCARDED:
	case SROCE_STAT_RX_NOMEM:
		return true;
	default:
		return false;
	}
}

/**
 * struct sroce_stats - per-CPU counters of one device
 * @count: one counter per enum sroce_stat
 */
struct sroce_stats {
	u64	count[SROCE_STAT_COUNT];
};

static inline void sroce_stat_inc(struct sroce_dev *sdev, enum sroce_stat stat)
{
	/* A drop counted here would not be traced. */
	BUILD_BUG_ON(__builtin_constant_p(stat) && sroce_stat_is_rx_drop(stat));
	this_cpu_inc(sdev->stats->count[stat]);
}

static inline void sroce_stat_add(struct sroce_dev *sdev, enum sroce_stat stat,
				  u64 n)
{
	this_cpu_add(sdev->stats->count[stat], n);
}

/* A QPN or PSN a dropped packet's trace cannot tell (printed as -1). */
#define SROCE_TRACE_NONE	U32_MAX

struct sroce_qp;
void sroce_rx_drop(struct sroce_dev *sdev, enum sroce_stat reason, u32 qpn,
		   u32 psn);
void sroce_qp_rx_drop(struct sroce_qp *qp, enum sroce_stat reason, u32 psn);

u64 sroce_stat_read(struct sroce_dev *sdev, enum sroce_stat stat);

struct rdma_hw_stats *sroce_alloc_hw_port_stats(struct ib_device *ibdev,
						u32 port);
int sroce_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		       u32 port, int index);

#endif /* _SROCE_STATS_H */
