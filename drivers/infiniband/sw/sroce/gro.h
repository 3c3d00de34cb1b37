/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Receive aggregation: the RoCEv2 socket's GRO hook chains the packets of a
 * flow in one receive batch (gro.c); sroce_udp_recv() takes chains apart.
 */
#ifndef _SROCE_GRO_H
#define _SROCE_GRO_H

struct udp_tunnel_sock_cfg;

void sroce_gro_setup(struct udp_tunnel_sock_cfg *cfg);

#endif /* _SROCE_GRO_H */
