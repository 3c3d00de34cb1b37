// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The port counters of the IBTA's performance management class, answered
 * from the device's event counters. The RDMA core asks for them through
 * process_mad() to fill the port's counters/ directory in sysfs, which
 * monitoring tools read.
 */

#include <rdma/ib_mad.h>
#include <rdma/ib_pma.h>

#include "pma.h"
#include "sroce.h"
#include "stats.h"

/* The attribute data of a PerfMgmt MAD follows 40 reserved bytes. */
#define SROCE_PMA_DATA_OFFSET	40

static u64 sroce_pma_sum(struct sroce_dev *sdev, const enum sroce_stat *stats,
			 unsigned int n)
{
	u64 sum = 0;

	while (n--)
		sum += sroce_stat_read(sdev, stats[n]);
	return sum;
}

/* Malformed packets: what PortRcvErrors counts on a real link. */
static const enum sroce_stat sroce_pma_rcv_errors[] = {
	SROCE_STAT_RX_BAD_HEADER,
	SROCE_STAT_RX_BAD_OPCODE,
	SROCE_STAT_RX_BAD_ICRC,
};

/* Packets the port could not send. */
static const enum sroce_stat sroce_pma_xmit_discards[] = {
	SROCE_STAT_TX_NO_ROUTE,
	SROCE_STAT_TX_NOMEM,
	SROCE_STAT_TX_QUEUE_FULL,
};

static void sroce_pma_class_port_info(struct ib_mad *out)
{
	struct ib_class_port_info *cpi = (void *)(out->data +
						  SROCE_PMA_DATA_OFFSET);

	cpi->base_version = IB_MGMT_BASE_VERSION;
	cpi->class_version = 1;
	/* The 64-bit counters of PortCountersExtended. */
	cpi->capability_mask = IB_PMA_CLASS_CAP_EXT_WIDTH;
}

static void sroce_pma_counters(struct sroce_dev *sdev, u8 port,
			       struct ib_mad *out)
{
	struct ib_pma_portcounters *pc = (void *)(out->data +
						  SROCE_PMA_DATA_OFFSET);
	u64 v;

	pc->port_select = port;
	/* The 16- and 32-bit counters stop at their maximum, as the IBTA says. */
	v = sroce_pma_sum(sdev, sroce_pma_rcv_errors,
			  ARRAY_SIZE(sroce_pma_rcv_errors));
	pc->port_rcv_errors = cpu_to_be16(min_t(u64, v, U16_MAX));
	v = sroce_pma_sum(sdev, sroce_pma_xmit_discards,
			  ARRAY_SIZE(sroce_pma_xmit_discards));
	pc->port_xmit_discards = cpu_to_be16(min_t(u64, v, U16_MAX));
	v = sroce_stat_read(sdev, SROCE_STAT_TX_BYTES) / 4;
	pc->port_xmit_data = cpu_to_be32(min_t(u64, v, U32_MAX));
	v = sroce_stat_read(sdev, SROCE_STAT_RX_BYTES) / 4;
	pc->port_rcv_data = cpu_to_be32(min_t(u64, v, U32_MAX));
	v = sroce_stat_read(sdev, SROCE_STAT_TX_PACKETS);
	pc->port_xmit_packets = cpu_to_be32(min_t(u64, v, U32_MAX));
	v = sroce_stat_read(sdev, SROCE_STAT_RX_PACKETS);
	pc->port_rcv_packets = cpu_to_be32(min_t(u64, v, U32_MAX));
}

/*
 * Unicast and multicast packets are not told apart: those two pairs of
 * counters stay at zero.
 */
static void sroce_pma_counters_ext(struct sroce_dev *sdev, u8 port,
				   struct ib_mad *out)
{
	struct ib_pma_portcounters_ext *pc = (void *)(out->data +
						      SROCE_PMA_DATA_OFFSET);

	pc->port_select = port;
	pc->port_xmit_data =
		cpu_to_be64(sroce_stat_read(sdev, SROCE_STAT_TX_BYTES) / 4);
	pc->port_rcv_data =
		cpu_to_be64(sroce_stat_read(sdev, SROCE_STAT_RX_BYTES) / 4);
	pc->port_xmit_packets =
		cpu_to_be64(sroce_stat_read(sdev, SROCE_STAT_TX_PACKETS));
	pc->port_rcv_packets =
		cpu_to_be64(sroce_stat_read(sdev, SROCE_STAT_RX_PACKETS));
}

/**
 * sroce_process_mad() - answer the RDMA core's port counter queries
 * @ibdev: the device
 * @mad_flags: IB_MAD_IGNORE_* (unused: there are no keys to check)
 * @port: the port the MAD is for
 * @in_wc: the completion of a MAD that came from the network, or NULL for
 *	a query from the RDMA core itself
 * @in_grh: its GRH (unused)
 * @in: the MAD
 * @out: the reply, zeroed by the caller
 * @out_mad_size: the reply's size (unchanged: a plain IB MAD)
 * @out_mad_pkey_index: the reply's P_Key index (unused)
 *
 * Only local Get requests of the PerfMgmt class for ClassPortInfo,
 * PortCounters and PortCountersExtended are answered. A MAD from the
 * network is left to the MAD layer as before, so the wire sees no new
 * agent.
 *
 * Return: IB_MAD_RESULT_SUCCESS | IB_MAD_RESULT_REPLY with @out filled in,
 * or IB_MAD_RESULT_SUCCESS when the MAD is not for this agent.
 */
int sroce_process_mad(struct ib_device *ibdev, int mad_flags, u32 port,
		      const struct ib_wc *in_wc, const struct ib_grh *in_grh,
		      const struct ib_mad *in, struct ib_mad *out,
		      size_t *out_mad_size, u16 *out_mad_pkey_index)
{
	struct sroce_dev *sdev = to_sdev(ibdev);

	if (in_wc || port != 1 ||
	    in->mad_hdr.mgmt_class != IB_MGMT_CLASS_PERF_MGMT ||
	    in->mad_hdr.method != IB_MGMT_METHOD_GET)
		return IB_MAD_RESULT_SUCCESS;

	switch (in->mad_hdr.attr_id) {
	case IB_PMA_CLASS_PORT_INFO:
		sroce_pma_class_port_info(out);
		break;
	case IB_PMA_PORT_COUNTERS:
		sroce_pma_counters(sdev, port, out);
		break;
	case IB_PMA_PORT_COUNTERS_EXT:
		sroce_pma_counters_ext(sdev, port, out);
		break;
	default:
		return IB_MAD_RESULT_SUCCESS;
	}
	out->mad_hdr = in->mad_hdr;
	out->mad_hdr.method = IB_MGMT_METHOD_GET_RESP;
	return IB_MAD_RESULT_SUCCESS | IB_MAD_RESULT_REPLY;
}
