/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What reception (net.c) leaves to a packet's handlers: the ICRC check of a
 * packet whose payload is placed before the packet is known good.
 */

#ifndef _SROCE_RX_H
#define _SROCE_RX_H

#include <linux/types.h>

struct sk_buff;
struct sroce_dev;

u32 *sroce_rx_icrc_begin(struct sk_buff *skb, u32 *crc);
bool sroce_rx_icrc_end(struct sroce_dev *sdev, struct sk_buff *skb,
		       const u32 *crc);

#endif /* _SROCE_RX_H */
