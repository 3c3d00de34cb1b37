/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The kernel API differences between the kernels sroce supports, in one
 * place. scripts/compat-probe.sh decides each SROCE_HAVE_* flag by looking
 * at what the target kernel's headers declare.
 */
#ifndef _SROCE_COMPAT_H
#define _SROCE_COMPAT_H

#include <linux/export.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

/*
 * create_cq's last argument: the udata itself, or the attribute bundle that
 * carries it. Driver code is written against struct ib_udata only.
 */
#ifdef SROCE_HAVE_CREATE_CQ_ATTRS
#define SROCE_CREATE_CQ_UDATA_ARG	struct uverbs_attr_bundle *attrs
#define sroce_create_cq_udata()		(attrs ? &attrs->driver_udata : NULL)
#else
#define SROCE_CREATE_CQ_UDATA_ARG	struct ib_udata *udata_arg
#define sroce_create_cq_udata()		(udata_arg)
#endif

/*
 * IBTA 1.5 atomic write: sroce implements it on every kernel, since the
 * user ABI carries it as WQE opcode 15; it is advertised where ib_core
 * defines the capability bit.
 */
#ifdef SROCE_HAVE_ATOMIC_WRITE_CAP
#define SROCE_DEVICE_ATOMIC_WRITE	IB_DEVICE_ATOMIC_WRITE
#else
#define SROCE_DEVICE_ATOMIC_WRITE	0
#endif

/*
 * IBTA 1.5 FLUSH, global visibility only (no region is persistent memory).
 * Where ib_core knows the right to be flushed, a region must have it and
 * the capability is advertised. Older kernels refuse that registration
 * flag, so there a peer allowed to write a region may flush it.
 */
#ifdef SROCE_HAVE_FLUSH_ACCESS
#define SROCE_DEVICE_FLUSH		IB_DEVICE_FLUSH_GLOBAL
#define SROCE_ACCESS_FLUSH		IB_ACCESS_FLUSH_GLOBAL
#else
#define SROCE_DEVICE_FLUSH		0
#define SROCE_ACCESS_FLUSH		IB_ACCESS_REMOTE_WRITE
#endif

/*
 * A trace event's string field is filled from the source its __string()
 * names (since 6.10); before, the source was given again.
 */
#ifdef SROCE_HAVE_ASSIGN_STR_ONE_ARG
#define sroce_trace_assign_str(dst, src)	__assign_str(dst)
#else
#define sroce_trace_assign_str(dst, src)	__assign_str(dst, src)
#endif

#endif /* _SROCE_COMPAT_H */
