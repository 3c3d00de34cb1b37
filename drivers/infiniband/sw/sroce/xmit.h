/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * RoCEv2 packets: building and transmitting them (xmit.c), and the payload
 * length of received ones.
 */
#ifndef _SROCE_XMIT_H
#define _SROCE_XMIT_H

#include <linux/skbuff.h>
#include <linux/udp.h>

#include <sroce/wire.h>

struct net;
struct sroce_av;
struct sroce_burst;
struct sroce_qp;

/**
 * struct sroce_pkt - a request or response being built
 * @skb: the buffer; its data starts at the BTH
 * @bth: the BTH fields
 * @info: the opcode's description
 * @payload: bytes of payload appended after the headers
 * @tail: a zero-copy packet's pad and ICRC, in a small buffer of its own
 *	that sroce_pkt_send() attaches after the payload's page fragments;
 *	NULL for a packet built in its linear part
 * @payload_crc: the payload's CRC, started from 0 (sroce_icrc_copy()), when
 *	@payload_crc_set: computed as the payload was copied in, so that
 *	the ICRC does not read the payload again
 * @payload_crc_set: whether @payload_crc covers the whole payload
 */
struct sroce_pkt {
	struct sk_buff		*skb;
	struct sroce_bth_fields	bth;
	const struct sroce_opcode_info *info;
	u32			payload;
	void			*tail;
	u32			payload_crc;
	bool			payload_crc_set;
};

bool sroce_pkt_zcopy_wanted(const struct sroce_qp *qp, u32 payload);
int sroce_pkt_alloc_frags(struct sroce_qp *qp, struct sroce_pkt *pkt,
			  u8 opcode, u32 payload);
int sroce_pkt_add_page(struct sroce_pkt *pkt, struct page *page,
		       unsigned int off, unsigned int len);

void *sroce_pkt_alloc(struct sroce_qp *qp, struct sroce_pkt *pkt, u8 opcode,
		      u32 payload);
void *sroce_pkt_hdr(struct sroce_pkt *pkt, enum sroce_hdr hdr);
int sroce_pkt_send(struct sroce_qp *qp, const struct sroce_av *av,
		   struct sroce_pkt *pkt, u32 dqpn);
int sroce_pkt_queue(struct sroce_qp *qp, const struct sroce_av *av,
		    struct sroce_pkt *pkt, u32 dqpn, struct sroce_burst *burst);
int sroce_pkt_emit(struct sroce_qp *qp, struct sk_buff *skb);
void sroce_pkt_free(struct sroce_pkt *pkt);
int sroce_ip_out(struct net *net, struct sk_buff *skb);

/**
 * sroce_skb_payload() - payload bytes of a received packet
 * @skb: the packet, validated on reception; data starts at the UDP header
 * @bth: its BTH
 * @info: its opcode
 *
 * For packets held back and handled later, the length computed on
 * reception is computed again.
 *
 * Return: the payload length.
 */
static inline u32 sroce_skb_payload(const struct sk_buff *skb,
				    const struct sroce_bth *bth,
				    const struct sroce_opcode_info *info)
{
	return skb->len - sizeof(struct udphdr) - info->hdr_len -
	       sroce_bth_pad(bth) - SROCE_ICRC_LEN;
}

#endif /* _SROCE_XMIT_H */
