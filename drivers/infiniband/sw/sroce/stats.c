// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The event counters as RDMA hardware statistics.
 */

#include "qp.h"
#include "stats.h"
#include "trace.h"

static const struct rdma_stat_desc sroce_stat_descs[] = {
	[SROCE_STAT_TX_PACKETS].name = "tx_packets",
	[SROCE_STAT_RX_PACKETS].name = "rx_packets",
	[SROCE_STAT_TX_NO_ROUTE].name = "tx_no_route",
	[SROCE_STAT_TX_NOMEM].name = "tx_nomem",
	[SROCE_STAT_TX_QUEUE_FULL].name = "tx_queue_full",
	[SROCE_STAT_TX_DEVICE_WAIT].name = "tx_device_wait",
	[SROCE_STAT_RX_BAD_HEADER].name = "rx_bad_header",
	[SROCE_STAT_RX_BAD_OPCODE].name = "rx_bad_opcode",
	[SROCE_STAT_RX_BAD_ICRC].name = "rx_bad_icrc",
	[SROCE_STAT_RX_NO_QP].name = "rx_no_qp",
	[SROCE_STAT_RX_BAD_QP_STATE].name = "rx_bad_qp_state",
	[SROCE_STAT_RX_BAD_QKEY].name = "rx_bad_qkey",
	[SROCE_STAT_RX_DUPLICATE].name = "rx_duplicate_request",
	[SROCE_STAT_RX_OUT_OF_SEQUENCE].name = "rx_out_of_sequence",
	[SROCE_STAT_RX_UC_DROPPED].name = "rx_uc_message_dropped",
	[SROCE_STAT_TX_UD_TOO_LONG].name = "tx_ud_too_long",
	[SROCE_STAT_RX_STALE_RESPONSE].name = "rx_stale_response",
	[SROCE_STAT_SEQ_NAK_SENT].name = "seq_nak_sent",
	[SROCE_STAT_RNR_NAK_SENT].name = "rnr_nak_sent",
	[SROCE_STAT_ACCESS_NAK_SENT].name = "access_nak_sent",
	[SROCE_STAT_INVALID_NAK_SENT].name = "invalid_nak_sent",
	[SROCE_STAT_SEQ_NAK_RCVD].name = "seq_nak_received",
	[SROCE_STAT_RNR_NAK_RCVD].name = "rnr_nak_received",
	[SROCE_STAT_ERR_NAK_RCVD].name = "error_nak_received",
	[SROCE_STAT_RETRANS_TIMEOUT].name = "retransmit_timeouts",
	[SROCE_STAT_RETRANS_DEFERRED].name = "retransmit_deferred",
	[SROCE_STAT_RETRY_EXCEEDED].name = "retry_exceeded",
	[SROCE_STAT_RNR_RETRY_EXCEEDED].name = "rnr_retry_exceeded",
	[SROCE_STAT_BAD_SEND_WQE].name = "bad_send_wqe",
	[SROCE_STAT_COMPLETER_RETRY].name = "completer_retry",
	[SROCE_STAT_READ_RESTART].name = "read_restart",
	[SROCE_STAT_ODP_FAULT].name = "odp_page_faults",
	[SROCE_STAT_ODP_FAULT_ERR].name = "odp_page_fault_errors",
	[SROCE_STAT_CQ_OVERFLOW].name = "cq_overflow",
	[SROCE_STAT_RX_BACKLOG_FULL].name = "rx_backlog_full",
	[SROCE_STAT_RX_BAD_SOURCE].name = "rx_bad_source",
	[SROCE_STAT_RX_BAD_PKEY].name = "rx_bad_pkey",
	[SROCE_STAT_RX_PSN_OUT_OF_WINDOW].name = "rx_psn_out_of_window",
	[SROCE_STAT_RX_DUP_NO_MATCH].name = "rx_dup_no_match",
	[SROCE_STAT_RX_DUP_REFUSED].name = "rx_dup_refused",
	[SROCE_STAT_RX_UC_MALFORMED].name = "rx_uc_malformed",
	[SROCE_STAT_TX_BYTES].name = "tx_bytes",
	[SROCE_STAT_RX_BYTES].name = "rx_bytes",
	[SROCE_STAT_RX_BACKLOG_DISCARDED].name = "rx_backlog_discarded",
	[SROCE_STAT_ECN_MARKED].name = "ecn_marked_packets",
	[SROCE_STAT_CNP_SENT].name = "cnp_sent",
	[SROCE_STAT_CNP_HANDLED].name = "cnp_handled",
	[SROCE_STAT_TX_BURSTS].name = "tx_bursts",
	[SROCE_STAT_ACK_COALESCED].name = "acks_coalesced",
	[SROCE_STAT_TX_ZCOPY_PACKETS].name = "tx_zcopy_packets",
	[SROCE_STAT_TX_ZCOPY_BYTES].name = "tx_zcopy_bytes",
	[SROCE_STAT_TX_COPY_PACKETS].name = "tx_copy_packets",
	[SROCE_STAT_TX_COPY_BYTES].name = "tx_copy_bytes",
	[SROCE_STAT_RX_GRO_PACKETS].name = "rx_gro_packets",
	[SROCE_STAT_RX_ICRC_IN_COPY].name = "rx_icrc_in_copy",
	[SROCE_STAT_ACK_HELD].name = "acks_held",
	[SROCE_STAT_ACK_JOINED].name = "acks_joined",
	[SROCE_STAT_ACK_HOLD_EXPIRED].name = "ack_holds_expired",
	[SROCE_STAT_RESP_BATCHED].name = "resp_batched",
	[SROCE_STAT_TX_CORKED].name = "doorbells_corked",
	[SROCE_STAT_RX_NOMEM].name = "rx_nomem",
};

/**
 * sroce_stat_read() - one counter of a device, summed over the CPUs
 * @sdev: the device
 * @stat: the counter
 *
 * Return: the count so far; a racing increment may or may not be in it.
 */
u64 sroce_stat_read(struct sroce_dev *sdev, enum sroce_stat stat)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += READ_ONCE(per_cpu_ptr(sdev->stats, cpu)->count[stat]);
	return sum;
}

struct rdma_hw_stats *sroce_alloc_hw_port_stats(struct ib_device *ibdev,
						u32 port)
{
	BUILD_BUG_ON(ARRAY_SIZE(sroce_stat_descs) != SROCE_STAT_COUNT);
	return rdma_alloc_hw_stats_struct(sroce_stat_descs, SROCE_STAT_COUNT,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

int sroce_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		       u32 port, int index)
{
	struct sroce_dev *sdev = to_sdev(ibdev);
	int cpu, i;

	for (i = 0; i < SROCE_STAT_COUNT; i++)
		stats->value[i] = 0;
	for_each_possible_cpu(cpu) {
		const struct sroce_stats *s = per_cpu_ptr(sdev->stats, cpu);

		for (i = 0; i < SROCE_STAT_COUNT; i++)
			stats->value[i] += READ_ONCE(s->count[i]);
	}
	return SROCE_STAT_COUNT;
}

/**
 * sroce_rx_drop() - count a received packet dropped, and trace it
 * @sdev: the device
 * @reason: its counter, one of SROCE_RX_DROP_STATS
 * @qpn: the QP it was for, or SROCE_TRACE_NONE when not known
 * @psn: its PSN, or SROCE_TRACE_NONE when not known
 *
 * Context: any.
 */
void sroce_rx_drop(struct sroce_dev *sdev, enum sroce_stat reason, u32 qpn,
		   u32 psn)
{
	this_cpu_inc(sdev->stats->count[reason]);
	trace_sroce_rx_drop(&sdev->ibdev, reason, qpn, psn);
}

/**
 * sroce_qp_rx_drop() - count and trace a packet a QP dropped
 * @qp: the QP
 * @reason: its counter, one of SROCE_RX_DROP_STATS
 * @psn: its PSN, or SROCE_TRACE_NONE
 *
 * Context: any.
 */
void sroce_qp_rx_drop(struct sroce_qp *qp, enum sroce_stat reason, u32 psn)
{
	sroce_rx_drop(qp->sdev, reason, qp->ibqp.qp_num, psn);
}
