#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# topology: netns
# kernels: 6.1
# full-kernels: 6.12
# requires: sroce
# timeout: 180
#
# The port follows its netdev: administratively down and up, and carrier
# loss when the veth peer goes down. Applications see the changes as
# asynchronous events, and no query shows a state before its event.
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
plan 21

dev=sroce0
check "modprobe sroce" modprobe sroce || need_module sroce
check "rdma link add $dev on v1 (h1)" h1 rdma link add $dev type sroce netdev v1 ||
	bail "cannot create $dev"
check_wait "port ACTIVE" 20 port_is $dev PORT_ACTIVE

events=/tmp/port_state.events
stdbuf -oL ibv_asyncwatch -d $dev >$events 2>&1 &
watcher=$!
sleep 1
# events_seen KIND N: the watcher has printed at least N events of KIND.
# A state a query shows must have been announced: the event follows the
# state within the time the watcher takes to print it, whatever linkwatch
# does.
events_seen() { [ "$(grep -c "IBV_EVENT_$1 " $events)" -ge "$2" ]; }

check "ip link set v1 down" h1 ip link set v1 down
check_wait "port DOWN after v1 down" 20 port_is $dev PORT_DOWN
check_wait "admin down announced by IBV_EVENT_PORT_ERR" 10 events_seen PORT_ERR 1
expect_match "rdma link show: state DOWN" "state DOWN" "$(rdma link show $dev/1 2>&1)"
check "ip link set v1 up" h1 ip link set v1 up
check_wait "port ACTIVE after v1 up" 20 port_is $dev PORT_ACTIVE
check_wait "admin up announced by IBV_EVENT_PORT_ACTIVE" 10 events_seen PORT_ACTIVE 1
expect_match "rdma link show: state ACTIVE" "state ACTIVE" "$(rdma link show $dev/1 2>&1)"

check "peer v2 down (h2)" h2 ip link set v2 down
check_wait "v1 loses carrier" 10 eval '! has_carrier h1 v1 && ip -n h1 -o link show v1 | grep -q NO-CARRIER'
check_wait "port DOWN on carrier loss" 20 port_is $dev PORT_DOWN
check_wait "carrier loss announced by IBV_EVENT_PORT_ERR" 10 events_seen PORT_ERR 2
check "peer v2 up" h2 ip link set v2 up
check_wait "v1 has carrier again" 10 has_carrier h1 v1
check_wait "port ACTIVE when carrier returns" 20 port_is $dev PORT_ACTIVE
check_wait "carrier return announced by IBV_EVENT_PORT_ACTIVE" 10 events_seen PORT_ACTIVE 2

sleep 1
kill $watcher 2>/dev/null
wait $watcher 2>/dev/null
log "async events:"
cat $events >&2
expect_eq "IBV_EVENT_PORT_ERR delivered for each loss (2)" 2 "$(grep -c 'IBV_EVENT_PORT_ERR' $events)"
expect_eq "IBV_EVENT_PORT_ACTIVE delivered for each return (2)" 2 "$(grep -c 'IBV_EVENT_PORT_ACTIVE' $events)"
