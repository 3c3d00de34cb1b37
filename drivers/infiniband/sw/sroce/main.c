// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Module entry points, the "rdma link" type and the guard against rdma_rxe.
 *
 * sroce speaks the user ABI of the kernel's soft-RoCE driver, so both
 * report RDMA_DRIVER_RXE. rdma_rxe looks devices up by that driver id and
 * would take an sroce device for one of its own; and both want UDP port
 * 4791. The two must never be loaded together: whichever comes second is
 * refused.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kobject.h>
#include <linux/module.h>
#include <rdma/rdma_netlink.h>

#include <sroce/wire.h>
#include "ack.h"
#include "finj.h"
#include "qp.h"
#include "sroce.h"

#define SROCE_RIVAL_MODULE	"rdma_rxe"

static int sroce_newlink(const char *ibdev_name, struct net_device *ndev)
{
	return sroce_dev_add(ibdev_name, ndev);
}

static struct rdma_link_ops sroce_link_ops = {
	.type = SROCE_LINK_TYPE,
	.newlink = sroce_newlink,
};

/* Refuse rdma_rxe while sroce is loaded. */
static int sroce_module_event(struct notifier_block *nb, unsigned long event,
			      void *data)
{
	struct module *mod = data;

	if (event != MODULE_STATE_COMING ||
	    strcmp(mod->name, SROCE_RIVAL_MODULE))
		return NOTIFY_DONE;

	pr_err("refusing to load %s: sroce is loaded and both drive RDMA_DRIVER_RXE devices; unload sroce first\n",
	       SROCE_RIVAL_MODULE);
	return notifier_from_errno(-EBUSY);
}

static struct notifier_block sroce_module_notifier = {
	.notifier_call = sroce_module_event,
};

/*
 * Every module has a kobject in /sys/module, in the kset our own module's
 * kobject belongs to; finding rdma_rxe's there means it is loaded.
 */
static bool sroce_rival_loaded(void)
{
	struct kobject *kobj;

	kobj = kset_find_obj(THIS_MODULE->mkobj.kobj.kset, SROCE_RIVAL_MODULE);
	if (!kobj)
		return false;
	kobject_put(kobj);
	return true;
}

static int __init sroce_init(void)
{
	int err;

	/* Registered first, so an rdma_rxe loading concurrently is seen. */
	err = register_module_notifier(&sroce_module_notifier);
	if (err)
		return err;

	if (sroce_rival_loaded()) {
		pr_err("refusing to load: %s is loaded and both drive RDMA_DRIVER_RXE devices; unload %s first\n",
		       SROCE_RIVAL_MODULE, SROCE_RIVAL_MODULE);
		err = -EBUSY;
		goto err_module_notifier;
	}

	sroce_wire_init();
	sroce_icrc_init();
	sroce_ack_init();

	err = sroce_qp_wq_init();
	if (err)
		goto err_icrc;

	err = sroce_dev_init();
	if (err)
		goto err_qp_wq;

	err = sroce_net_init();
	if (err)
		goto err_dev;

	sroce_finj_init();
	rdma_link_register(&sroce_link_ops);
	pr_info("loaded\n");
	return 0;

err_dev:
	sroce_dev_exit();
err_qp_wq:
	sroce_qp_wq_exit();
err_icrc:
	sroce_ack_exit();
	sroce_icrc_exit();
err_module_notifier:
	unregister_module_notifier(&sroce_module_notifier);
	return err;
}

static void __exit sroce_exit(void)
{
	/*
	 * No new devices; leaving each namespace removes its devices; then
	 * no more netdevs to watch.
	 */
	rdma_link_unregister(&sroce_link_ops);
	sroce_net_exit();
	sroce_dev_exit();
	sroce_finj_exit();
	sroce_qp_wq_exit();
	sroce_ack_exit();
	sroce_icrc_exit();
	unregister_module_notifier(&sroce_module_notifier);
	pr_info("unloaded\n");
}

module_init(sroce_init);
module_exit(sroce_exit);

MODULE_AUTHOR("The sroce developers");
MODULE_DESCRIPTION("Software RoCEv2 RDMA device over any Ethernet netdev");
MODULE_LICENSE("Dual BSD/GPL");
MODULE_VERSION(SROCE_VERSION);
MODULE_ALIAS_RDMA_LINK(SROCE_LINK_TYPE);
