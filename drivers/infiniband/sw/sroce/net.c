// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The RoCEv2 UDP socket: one per network namespace that has sroce devices,
 * bound to port 4791 on all addresses of both IP versions.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mutex.h>
#include <net/netns/generic.h>
#include <net/net_namespace.h>
#include <net/udp_tunnel.h>

#include <sroce/wire.h>
#include "sroce.h"

/**
 * struct sroce_net - sroce's state in one network namespace
 * @lock: serializes socket creation and release
 * @sock: the UDP tunnel socket, NULL while no device uses the namespace
 * @users: devices in the namespace; under @lock
 */
struct sroce_net {
	struct mutex	lock;	/* protects sock and users */
	struct socket	*sock;
	unsigned int	users;
};

static unsigned int sroce_net_id __read_mostly;

static struct sroce_net *sroce_net(struct net *net)
{
	return net_generic(net, sroce_net_id);
}

static int sroce_udp_recv(struct sock *sk, struct sk_buff *skb)
{
	/* The transport is not wired up yet: nothing is accepted. */
	kfree_skb(skb);
	return 0;
}

static int sroce_sock_create(struct net *net, struct socket **sockp)
{
	struct udp_tunnel_sock_cfg tunnel_cfg = {
		.encap_type = 1,
		.encap_rcv = sroce_udp_recv,
	};
	struct udp_port_cfg port_cfg = {
		.family = AF_INET6,
		.local_udp_port = htons(SROCE_UDP_PORT),
		/* One socket for both IP versions. */
		.ipv6_v6only = 0,
	};
	struct socket *sock;
	int err;

	err = udp_sock_create(net, &port_cfg, &sock);
	if (err == -EAFNOSUPPORT || err == -EPFNOSUPPORT) {
		/* IPv6 is disabled: carry RoCEv2 over IPv4 only. */
		memset(&port_cfg, 0, sizeof(port_cfg));
		port_cfg.family = AF_INET;
		port_cfg.local_udp_port = htons(SROCE_UDP_PORT);
		err = udp_sock_create(net, &port_cfg, &sock);
	}
	if (err) {
		pr_warn_ratelimited("cannot bind UDP port %d: %d%s\n",
				    SROCE_UDP_PORT, err,
				    err == -EADDRINUSE ?
				    " (another RoCEv2 driver holds it?)" : "");
		return err;
	}

	setup_udp_tunnel_sock(net, sock, &tunnel_cfg);
	*sockp = sock;
	return 0;
}

/**
 * sroce_net_get() - note one more device in a namespace
 * @net: the namespace
 *
 * Creates the namespace's RoCEv2 socket for its first device.
 *
 * Context: process context.
 * Return: 0 or a negative errno.
 */
int sroce_net_get(struct net *net)
{
	struct sroce_net *sn = sroce_net(net);
	int err = 0;

	mutex_lock(&sn->lock);
	if (!sn->users)
		err = sroce_sock_create(net, &sn->sock);
	if (!err)
		sn->users++;
	mutex_unlock(&sn->lock);
	return err;
}

/**
 * sroce_net_put() - note one device less in a namespace
 * @net: the namespace
 *
 * Releases the namespace's RoCEv2 socket with its last device.
 *
 * Context: process context.
 */
void sroce_net_put(struct net *net)
{
	struct sroce_net *sn = sroce_net(net);

	mutex_lock(&sn->lock);
	if (!WARN_ON_ONCE(!sn->users) && !--sn->users) {
		udp_tunnel_sock_release(sn->sock);
		sn->sock = NULL;
	}
	mutex_unlock(&sn->lock);
}

static int __net_init sroce_net_ns_init(struct net *net)
{
	struct sroce_net *sn = sroce_net(net);

	mutex_init(&sn->lock);
	return 0;
}

static void __net_exit sroce_net_ns_exit(struct net *net)
{
	struct sroce_net *sn = sroce_net(net);

	/*
	 * The sockets hold no reference on the namespace, so the devices
	 * using it must be gone before it is.
	 */
	sroce_dev_remove_all(net);
	WARN_ON_ONCE(sn->users || sn->sock);
	mutex_destroy(&sn->lock);
}

static struct pernet_operations sroce_net_ops = {
	.init = sroce_net_ns_init,
	.exit = sroce_net_ns_exit,
	.id = &sroce_net_id,
	.size = sizeof(struct sroce_net),
};

int sroce_net_init(void)
{
	return register_pernet_subsys(&sroce_net_ops);
}

void sroce_net_exit(void)
{
	unregister_pernet_subsys(&sroce_net_ops);
}
