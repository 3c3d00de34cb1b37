/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Address vectors and address handles (ah.c).
 */
#ifndef _SROCE_AH_H
#define _SROCE_AH_H

#include <linux/completion.h>
#include <linux/if_ether.h>
#include <linux/in6.h>
#include <linux/refcount.h>
#include <rdma/ib_verbs.h>

struct sroce_dev;

/**
 * struct sroce_av - where a QP or AH sends packets
 * @sgid_attr: the source GID entry; a reference is held
 * @saddr: source IP address (IPv4-mapped for IPv4)
 * @daddr: destination IP address (IPv4-mapped for IPv4)
 * @ipv6: the path is IPv6
 * @v1: the path is RoCE v1: a GRH right behind the Ethernet header, sent
 *	to @dmac on the source GID's netdev, instead of IP and UDP
 * @dmac: the destination's Ethernet address, for @v1 (the RDMA core
 *	resolved it)
 * @hop_limit: IPv4 TTL or IPv6 hop limit
 * @tclass: IPv4 TOS or IPv6 traffic class
 * @sl: service level; its low three bits are the 802.1p priority of the
 *	packets (see sroce_ip_out())
 * @flow_label: IPv6 flow label
 */
struct sroce_av {
	const struct ib_gid_attr *sgid_attr;
	struct in6_addr		saddr;
	struct in6_addr		daddr;
	bool			ipv6;
	bool			v1;
	u8			dmac[ETH_ALEN];
	u8			hop_limit;
	u8			tclass;
	u8			sl;
	u32			flow_label;
};

int sroce_av_from_attr(struct sroce_av *av, const struct rdma_ah_attr *attr);
void sroce_av_copy(struct sroce_av *dst, const struct sroce_av *src);
void sroce_av_release(struct sroce_av *av);

/**
 * struct sroce_ah - an address handle
 * @ibah: the RDMA core's AH
 * @av: the address
 * @ah_num: the handle's number in user send WQEs, never zero
 * @ref: users in flight, plus one for the table
 * @released: completed when @ref reaches zero
 */
struct sroce_ah {
	struct ib_ah		ibah;
	struct sroce_av		av;
	u32			ah_num;
	refcount_t		ref;
	struct completion	released;
};

static inline struct sroce_ah *to_sah(struct ib_ah *ibah)
{
	return container_of(ibah, struct sroce_ah, ibah);
}

struct sroce_ah *sroce_ah_get(struct sroce_dev *sdev, u32 ah_num);
void sroce_ah_put(struct sroce_ah *ah);

/* The verbs, for verbs.c's operations table. */
int sroce_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init_attr,
		    struct ib_udata *udata);
int sroce_destroy_ah(struct ib_ah *ibah, u32 flags);

#endif /* _SROCE_AH_H */
