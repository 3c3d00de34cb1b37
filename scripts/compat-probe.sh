#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Probe a kernel source tree for the API features sroce's compat.h adapts to
# and print the matching -D flags. Probes look at what a header declares,
# never at version numbers, so backports are handled for free.
#
# Usage: compat-probe.sh SRCTREE
src=${1:?usage: compat-probe.sh SRCTREE}
verbs=$src/include/rdma/ib_verbs.h

# create_cq takes a uverbs_attr_bundle instead of udata (since 6.11).
if awk '/\(\*create_cq\)/ { getline nxt; print $0 nxt; exit }' "$verbs" 2>/dev/null |
		grep -q 'uverbs_attr_bundle'; then
	printf ' -DSROCE_HAVE_CREATE_CQ_ATTRS'
fi

# The IBTA 1.5 atomic write capability bit (since 6.2).
if grep -q 'IB_DEVICE_ATOMIC_WRITE' "$verbs" 2>/dev/null; then
	printf ' -DSROCE_HAVE_ATOMIC_WRITE_CAP'
fi

# The right to FLUSH a region (since 6.2).
if grep -q 'IB_ACCESS_FLUSH_GLOBAL' "$verbs" 2>/dev/null; then
	printf ' -DSROCE_HAVE_FLUSH_ACCESS'
fi

# __assign_str() takes the field only, its source being __string()'s
# (since 6.10).
if grep -q '#define __assign_str(dst)' \
		"$src/include/trace/stages/stage6_event_callback.h" 2>/dev/null; then
	printf ' -DSROCE_HAVE_ASSIGN_STR_ONE_ARG'
fi

# <asm/unaligned.h> became <linux/unaligned.h> (since 6.12).
if [ -f "$src/include/linux/unaligned.h" ]; then
	printf ' -DSROCE_HAVE_LINUX_UNALIGNED_H'
fi

echo
