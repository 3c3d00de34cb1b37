/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Tracepoints of the transport, under events/sroce/ in tracefs: QP state
 * changes, retransmissions, NAKs sent and received, RNR waits and every
 * received packet dropped. trace.c instantiates them; a disabled
 * tracepoint costs a patched-out branch.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM sroce

#if !defined(_SROCE_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _SROCE_TRACE_H

#include <linux/tracepoint.h>
#include <rdma/ib_verbs.h>
#include <sroce/wire.h>

#include "compat.h"
#include "stats.h"

struct sroce_qp;

#ifndef _SROCE_TRACE_ONCE
#define _SROCE_TRACE_ONCE

/**
 * enum sroce_retrans_reason - why a requester goes back to resend
 * @SROCE_RETRANS_TIMEOUT: the retransmission timer ran out
 * @SROCE_RETRANS_NAK: the responder sent a PSN sequence error NAK
 * @SROCE_RETRANS_RNR: the responder had no receive WQE (RNR NAK); the
 *	packets go out again when the RNR timer runs out
 */
enum sroce_retrans_reason {
	SROCE_RETRANS_TIMEOUT,
	SROCE_RETRANS_NAK,
	SROCE_RETRANS_RNR,
};

/* The kind of NAK sroce_show_nak() prints. */
static inline u8 sroce_trace_nak_kind(u8 syndrome)
{
	if ((syndrome & SROCE_AETH_KIND_MASK) == SROCE_AETH_RNR_NAK)
		return SROCE_AETH_RNR_NAK;
	return syndrome;
}

#endif /* _SROCE_TRACE_ONCE */

/*
 * Enum values are exported to the tracefs format files, so that perf and
 * trace-cmd can print the symbols.
 */
TRACE_DEFINE_ENUM(SROCE_STAT_RX_BAD_HEADER);
TRACE_DEFINE_ENUM(SROCE_STAT_RX_BAD_OPCODE);
TRACE_DEFINE_ENUM(SROCE_STAT_RX_BAD_ICRC);
TRACE_DEFINE_ENUM(SROCE_STAT_RX_NO_QP);
TRACE_DEFINE_ENUM(SROCE_STAT_RX_BAD_QP_STATE);
TRACE_DEFINE_ENUM(SROCE_STAT_RX_BAD_QKEY);
TRACE_DEFINE_ENUM(SROCE_STAT_RX_OUT_OF_SEQUENCE);
TRACE_DEFINE_ENUM(SROCE_STAT_RX_UC_DROPPED);
TRACE_DEFINE_ENUM(SROCE_STAT_RX_STALE_RESPONSE);
TRACE_DEFINE_ENUM(SROCE_STAT_RX_BACKLOG_FULL);
TRACE_DEFINE_ENUM(SROCE_STAT_RX_BAD_SOURCE);
TRACE_DEFINE_ENUM(SROCE_STAT_RX_BAD_PKEY);
TRACE_DEFINE_ENUM(SROCE_STAT_RX_PSN_OUT_OF_WINDOW);
TRACE_DEFINE_ENUM(SROCE_STAT_RX_DUP_NO_MATCH);
TRACE_DEFINE_ENUM(SROCE_STAT_RX_DUP_REFUSED);
TRACE_DEFINE_ENUM(SROCE_STAT_RX_UC_MALFORMED);
TRACE_DEFINE_ENUM(SROCE_STAT_RX_BACKLOG_DISCARDED);
TRACE_DEFINE_ENUM(SROCE_STAT_RX_NOMEM);
TRACE_DEFINE_ENUM(IB_QPS_RESET);
TRACE_DEFINE_ENUM(IB_QPS_INIT);
TRACE_DEFINE_ENUM(IB_QPS_RTR);
TRACE_DEFINE_ENUM(IB_QPS_RTS);
TRACE_DEFINE_ENUM(IB_QPS_SQD);
TRACE_DEFINE_ENUM(IB_QPS_SQE);
TRACE_DEFINE_ENUM(IB_QPS_ERR);
TRACE_DEFINE_ENUM(SROCE_RETRANS_TIMEOUT);
TRACE_DEFINE_ENUM(SROCE_RETRANS_NAK);
TRACE_DEFINE_ENUM(SROCE_RETRANS_RNR);

#define sroce_show_qp_state(s)						\
	__print_symbolic(s, { IB_QPS_RESET, "RESET" },			\
			 { IB_QPS_INIT, "INIT" }, { IB_QPS_RTR, "RTR" },	\
			 { IB_QPS_RTS, "RTS" }, { IB_QPS_SQD, "SQD" },	\
			 { IB_QPS_SQE, "SQE" }, { IB_QPS_ERR, "ERR" })

/*
 * The reasons are the names of their counters (stats.c), the counters
 * sroce_stat_is_rx_drop() lists.
 */
#define sroce_show_drop_reason(r)					\
	__print_symbolic(r,						\
			 { SROCE_STAT_RX_BAD_HEADER, "rx_bad_header" },	\
			 { SROCE_STAT_RX_BAD_OPCODE, "rx_bad_opcode" },	\
			 { SROCE_STAT_RX_BAD_ICRC, "rx_bad_icrc" },	\
			 { SROCE_STAT_RX_NO_QP, "rx_no_qp" },	\
			 { SROCE_STAT_RX_BAD_QP_STATE, "rx_bad_qp_state" },	\
			 { SROCE_STAT_RX_BAD_QKEY, "rx_bad_qkey" },	\
			 { SROCE_STAT_RX_OUT_OF_SEQUENCE, "rx_out_of_sequence" },	\
			 { SROCE_STAT_RX_UC_DROPPED, "rx_uc_message_dropped" },	\
			 { SROCE_STAT_RX_STALE_RESPONSE, "rx_stale_response" },	\
			 { SROCE_STAT_RX_BACKLOG_FULL, "rx_backlog_full" },	\
			 { SROCE_STAT_RX_BAD_SOURCE, "rx_bad_source" },	\
			 { SROCE_STAT_RX_BAD_PKEY, "rx_bad_pkey" },	\
			 { SROCE_STAT_RX_PSN_OUT_OF_WINDOW, "rx_psn_out_of_window" },	\
			 { SROCE_STAT_RX_DUP_NO_MATCH, "rx_dup_no_match" },	\
			 { SROCE_STAT_RX_DUP_REFUSED, "rx_dup_refused" },	\
			 { SROCE_STAT_RX_UC_MALFORMED, "rx_uc_malformed" },	\
			 { SROCE_STAT_RX_BACKLOG_DISCARDED, "rx_backlog_discarded" },	\
			 { SROCE_STAT_RX_NOMEM, "rx_nomem" })

/*
 * A NAK's kind: RNR NAKs are one kind whatever their timer code, the other
 * NAKs are told apart by their code.
 */
#define sroce_show_nak(kind)						\
	__print_symbolic(kind,						\
			 { SROCE_AETH_RNR_NAK, "rnr" },			\
			 { SROCE_AETH_NAK | SROCE_NAK_PSN_SEQ_ERR,		\
			   "psn_sequence_error" },				\
			 { SROCE_AETH_NAK | SROCE_NAK_INVALID_REQ,		\
			   "invalid_request" },				\
			 { SROCE_AETH_NAK | SROCE_NAK_REM_ACCESS,		\
			   "remote_access_error" },				\
			 { SROCE_AETH_NAK | SROCE_NAK_REM_OP_ERR,		\
			   "remote_operational_error" },			\
			 { SROCE_AETH_NAK | SROCE_NAK_INV_RD_REQ,		\
			   "invalid_rd_request" })

TRACE_EVENT(sroce_qp_state,
	    TP_PROTO(const struct sroce_qp *qp, enum ib_qp_state old_state,
		     enum ib_qp_state new_state),
	    TP_ARGS(qp, old_state, new_state),
	    TP_STRUCT__entry(__string(dev, dev_name(&qp->ibqp.device->dev))
			     __field(u32, qpn)
			     __field(u32, old_state)
			     __field(u32, new_state)),
	    TP_fast_assign(sroce_trace_assign_str(dev,
						  dev_name(&qp->ibqp.device->dev));
			   __entry->qpn = qp->ibqp.qp_num;
			   __entry->old_state = old_state;
			   __entry->new_state = new_state;),
	    TP_printk("dev=%s qpn=%u old=%s new=%s", __get_str(dev),
		      __entry->qpn, sroce_show_qp_state(__entry->old_state),
		      sroce_show_qp_state(__entry->new_state))
);

TRACE_EVENT(sroce_retransmit,
	    TP_PROTO(const struct sroce_qp *qp, u32 psn,
		     enum sroce_retrans_reason reason),
	    TP_ARGS(qp, psn, reason),
	    TP_STRUCT__entry(__string(dev, dev_name(&qp->ibqp.device->dev))
			     __field(u32, qpn)
			     __field(u32, psn)
			     __field(u32, reason)),
	    TP_fast_assign(sroce_trace_assign_str(dev,
						  dev_name(&qp->ibqp.device->dev));
			   __entry->qpn = qp->ibqp.qp_num;
			   __entry->psn = psn;
			   __entry->reason = reason;),
	    TP_printk("dev=%s qpn=%u psn=%u reason=%s", __get_str(dev),
		      __entry->qpn, __entry->psn,
		      __print_symbolic(__entry->reason,
				       { SROCE_RETRANS_TIMEOUT, "timeout" },
				       { SROCE_RETRANS_NAK, "nak" },
				       { SROCE_RETRANS_RNR, "rnr" }))
);

DECLARE_EVENT_CLASS(sroce_nak,
		    TP_PROTO(const struct sroce_qp *qp, u32 psn, u8 syndrome),
		    TP_ARGS(qp, psn, syndrome),
		    TP_STRUCT__entry(__string(dev,
					      dev_name(&qp->ibqp.device->dev))
				     __field(u32, qpn)
				     __field(u32, psn)
				     __field(u8, syndrome)
				     __field(u8, kind)),
		    TP_fast_assign(sroce_trace_assign_str(dev,
							  dev_name(&qp->ibqp.device->dev));
				   __entry->qpn = qp->ibqp.qp_num;
				   __entry->psn = psn;
				   __entry->syndrome = syndrome;
				   __entry->kind = sroce_trace_nak_kind(syndrome);),
		    TP_printk("dev=%s qpn=%u psn=%u syndrome=0x%02x kind=%s",
			      __get_str(dev), __entry->qpn, __entry->psn,
			      __entry->syndrome, sroce_show_nak(__entry->kind))
);

/* A responder's NAK, @qp being the responder. */
DEFINE_EVENT(sroce_nak, sroce_nak_send,
	     TP_PROTO(const struct sroce_qp *qp, u32 psn, u8 syndrome),
	     TP_ARGS(qp, psn, syndrome)
);

/* A NAK the requester @qp received (a reserved syndrome is a drop). */
DEFINE_EVENT(sroce_nak, sroce_nak_recv,
	     TP_PROTO(const struct sroce_qp *qp, u32 psn, u8 syndrome),
	     TP_ARGS(qp, psn, syndrome)
);

TRACE_EVENT(sroce_rnr_wait,
	    TP_PROTO(const struct sroce_qp *qp, u32 psn, u8 timer, u32 usecs,
		     u8 retries_left),
	    TP_ARGS(qp, psn, timer, usecs, retries_left),
	    TP_STRUCT__entry(__string(dev, dev_name(&qp->ibqp.device->dev))
			     __field(u32, qpn)
			     __field(u32, psn)
			     __field(u32, usecs)
			     __field(u8, timer)
			     __field(u8, retries_left)),
	    TP_fast_assign(sroce_trace_assign_str(dev,
						  dev_name(&qp->ibqp.device->dev));
			   __entry->qpn = qp->ibqp.qp_num;
			   __entry->psn = psn;
			   __entry->timer = timer;
			   __entry->usecs = usecs;
			   __entry->retries_left = retries_left;),
	    TP_printk("dev=%s qpn=%u psn=%u timer=%u usecs=%u rnr_retries_left=%u",
		      __get_str(dev), __entry->qpn, __entry->psn,
		      __entry->timer, __entry->usecs, __entry->retries_left)
);

TRACE_EVENT(sroce_rx_drop,
	    TP_PROTO(const struct ib_device *ibdev, enum sroce_stat reason,
		     u32 qpn, u32 psn),
	    TP_ARGS(ibdev, reason, qpn, psn),
	    TP_STRUCT__entry(__string(dev, dev_name(&ibdev->dev))
			     __field(u32, reason)
			     __field(u32, qpn)
			     __field(u32, psn)),
	    TP_fast_assign(sroce_trace_assign_str(dev, dev_name(&ibdev->dev));
			   __entry->reason = reason;
			   __entry->qpn = qpn;
			   __entry->psn = psn;),
	    TP_printk("dev=%s reason=%s qpn=%d psn=%d", __get_str(dev),
		      sroce_show_drop_reason(__entry->reason),
		      (int)__entry->qpn, (int)__entry->psn)
);

#endif /* _SROCE_TRACE_H */

/* Out of the kernel tree: Kbuild puts this directory on trace.o's path. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
