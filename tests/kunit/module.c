// SPDX-License-Identifier: GPL-2.0
/*
 * sroce_kunit: KUnit suites for the sroce wire layer (include/sroce/wire.h).
 * Each *_kunit.c file registers one suite; loading the module runs them all
 * and leaves KTAP results under /sys/kernel/debug/kunit/<suite>/results.
 */

#include <linux/module.h>

MODULE_DESCRIPTION("KUnit suites for the sroce RoCEv2 wire layer");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
