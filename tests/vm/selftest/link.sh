#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: twovm
# timeout: 90
# Harness self-test: the two-VM link and the rendezvous helpers.
# shellcheck source=../../scenarios/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../scenarios/lib.sh"
plan 7

expect_eq "eth0 has this role's MAC" "$([ "$ROLE" = a ] && echo "$MAC_A" || echo "$MAC_B")" "$(cat /sys/class/net/eth0/address)"
check "barrier up" barrier up 60
check "ping peer over IPv4" ping_ok "" "$PEER_IP4" 3
check "ping peer over IPv6" ping_ok "" "$PEER_IP6" 3
token=$ROLE-$RANDOM$RANDOM
put "token.$ROLE" "$token"
expect_match "value from peer" "^$PEER-[0-9]+$" "$(get "token.$PEER" 60)"
check "barrier values" barrier values 60
# Pass the value back: each side checks the peer saw its own token.
put "echo.$ROLE" "$(get "token.$PEER" 10)"
expect_eq "peer echoed my value" "$token" "$(get "echo.$PEER" 60)"
