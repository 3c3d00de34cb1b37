// SPDX-License-Identifier: GPL-2.0
/*
 * sroce-ringfuzz: command line, TAP output.
 *
 *   sroce-ringfuzz MODE -d DEV -g GIDX [-G GIDX6] [-n ITERATIONS] [-s SEED]
 *                  [--hold PATH]
 *
 * -G names an IPv6 GID of the device: churn then uses IPv6 groups too.
 *
 * MODE is opcodes, ring, churn or asyncflood (see README.md). Test points
 * are TAP on stdout; the last line is "N passed, N failed". Exit status:
 * 0 all passed, 1 a failure, 2 a setup or usage error.
 */
#include <getopt.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ringfuzz.h"

unsigned int rf_slow = 1;
unsigned int rf_iters;
uint64_t rf_seed;
const char *rf_hold;
int rf_gidx6 = -1;

static pthread_mutex_t tap_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned int tap_n, tap_fail;

void rf_ok(bool pass, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&tap_lock);
	tap_n++;
	if (!pass)
		tap_fail++;
	printf("%sok %u - ", pass ? "" : "not ", tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	pthread_mutex_unlock(&tap_lock);
}

void rf_diag(const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&tap_lock);
	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	pthread_mutex_unlock(&tap_lock);
}

unsigned int rf_failed(void)
{
	return tap_fail;
}

int rf_done(void)
{
	pthread_mutex_lock(&tap_lock);
	printf("1..%u\n%u passed, %u failed\n", tap_n, tap_n - tap_fail,
	       tap_fail);
	fflush(stdout);
	pthread_mutex_unlock(&tap_lock);
	return tap_fail ? 1 : 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: sroce-ringfuzz opcodes|ring|churn|asyncflood -d DEV -g GIDX [-G GIDX6]\n"
		"                      [-n ITERATIONS] [-s SEED] [--hold PATH]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "hold", required_argument, NULL, 'H' },
		{ NULL, 0, NULL, 0 }
	};
	const char *mode, *dev = NULL, *slow;
	struct rf_dev d;
	int gidx = -1, c, ret;

	if (argc < 2)
		usage();
	mode = argv[1];
	optind = 2;
	while ((c = getopt_long(argc, argv, "d:g:G:n:s:", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			dev = optarg;
			break;
		case 'g':
			gidx = atoi(optarg);
			break;
		case 'G':
			rf_gidx6 = atoi(optarg);
			break;
		case 'n':
			rf_iters = strtoul(optarg, NULL, 0);
			break;
		case 's':
			rf_seed = strtoull(optarg, NULL, 0);
			break;
		case 'H':
			rf_hold = optarg;
			break;
		default:
			usage();
		}
	}
	if (!dev || gidx < 0)
		usage();
	slow = getenv("SROCE_SLOW");
	if (slow && atoi(slow) > 0)
		rf_slow = atoi(slow);
	if (!rf_seed)
		rf_seed = (uint64_t)time(NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("# sroce-ringfuzz %s on %s gid %d, seed %llu\n", mode, dev,
	       gidx, (unsigned long long)rf_seed);

	/* ring forks a well-behaved peer before it opens anything. */
	if (!strcmp(mode, "ring"))
		return rf_mode_ring(dev, gidx);

	if (rf_dev_open(&d, dev, gidx))
		return 2;
	if (!strcmp(mode, "opcodes"))
		ret = rf_mode_opcodes(&d);
	else if (!strcmp(mode, "churn"))
		ret = rf_mode_churn(&d);
	else if (!strcmp(mode, "asyncflood"))
		ret = rf_mode_asyncflood(&d);
	else
		usage();
	rf_dev_close(&d);
	if (ret == 2)
		return 2;
	return rf_done();
}
