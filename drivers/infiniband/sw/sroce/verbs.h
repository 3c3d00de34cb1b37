/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The verbs objects that have no file of their own, the process context and
 * the protection domain, both implemented in verbs.c.
 */
#ifndef _SROCE_VERBS_H
#define _SROCE_VERBS_H

#include <rdma/ib_verbs.h>

/**
 * struct sroce_ucontext - a process's context on a device
 * @ibuc: the RDMA core's context
 */
struct sroce_ucontext {
	struct ib_ucontext	ibuc;
};

/**
 * struct sroce_pd - a protection domain
 * @ibpd: the RDMA core's PD
 */
struct sroce_pd {
	struct ib_pd		ibpd;
};

static inline struct sroce_pd *to_spd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct sroce_pd, ibpd);
}

#endif /* _SROCE_VERBS_H */
