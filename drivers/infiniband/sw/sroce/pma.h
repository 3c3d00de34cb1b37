/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The port's performance management agent: the IBTA port counters that
 * /sys/class/infiniband/DEV/ports/1/counters/ shows, from sroce's own.
 */
#ifndef _SROCE_PMA_H
#define _SROCE_PMA_H

#include <rdma/ib_verbs.h>

int sroce_process_mad(struct ib_device *ibdev, int mad_flags, u32 port,
		      const struct ib_wc *in_wc, const struct ib_grh *in_grh,
		      const struct ib_mad *in, struct ib_mad *out,
		      size_t *out_mad_size, u16 *out_mad_pkey_index);

#endif /* _SROCE_PMA_H */
