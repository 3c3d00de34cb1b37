WARNING:
BUG:
kernel BUG at
Oops
KASAN
UBSAN
general protection fault
Kernel panic
possible (circular|recursive) locking
inconsistent lock state
possible irq lock inversion
lock held when returning
bad unlock balance
held lock freed
DEBUG_LOCKS_WARN_ON
INFO: lockdep is turned off
suspicious RCU usage
refcount_t
kmemleak: [0-9]+ new suspected
unreferenced object
ODEBUG:
list_(add|del) corruption
soft lockup
hard LOCKUP
blocked for more than [0-9]+ seconds
rcu: INFO: .* detected stalls
self-detected stall
Call Trace:
unregister_netdevice: waiting for
