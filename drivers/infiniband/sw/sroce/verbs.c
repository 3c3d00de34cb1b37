// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The RDMA core's device operations: device and port queries and the
 * objects of the control path.
 */

#include <linux/ethtool.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_verbs.h>

#include "ah.h"
#include "cq.h"
#include "kverbs.h"
#include "limits.h"
#include "mcast.h"
#include "mr.h"
#include "mw.h"
#include "pma.h"
#include "qp.h"
#include "queue.h"
#include "restrack.h"
#include "sroce.h"
#include "srq.h"
#include "stats.h"
#include "verbs.h"

#define SROCE_GID_TABLE_LEN	1024
/* Vendor id for software devices with no IEEE OUI of their own. */
#define SROCE_VENDOR_ID		0xffffff

/**
 * sroce_init_attrs() - set the device attributes query_device reports
 * @sdev: the device, not yet registered; its node GUID is set
 */
void sroce_init_attrs(struct sroce_dev *sdev)
{
	struct ib_device_attr *attr = &sdev->attrs;

	memset(attr, 0, sizeof(*attr));
	attr->sys_image_guid = sdev->ibdev.node_guid;
	attr->max_mr_size = U64_MAX;
	attr->page_size_cap = PAGE_SIZE;
	attr->vendor_id = SROCE_VENDOR_ID;
	attr->max_qp = SROCE_MAX_QP;
	attr->max_qp_wr = SROCE_MAX_QP_WR;
	attr->device_cap_flags = IB_DEVICE_SYS_IMAGE_GUID |
				 IB_DEVICE_RC_RNR_NAK_GEN |
				 IB_DEVICE_SRQ_RESIZE |
				 IB_DEVICE_MEM_MGT_EXTENSIONS |
				 IB_DEVICE_MEM_WINDOW |
				 IB_DEVICE_MEM_WINDOW_TYPE_2B |
				 SROCE_DEVICE_ATOMIC_WRITE |
				 SROCE_DEVICE_FLUSH |
				 IB_DEVICE_PORT_ACTIVE_EVENT;
	attr->kernel_cap_flags = IBK_ALLOW_USER_UNREG | IBK_ON_DEMAND_PAGING;
	/* Implicit regions cover the whole address space (odp.c). */
	attr->odp_caps.general_caps = IB_ODP_SUPPORT | IB_ODP_SUPPORT_IMPLICIT;
	attr->odp_caps.per_transport_caps.rc_odp_caps =
		IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_RECV |
		IB_ODP_SUPPORT_WRITE | IB_ODP_SUPPORT_READ |
		IB_ODP_SUPPORT_ATOMIC | IB_ODP_SUPPORT_SRQ_RECV;
	attr->odp_caps.per_transport_caps.uc_odp_caps =
		IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_RECV |
		IB_ODP_SUPPORT_WRITE | IB_ODP_SUPPORT_SRQ_RECV;
	attr->odp_caps.per_transport_caps.ud_odp_caps =
		IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_RECV |
		IB_ODP_SUPPORT_SRQ_RECV;
	attr->max_send_sge = SROCE_MAX_SGE;
	attr->max_recv_sge = SROCE_MAX_SGE;
	attr->max_sge_rd = SROCE_MAX_SGE;
	attr->max_cq = SROCE_MAX_CQ;
	attr->max_cqe = SROCE_MAX_CQE;
	attr->max_mr = SROCE_MAX_MR;
	attr->max_pd = SROCE_MAX_PD;
	attr->max_qp_rd_atom = SROCE_MAX_RD_ATOMIC;
	attr->max_qp_init_rd_atom = SROCE_MAX_RD_ATOMIC;
	attr->max_res_rd_atom = SROCE_MAX_RD_ATOMIC * SROCE_MAX_QP;
	attr->atomic_cap = IB_ATOMIC_HCA;
	attr->max_ah = SROCE_MAX_AH;
	attr->max_srq = SROCE_MAX_SRQ;
	attr->max_fast_reg_page_list_len = SROCE_MAX_FR_PAGES;
	attr->max_mw = SROCE_MAX_MR;
	attr->max_mcast_grp = SROCE_MAX_MCAST_GRP;
	attr->max_mcast_qp_attach = SROCE_MAX_MCAST_QP_ATTACH;
	attr->max_total_mcast_qp_attach = SROCE_MAX_MCAST_GRP *
					  SROCE_MAX_MCAST_QP_ATTACH;
	attr->max_srq_wr = SROCE_MAX_SRQ_WR;
	attr->max_srq_sge = SROCE_MAX_SGE;
	attr->max_pkeys = 1;
	attr->local_ca_ack_delay = 15;
}

static int sroce_query_device(struct ib_device *ibdev,
			      struct ib_device_attr *attr,
			      struct ib_udata *udata)
{
	if (udata && (udata->inlen || udata->outlen))
		return -EINVAL;

	/* ib_core clears its own copy before asking for it. */
	*attr = to_sdev(ibdev)->attrs;
	return 0;
}

static int sroce_query_port(struct ib_device *ibdev, u32 port,
			    struct ib_port_attr *attr)
{
	struct sroce_dev *sdev = to_sdev(ibdev);
	int err;

	/* ib_core zeroes *attr before calling. */
	attr->state = sroce_port_state(sdev);
	attr->phys_state = attr->state == IB_PORT_ACTIVE ?
			   IB_PORT_PHYS_STATE_LINK_UP :
			   IB_PORT_PHYS_STATE_DISABLED;
	attr->max_mtu = IB_MTU_4096;
	attr->active_mtu = sroce_active_mtu(sdev);
	attr->gid_tbl_len = SROCE_GID_TABLE_LEN;
	attr->port_cap_flags = IB_PORT_CM_SUP;
	attr->max_msg_sz = SROCE_MAX_MSG_SIZE;
	attr->bad_pkey_cntr = 0;
	attr->qkey_viol_cntr = 0;
	attr->pkey_tbl_len = 1;
	attr->max_vl_num = 1;

	err = ib_get_eth_speed(ibdev, port, &attr->active_speed,
			       &attr->active_width);
	if (err) {
		attr->active_speed = IB_SPEED_SDR;
		attr->active_width = IB_WIDTH_1X;
	}
	return 0;
}

static int sroce_get_port_immutable(struct ib_device *ibdev, u32 port,
				    struct ib_port_immutable *immutable)
{
	struct ib_port_attr attr = {};
	int err;

	err = ib_query_port(ibdev, port, &attr);
	if (err)
		return err;

	/* RoCE v2 and v1: the GID table has entries of both types. */
	immutable->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE |
				    RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	immutable->gid_tbl_len = attr.gid_tbl_len;
	immutable->pkey_tbl_len = attr.pkey_tbl_len;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

static enum rdma_link_layer sroce_get_link_layer(struct ib_device *ibdev,
						 u32 port)
{
	return IB_LINK_LAYER_ETHERNET;
}

static int sroce_query_pkey(struct ib_device *ibdev, u32 port, u16 index,
			    u16 *pkey)
{
	if (index)
		return -EINVAL;
	*pkey = IB_DEFAULT_PKEY_FULL;
	return 0;
}

static int sroce_alloc_ucontext(struct ib_ucontext *ibuc,
				struct ib_udata *udata)
{
	return 0;
}

static void sroce_dealloc_ucontext(struct ib_ucontext *ibuc)
{
}

/*
 * The device is going away while a process still has it open. The RDMA
 * core has already destroyed every object of the context through the
 * ordinary destroy verbs and sent IBV_EVENT_DEVICE_FATAL; the rings it had
 * mapped are plain pages the process keeps, which sroce no longer reads.
 * Nothing of the context is left to release, but providing the operation
 * is what lets removal go ahead instead of waiting for the process to
 * close the device, and what keeps an open device from pinning the module.
 */
static void sroce_disassociate_ucontext(struct ib_ucontext *ibuc)
{
}

static int sroce_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	return 0;
}

static int sroce_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	return 0;
}

static void sroce_get_dev_fw_str(struct ib_device *ibdev, char *str)
{
	snprintf(str, IB_FW_VERSION_NAME_MAX, "0.0.0");
}

const struct ib_device_ops sroce_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_RXE,
	.uverbs_abi_ver = SROCE_UVERBS_ABI_VERSION,

	.alloc_hw_port_stats = sroce_alloc_hw_port_stats,
	.alloc_mr = sroce_alloc_mr,
	.alloc_mw = sroce_alloc_mw,
	.alloc_pd = sroce_alloc_pd,
	.attach_mcast = sroce_attach_mcast,
	.alloc_ucontext = sroce_alloc_ucontext,
	.create_ah = sroce_create_ah,
	.create_cq = sroce_create_cq,
	.create_qp = sroce_create_qp,
	.create_srq = sroce_create_srq,
	.create_user_ah = sroce_create_ah,
	.dealloc_driver = sroce_dev_dealloc,
	.dealloc_mw = sroce_dealloc_mw,
	.dealloc_pd = sroce_dealloc_pd,
	.dealloc_ucontext = sroce_dealloc_ucontext,
	.dereg_mr = sroce_dereg_mr,
	.destroy_ah = sroce_destroy_ah,
	.destroy_cq = sroce_destroy_cq,
	.destroy_qp = sroce_destroy_qp,
	.destroy_srq = sroce_destroy_srq,
	.detach_mcast = sroce_detach_mcast,
	.disassociate_ucontext = sroce_disassociate_ucontext,
	.enable_driver = sroce_dev_enable,
	.fill_res_cq_entry = sroce_fill_res_cq_entry,
	.fill_res_mr_entry = sroce_fill_res_mr_entry,
	.fill_res_qp_entry = sroce_fill_res_qp_entry,
	.get_dev_fw_str = sroce_get_dev_fw_str,
	.get_dma_mr = sroce_get_dma_mr,
	.get_hw_stats = sroce_get_hw_stats,
	.get_link_layer = sroce_get_link_layer,
	.get_port_immutable = sroce_get_port_immutable,
	.map_mr_sg = sroce_map_mr_sg,
	.mmap = sroce_mmap,
	.mmap_free = sroce_mmap_free,
	.modify_qp = sroce_modify_qp,
	.modify_srq = sroce_modify_srq,
	.poll_cq = sroce_poll_cq,
	.post_recv = sroce_post_recv,
	.post_send = sroce_post_send,
	.post_srq_recv = sroce_post_srq_recv,
	.process_mad = sroce_process_mad,
	.query_device = sroce_query_device,
	.query_pkey = sroce_query_pkey,
	.query_port = sroce_query_port,
	.query_qp = sroce_query_qp,
	.query_srq = sroce_query_srq,
	.reg_user_mr = sroce_reg_user_mr,
	.req_notify_cq = sroce_req_notify_cq,
	.resize_cq = sroce_resize_cq,

	INIT_RDMA_OBJ_SIZE(ib_ah, sroce_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, sroce_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_mw, sroce_mw, ibmw),
	INIT_RDMA_OBJ_SIZE(ib_pd, sroce_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, sroce_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, sroce_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, sroce_ucontext, ibuc),
};
