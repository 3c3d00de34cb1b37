/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Transport decisions of the requester, responder and completer that depend
 * on numbers alone: where a PSN falls against the expected one, whether an
 * access lies inside a region, how many packets a message takes and which
 * opcode each carries, how long an RNR NAK asks to wait.
 *
 * Like wire.h these are pure functions of their arguments, with no ib_core
 * state and no locks, so the KUnit suites can check them directly; the
 * driver applies them to its QPs and regions.
 */
#ifndef _SROCE_TRANSPORT_H
#define _SROCE_TRANSPORT_H

#include <linux/types.h>
#include <rdma/ib_user_verbs.h>

#include <sroce/wire.h>

/* User ABI values newer than some supported kernels' headers. */
#define SROCE_WR_FLUSH		14	/* IB_UVERBS_WR_FLUSH */
#define SROCE_WR_ATOMIC_WRITE	15	/* IB_UVERBS_WR_ATOMIC_WRITE */

/**
 * enum sroce_psn_class - where a request PSN falls for an RC responder
 * @SROCE_PSN_EXPECTED: the expected PSN: the packet may change state
 * @SROCE_PSN_DUPLICATE: behind it (by up to 2^23): a request already
 *	carried out, answered again but never executed again
 * @SROCE_PSN_AHEAD: beyond it (by less than 2^23): earlier packets were
 *	lost; a sequence NAK asks for them
 */
enum sroce_psn_class {
	SROCE_PSN_EXPECTED,
	SROCE_PSN_DUPLICATE,
	SROCE_PSN_AHEAD,
};

/**
 * sroce_psn_classify() - place a request PSN against the expected one
 * @psn: the PSN of the request, 24 bits
 * @epsn: the PSN the responder expects next
 *
 * The responder splits the 24-bit space in two halves around @epsn
 * (IBTA 9.7.5.1.1): the half behind it holds duplicates, the half ahead
 * holds PSNs that arrived out of sequence.
 *
 * Return: the class of @psn.
 */
static inline enum sroce_psn_class sroce_psn_classify(u32 psn, u32 epsn)
{
	s32 diff = sroce_psn_diff(psn, epsn);

	if (diff > 0)
		return SROCE_PSN_AHEAD;
	if (diff < 0)
		return SROCE_PSN_DUPLICATE;
	return SROCE_PSN_EXPECTED;
}

/*
 * The RC responder's window: a request further than this from the
 * expected PSN, either way, cannot come from the peer, which never has
 * that many PSNs outstanding.
 */
#define SROCE_PSN_WINDOW	BIT(22)

/**
 * sroce_psn_in_window() - may a request PSN come from the QP's peer at all?
 * @psn: the PSN of the request, 24 bits
 * @epsn: the PSN the responder expects next
 *
 * A PSN outside the window is dropped without an answer and never
 * executed again as a duplicate: otherwise half of the PSN space would
 * reach the duplicate path, two guesses for a spoofed request.
 *
 * Return: true when @psn lies less than %SROCE_PSN_WINDOW before or after
 * @epsn, across the 24-bit wrap.
 */
static inline bool sroce_psn_in_window(u32 psn, u32 epsn)
{
	s32 diff = sroce_psn_diff(psn, epsn);

	return diff > -(s32)SROCE_PSN_WINDOW && diff < (s32)SROCE_PSN_WINDOW;
}

/**
 * sroce_psn_in_range() - is a PSN within an inclusive range of PSNs?
 * @psn: the PSN
 * @first: the first PSN of the range
 * @last: its last PSN, at or after @first
 *
 * Return: true when @psn lies in [@first, @last] in PSN order, across the
 * 24-bit wrap.
 */
static inline bool sroce_psn_in_range(u32 psn, u32 first, u32 last)
{
	return sroce_psn_diff(psn, first) >= 0 &&
	       sroce_psn_diff(psn, last) <= 0;
}

/**
 * sroce_psn_outstanding() - does a response PSN answer a request in flight?
 * @psn: the PSN of the response (ACK, NAK, READ response, atomic ACK)
 * @una: the oldest PSN the requester has not seen acknowledged
 * @next: the PSN after the last one sent
 *
 * Return: true when @psn lies in [@una, @next): the completer acts on such
 * a response and drops any other as stale.
 */
static inline bool sroce_psn_outstanding(u32 psn, u32 una, u32 next)
{
	return sroce_psn_diff(psn, una) >= 0 && sroce_psn_diff(psn, next) < 0;
}

/**
 * sroce_range_within() - is an access inside a region?
 * @start: the region's first address
 * @size: the region's length in bytes
 * @addr: the first address accessed
 * @len: the bytes accessed
 *
 * Written so that no sum can wrap: @addr + @len past 2^64 is refused like
 * any other access beyond the region. An access of 0 bytes needs @addr
 * within [@start, @start + @size].
 *
 * Return: true when [@addr, @addr + @len) lies in [@start, @start + @size).
 */
static inline bool sroce_range_within(u64 start, u64 size, u64 addr, u64 len)
{
	return addr >= start && len <= size && addr - start <= size - len;
}

/**
 * sroce_fr_locate() - which registered buffer holds a byte of a
 *	fast-registration region
 * @iova: the byte's address, checked against the registration the
 *	reader found, which may since have been replaced
 * @mr_iova: the region's first address, as currently registered
 * @fbo: the offset of that first byte in the first buffer
 * @shift: log2 of the buffers' size, as currently registered
 * @nbufs: buffers currently registered
 * @idx: set to the buffer's index
 * @in_buf: set to the byte's offset in that buffer
 *
 * A region may be invalidated and registered again, smaller or at another
 * address, while a reader that checked an access against the old
 * registration still walks it; the byte is then located in the new one
 * and may lie outside it, below its start or past its last buffer.
 *
 * Return: true when @iova falls in one of the @nbufs buffers.
 */
static inline bool sroce_fr_locate(u64 iova, u64 mr_iova, u32 fbo, u32 shift,
				   u32 nbufs, u64 *idx, u64 *in_buf)
{
	u64 off;

	if (iova < mr_iova || shift >= 64)
		return false;
	off = iova - mr_iova + fbo;
	if (off < fbo || off >> shift >= nbufs)
		return false;
	*idx = off >> shift;
	*in_buf = off & ((1ULL << shift) - 1);
	return true;
}

/**
 * sroce_window_addr() - where an access through a memory window lands
 * @base: the window's first byte, as an address of its region
 * @size: the window's length in bytes
 * @zero_based: the window was bound zero-based (IB_ZERO_BASED): the
 *	addresses its peers use run from 0 to @size, not from @base
 * @va: the first address the access names, untrusted
 * @len: the bytes accessed
 * @addr: set to the region's address of byte @va when the access fits
 *
 * The access is checked against the window's own address range, [0,
 * @size) when zero-based and [@base, @base + @size) otherwise, without a
 * sum that could wrap. A zero-based address that fits is at most @size,
 * and the window lies inside its region, so @base + @va cannot wrap
 * either.
 *
 * Return: true when [@va, @va + @len) lies in the window.
 */
static inline bool sroce_window_addr(u64 base, u64 size, bool zero_based,
				     u64 va, u64 len, u64 *addr)
{
	if (!sroce_range_within(zero_based ? 0 : base, size, va, len))
		return false;
	*addr = zero_based ? base + va : va;
	return true;
}

/**
 * sroce_access_granted() - are all the rights an access needs granted?
 * @granted: the IB_ACCESS_* rights of the region or window
 * @needed: the IB_ACCESS_* rights the access needs; 0 for a local read
 *
 * Return: true when every bit of @needed is in @granted.
 */
static inline bool sroce_access_granted(int granted, int needed)
{
	return (granted & needed) == needed;
}

/**
 * sroce_msg_npkts() - packets a SEND, WRITE or READ of a length takes
 * @length: the message length in bytes
 * @mtu: the path MTU in bytes, not 0
 *
 * Every packet but the last carries exactly @mtu bytes; a message of 0
 * bytes still takes one packet.
 *
 * Return: the number of packets, and so of PSNs, in [1, @length / @mtu + 1].
 */
static inline u32 sroce_msg_npkts(u32 length, u32 mtu)
{
	return length <= mtu ? 1 : length / mtu + !!(length % mtu);
}

/**
 * sroce_send_opcode() - the opcode of one packet of a SEND or WRITE
 * @transport: SROCE_OP_RC, SROCE_OP_UC or SROCE_OP_UD, for the QP's type
 * @wr_opcode: the IB_UVERBS_WR_* opcode of the work request
 * @first: the packet carries the first byte of the message
 * @last: the packet carries its last byte
 *
 * A message of one packet is an ONLY; a longer one is a FIRST, MIDDLEs
 * and a LAST, and only its ONLY or LAST packet carries the immediate data
 * or the key to invalidate. A UD QP sends one packet per message; an
 * ATOMIC WRITE is a single packet whatever the transport.
 *
 * Return: the BTH opcode.
 */
static inline u8 sroce_send_opcode(u8 transport, u32 wr_opcode, bool first,
				   bool last)
{
	u8 t = transport == SROCE_OP_UC ? SROCE_OP_UC : SROCE_OP_RC;
	bool ud = transport == SROCE_OP_UD;

	switch (wr_opcode) {
	case SROCE_WR_ATOMIC_WRITE:
		return SROCE_OP_ATOMIC_WRITE;
	case IB_UVERBS_WR_RDMA_WRITE:
		if (first && last)
			return t | SROCE_OP_WRITE_ONLY;
		return t | (first ? SROCE_OP_WRITE_FIRST :
			    last ? SROCE_OP_WRITE_LAST : SROCE_OP_WRITE_MIDDLE);
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
		if (first && last)
			return t | SROCE_OP_WRITE_ONLY_IMM;
		return t | (first ? SROCE_OP_WRITE_FIRST :
			    last ? SROCE_OP_WRITE_LAST_IMM :
				   SROCE_OP_WRITE_MIDDLE);
	case IB_UVERBS_WR_SEND_WITH_IMM:
		if (ud)
			return SROCE_OP_UD | SROCE_OP_SEND_ONLY_IMM;
		if (first && last)
			return t | SROCE_OP_SEND_ONLY_IMM;
		return t | (first ? SROCE_OP_SEND_FIRST :
			    last ? SROCE_OP_SEND_LAST_IMM : SROCE_OP_SEND_MIDDLE);
	case IB_UVERBS_WR_SEND_WITH_INV:
		if (first && last)
			return t | SROCE_OP_SEND_ONLY_INV;
		return t | (first ? SROCE_OP_SEND_FIRST :
			    last ? SROCE_OP_SEND_LAST_INV : SROCE_OP_SEND_MIDDLE);
	default:
		if (ud)
			return SROCE_OP_UD | SROCE_OP_SEND_ONLY;
		if (first && last)
			return t | SROCE_OP_SEND_ONLY;
		return t | (first ? SROCE_OP_SEND_FIRST :
			    last ? SROCE_OP_SEND_LAST : SROCE_OP_SEND_MIDDLE);
	}
}

/**
 * sroce_rnr_timer_us() - the wait an RNR NAK's timer code asks for
 * @code: the 5-bit RNR timer code of the AETH; higher bits are ignored
 *
 * IBTA Table 45: code 0 is the longest wait, 655.36 ms; code 1 is 10 us,
 * and from code 2 on the waits run 20, 30, 40, 60, 80, 120 us and so on,
 * doubling every two codes up to 491.52 ms for code 31.
 *
 * Return: the wait in microseconds.
 */
static inline u32 sroce_rnr_timer_us(u8 code)
{
	code &= SROCE_AETH_VALUE_MASK;
	if (code == 0)
		return 655360;
	if (code == 1)
		return 10;
	return ((code & 1) ? 30 : 20) << ((code - 2) / 2);
}

#endif /* _SROCE_TRANSPORT_H */
